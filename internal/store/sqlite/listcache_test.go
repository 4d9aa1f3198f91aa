package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/storetest"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// A whole listing asked for again while no task changed is the one kept;
// one asked for after a task is created, changed, or written and rolled
// back is read again and shows the change; a page (a limit) is never kept.
func TestListingKeptUntilATaskChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.Populate(t, s, 20)
	list := func(opts store.ListOptions) store.SummaryPage {
		t.Helper()
		p, err := s.ListSummariesJSON(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := store.ListOptions{}
	first := list(all)
	if again := list(all); &again.JSON[0] != &first.JSON[0] || again.N != 20 {
		t.Fatalf("the same listing with no change between was read again (%d tasks)", again.N)
	}
	paused := store.ListOptions{Statuses: []task.Status{task.Paused}}
	if p := list(paused); p.N != 0 {
		t.Fatalf("%d paused tasks, want none", p.N)
	}

	// An event alone (its write waited for) changes no task: the listing
	// is kept.
	if _, err := s.AppendEvents(ctx, event.New(at9(), "t-000001", event.Text{Turn: 1, Text: "looking"})); err != nil {
		t.Fatal(err)
	}
	if again := list(all); &again.JSON[0] != &first.JSON[0] {
		t.Fatal("an event alone made the listing be read again")
	}

	_, _, err = s.UpdateTask(ctx, "t-000003", func(tk *task.Task) ([]event.Event, error) {
		tk.Status, tk.CloseReason = task.Paused, "held for the listing test"
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after := list(all)
	if &after.JSON[0] == &first.JSON[0] || !strings.Contains(string(after.JSON), "held for the listing test") {
		t.Fatal("a listing after a task changed does not show the change")
	}
	if p := list(paused); p.N != 1 {
		t.Fatalf("%d paused tasks after the change, want 1", p.N)
	}

	tk, err := task.New("t-new", task.Spec{Description: "a task made after the listing", Repo: "/src/repo"}, at9())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if p := list(all); p.N != 21 || !strings.Contains(string(p.JSON), "a task made after the listing") {
		t.Fatalf("a listing after a task was created has %d tasks", p.N)
	}

	// A mutation that fails is rolled back: listed again, nothing changed.
	before := list(all)
	_, _, err = s.UpdateTask(ctx, "t-000004", func(tk *task.Task) ([]event.Event, error) {
		tk.CloseReason = "never stored"
		return nil, store.ErrConflict
	})
	if err == nil {
		t.Fatal("the failing mutation succeeded")
	}
	if p := list(all); string(p.JSON) != string(before.JSON) {
		t.Fatal("a rolled-back change shows in the listing")
	}

	page := store.ListOptions{Limit: 5}
	if a, b := list(page), list(page); &a.JSON[0] == &b.JSON[0] {
		t.Fatal("a page was kept")
	}
}

func at9() time.Time {
	return time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
}

func TestStatementWritesTasks(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]bool{
		insertTaskSQL:                    true,
		updateTaskSQL:                    true,
		`DELETE FROM tasks WHERE id = ?`: true,
		`insert or replace into tasks (id) values (?)`:              true,
		`REPLACE INTO tasks(id) VALUES (?)`:                         true,
		"UPDATE\n\ttasks SET status = ?":                            true,
		`INSERT INTO events (id, time, kind, task_id, data) VALUES`: false,
		`UPDATE task_deps SET x = 1`:                                false,
		`DELETE FROM conversation_entries WHERE task_id = ?`:        false,
		`SELECT data FROM tasks WHERE id = ?`:                       false,
		`SAVEPOINT op`:                                              false,
		`INSERT INTO costs (task_id, at) VALUES (?, ?)`:             false,
		`UPDATE injections SET delivered_at = ? WHERE task_id = ?`:  false,
		`INSERT OR IGNORE INTO tasks_archive (id) VALUES (?)`:       false,
	} {
		if got := statementWritesTasks(q); got != want {
			t.Errorf("statementWritesTasks(%q) = %v, want %v", q, got, want)
		}
	}
}
