package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// What this implementation adds to the suite's git tests: the schema's
// backstop and the rules UpdateMerge keeps beyond the contract.

var gitT0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

func openGitStore(t *testing.T, publish func(...event.Event)) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "neuraphage.db"), Options{Publish: publish})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func createGitTask(t *testing.T, s *Store, id task.ID) {
	t.Helper()
	tk, err := task.New(id, task.Spec{Description: "d"}, gitT0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(context.Background(), tk); err != nil {
		t.Fatal(err)
	}
}

func setMergeState(st store.MergeState) store.MergeMutation {
	return func(m *store.MergeEntry) ([]event.Event, error) {
		m.State = st
		return []event.Event{event.New(gitT0, m.TaskID, event.MergeWaiting{Entry: m.ID, Reason: string(st)})}, nil
	}
}

// TestMigrateFrom2 upgrades a database at schema 2: its tasks get worktree
// records and merge entries.
func TestMigrateFrom2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neuraphage.db")
	db, err := openDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := applyMigration(ctx, db, i+1, migrations[i]); err != nil {
			t.Fatal(err)
		}
	}
	tk, err := task.New("t-aaaaa", task.Spec{Description: "made at schema 2"}, gitT0)
	if err != nil {
		t.Fatal(err)
	}
	args, err := taskArgs(tk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO tasks (id, status, priority, parent_id, created_at, updated_at, data)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, args...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("opening a schema 2 database: %v", err)
	}
	defer s.Close()
	var version int
	if err := s.rdb.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil || version != SchemaVersion() {
		t.Fatalf("schema version after Open = %d, %v; want %d", version, err, SchemaVersion())
	}
	if got, err := s.GetTask(ctx, tk.ID); err != nil {
		t.Fatal(err)
	} else if diff := cmp.Diff(tk, got); diff != "" {
		t.Errorf("task after migration (-want +got):\n%s", diff)
	}
	wt := store.Worktree{TaskID: tk.ID, Repo: "/r", Branch: "neuraphage/t-aaaaa", Base: "main", BaseCommit: "abc",
		Path: "/r/wt", State: store.WorktreeActive, CreatedAt: gitT0, UpdatedAt: gitT0}
	if _, err := s.PutWorktree(ctx, wt); err != nil {
		t.Fatalf("PutWorktree on a migrated database: %v", err)
	}
	if got, err := s.GetWorktree(ctx, tk.ID); err != nil || !cmp.Equal(wt, got) {
		t.Errorf("GetWorktree = %+v, %v; want %+v", got, err, wt)
	}
	m, _, err := s.EnqueueMerge(ctx, store.MergeEntry{TaskID: tk.ID, Repo: "/r", Branch: wt.Branch, Target: "main"}, nil)
	if err != nil || m.ID != 1 {
		t.Fatalf("EnqueueMerge on a migrated database = %+v, %v; want entry 1", m, err)
	}
}

