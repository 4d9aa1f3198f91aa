package sqlite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// keptCounts reads the writer's kept-task counters on the writer.
func keptCounts(t *testing.T, s *Store) (hits, misses int) {
	t.Helper()
	if _, err := s.do(context.Background(), func(*wtx) error {
		hits, misses = s.keptHits, s.keptMisses
		return nil
	}, false); err != nil {
		t.Fatal(err)
	}
	return hits, misses
}

// A run's checkpoints reuse the task the writer last wrote, and every other
// change of the stored task (through the store, or its row rewritten behind
// the writer's back) is seen: the task a checkpoint returns is always the
// stored one.
func TestCheckpointKeepsTheTaskItWrote(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	tk, err := task.New("t-aaaaa", task.Spec{Description: "kept", Tags: []string{"a"}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	n := 0
	turn := func() task.Task {
		t.Helper()
		got, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: tk.ID, From: n,
			Entries: []store.Entry{{Turn: n, Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: "x"}}}}},
			Mutate: func(t *task.Task) ([]event.Event, error) {
				t.Usage.Iterations++
				t.UpdatedAt = time.Now() // the executor's clock: local, monotonic
				t.Manifest = &task.Manifest{Tools: []string{"glob"}, Source: "policy"}
				return nil, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		n++
		stored, err := s.GetTask(ctx, tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(stored)
		if string(a) != string(b) {
			t.Fatalf("checkpoint %d returned\n%s\nthe store holds\n%s", n, a, b)
		}
		return got
	}
	turn()
	for range 5 {
		// A checkpoint that does not change the task (a tool's result).
		if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: tk.ID, From: n}); err != nil {
			t.Fatal(err)
		}
		got := turn()
		got.Tags[0] = "changed by the caller" // must not reach the kept copy
		got.Manifest.Tools[0] = "changed"
	}
	if hits, misses := keptCounts(t, s); hits != 10 || misses != 1 {
		t.Errorf("kept tasks: %d hits, %d misses; want 10 and 1", hits, misses)
	}
	if got := turn(); got.Usage.Iterations != 7 || got.Tags[0] != "a" || got.Manifest.Tools[0] != "glob" {
		t.Errorf("after 7 checkpoints: %d iterations, tags %v, tools %v", got.Usage.Iterations, got.Tags, got.Manifest.Tools)
	}

	// A change through the store between two checkpoints.
	if _, _, err := s.UpdateTask(ctx, tk.ID, func(t *task.Task) ([]event.Event, error) {
		t.Priority = 4
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := turn(); got.Priority != 4 || got.Usage.Iterations != 8 {
		t.Errorf("after an update: priority %d, %d iterations; want 4 and 8", got.Priority, got.Usage.Iterations)
	}
	// The row rewritten outside the writer's writes.
	if _, err := s.wdb.ExecContext(ctx, `UPDATE tasks SET data = json_set(data, '$.priority', 1) WHERE id = ?`, string(tk.ID)); err != nil {
		t.Fatal(err)
	}
	if got := turn(); got.Priority != 1 || got.Usage.Iterations != 9 {
		t.Errorf("after a rewrite: priority %d, %d iterations; want 1 and 9", got.Priority, got.Usage.Iterations)
	}
	if hits, misses := keptCounts(t, s); hits != 11 || misses != 3 {
		t.Errorf("kept tasks: %d hits, %d misses; want 11 and 3", hits, misses)
	}
}

// A task that would not decode as it is (a string that is not UTF-8, a
// time with another offset) is not kept.
func TestKeptOnlyWhatDecodesTheSame(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	ok := task.Task{ID: "t-aaaaa", Description: "fine", CreatedAt: at, UpdatedAt: at.Local()}
	if !faithful(&ok) {
		t.Error("a plain task is not faithful")
	}
	bad := ok
	bad.Description = "bad \xff"
	if faithful(&bad) {
		t.Error("invalid UTF-8 passed")
	}
	bad = ok
	bad.Manifest = &task.Manifest{Commands: []string{"\xfe"}}
	if faithful(&bad) {
		t.Error("invalid UTF-8 in the manifest passed")
	}
	bad = ok
	later := at.In(time.FixedZone("X", 3600))
	bad.FinishedAt = &later
	if faithful(&bad) {
		t.Error("a time at offset +01:00 passed")
	}
}