// TestOneOpenMergeIndex checks the schema's backstop: even a write that
// skips the store's check cannot give a task two open entries.
func TestOneOpenMergeIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := openDB(filepath.Join(t.TempDir(), "neuraphage.db"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO tasks (id, status, priority, created_at, updated_at, data)
		VALUES ('t-aaaaa', 'queued', 2, 0, 0, '{}')`); err != nil {
		t.Fatal(err)
	}
	insert := func(state store.MergeState) error {
		_, err := db.ExecContext(ctx, `INSERT INTO merges (task_id, repo, branch, target, state, enqueued_at, updated_at)
			VALUES ('t-aaaaa', '/r', 'b', 'main', ?, 0, 0)`, string(state))
		return err
	}
	for _, st := range []store.MergeState{store.MergeLanded, store.MergeParked, store.MergeQueued, store.MergeCancelled} {
		if err := insert(st); err != nil {
			t.Fatalf("inserting a %s entry: %v", st, err)
		}
	}
	for _, st := range []store.MergeState{store.MergeQueued, store.MergeRunning, store.MergeWaiting} {
		if err := insert(st); err == nil || !strings.Contains(err.Error(), "UNIQUE") {
			t.Errorf("a second open entry (%s) was accepted: %v", st, err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO merges (task_id, repo, branch, target, state, enqueued_at, updated_at)
		VALUES ('t-zzzzz', '/r', 'b', 'main', 'landed', 0, 0)`); err == nil {
		t.Error("an entry of an unknown task was accepted")
	}

	// The queries' notion of open is store.MergeState.Open.
	for _, st := range []store.MergeState{store.MergeQueued, store.MergeRunning, store.MergeWaiting, store.MergeLanded,
		store.MergePR, store.MergeSentBack, store.MergeParked, store.MergeCancelled, "bogus"} {
		var open bool
		if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM (SELECT ? AS state) WHERE `+openMerge+`)`,
			string(st)).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open != st.Open() {
			t.Errorf("openMerge says %s is open: %v; MergeState.Open: %v", st, open, st.Open())
		}
	}
}

// TestUpdateMergeKeepsOneOpen: taking up a closed entry again while its task
// has another open one is refused like a second EnqueueMerge.
func TestUpdateMergeKeepsOneOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openGitStore(t, nil)
	createGitTask(t, s, "t-aaaaa")
	entry := store.MergeEntry{TaskID: "t-aaaaa", Repo: "/r", Branch: "b", Target: "main"}
	first, _, err := s.EnqueueMerge(ctx, entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	parked, _, err := s.UpdateMerge(ctx, first.ID, setMergeState(store.MergeParked))
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := s.EnqueueMerge(ctx, entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.UpdateMerge(ctx, first.ID, setMergeState(store.MergeQueued))
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("reopening entry %d beside open entry %d: error = %v, want ErrExists", first.ID, second.ID, err)
	}
	if got, err := s.GetMerge(ctx, first.ID); err != nil || !cmp.Equal(parked, got) {
		t.Errorf("refused reopening changed the entry: %+v, %v", got, err)
	}
	if last, err := s.LastEventID(ctx); err != nil || last != before {
		t.Errorf("refused reopening logged events: last id %d, was %d (%v)", last, before, err)
	}
	// An open entry may move between open states.
	if _, _, err := s.UpdateMerge(ctx, second.ID, setMergeState(store.MergeRunning)); err != nil {
		t.Errorf("queued → running: %v", err)
	}
	if _, _, err := s.UpdateMerge(ctx, second.ID, setMergeState(store.MergeCancelled)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.UpdateMerge(ctx, first.ID, setMergeState(store.MergeQueued)); err != nil {
		t.Errorf("reopening entry %d once %d is closed: %v", first.ID, second.ID, err)
	}
}

// TestUpdateMergeIdentity: a mutation may not move an entry to another ID or
// task.
func TestUpdateMergeIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var (
		mu        sync.Mutex
		published int
	)
	s := openGitStore(t, func(evs ...event.Event) {
		mu.Lock()
		published += len(evs)
		mu.Unlock()
	})
	createGitTask(t, s, "t-aaaaa")
	createGitTask(t, s, "t-bbbbb")
	m, _, err := s.EnqueueMerge(ctx, store.MergeEntry{TaskID: "t-aaaaa", Repo: "/r", Branch: "b", Target: "main"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*store.MergeEntry){
		"id":   func(e *store.MergeEntry) { e.ID++ },
		"task": func(e *store.MergeEntry) { e.TaskID = "t-bbbbb" },
	} {
		_, _, err := s.UpdateMerge(ctx, m.ID, func(e *store.MergeEntry) ([]event.Event, error) {
			change(e)
			e.Detail = "moved"
			return []event.Event{event.New(gitT0, e.TaskID, event.MergeWaiting{Entry: e.ID})}, nil
		})
		if err == nil {
			t.Errorf("a mutation changing the %s was accepted", name)
		}
	}
	if got, err := s.GetMerge(ctx, m.ID); err != nil || !cmp.Equal(m, got) {
		t.Errorf("entry after refused mutations = %+v, %v; want %+v", got, err, m)
	}
	mu.Lock()
	defer mu.Unlock()
	if published != 0 {
		t.Errorf("refused mutations published %d events", published)
	}
}

// TestEnqueueMergeGivenID: an ID the caller sets is kept, and a taken one is
// ErrExists.
func TestEnqueueMergeGivenID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openGitStore(t, nil)
	createGitTask(t, s, "t-aaaaa")
	createGitTask(t, s, "t-bbbbb")
	m, _, err := s.EnqueueMerge(ctx, store.MergeEntry{ID: 7, TaskID: "t-aaaaa", Repo: "/r", Branch: "b", Target: "main",
		State: store.MergeLanded}, nil)
	if err != nil || m.ID != 7 {
		t.Fatalf("EnqueueMerge(ID 7) = %+v, %v", m, err)
	}
	if _, _, err := s.EnqueueMerge(ctx, store.MergeEntry{ID: 7, TaskID: "t-bbbbb", Repo: "/r", Branch: "b", Target: "main"}, nil); !errors.Is(err, store.ErrExists) {
		t.Errorf("EnqueueMerge(taken ID 7) error = %v, want ErrExists", err)
	}
	next, _, err := s.EnqueueMerge(ctx, store.MergeEntry{TaskID: "t-bbbbb", Repo: "/r", Branch: "b", Target: "main"}, nil)
	if err != nil || next.ID != 8 {
		t.Errorf("EnqueueMerge after ID 7 = %+v, %v; want ID 8", next, err)
	}
}
