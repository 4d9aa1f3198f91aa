package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TestCountsPendingLeavesOutFinishedTasks: a message queued for a task that
// then finished is never delivered; daemon status must not count it as
// waiting for delivery.
func TestCountsPendingLeavesOutFinishedTasks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neuraphage.db")
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []task.ID{"t-aaaaa", "t-bbbbb"} {
		tk, err := task.New(id, task.Spec{Description: "x"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Enqueue(ctx, inject.Injection{TaskID: id, Source: inject.FromUser, Kind: inject.Message, Text: "hi", CreatedAt: t0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pending != 2 {
		t.Fatalf("pending = %d before either task finished, want 2", c.Pending)
	}
	s.Close()
	db, err := openDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE tasks SET status = ? WHERE id = 't-bbbbb'`, string(task.Cancelled)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c, err = s.Counts(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Pending != 1 {
		t.Errorf("pending = %d with one task cancelled, want 1 (only the unfinished task's message)", c.Pending)
	}
}

// TestCountsEventsFollowTheLog: Counts reports the event log's row count
// and highest ID as kept by the writer, not counted per call; after
// appends, a failed operation whose events were rolled back, pruning
// (down to an empty log) and reopening, they are what the table holds.
func TestCountsEventsFollowTheLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neuraphage.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	check := func(step string) {
		t.Helper()
		var (
			rows int64
			last sql.NullInt64
		)
		if err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*), MAX(id) FROM events`).Scan(&rows, &last); err != nil {
			t.Fatal(err)
		}
		c, err := s.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Events != rows || c.LastID != last.Int64 {
			t.Errorf("%s: Counts says %d events, last %d; the log holds %d, last %d", step, c.Events, c.LastID, rows, last.Int64)
		}
	}
	check("empty")
	for i := range 3 {
		evs := make([]event.Event, 5+i*4)
		for j := range evs {
			evs[j] = event.New(t0.Add(time.Duration(i)*time.Hour), "", event.ToolResult{Turn: j, CallID: "c", Name: "glob"})
		}
		if _, err := s.AppendEvents(ctx, evs...); err != nil {
			t.Fatal(err)
		}
	}
	check("after appends")
	failed := errors.New("refused")
	if _, err := s.do(ctx, func(w *wtx) error {
		if err := w.emit(event.New(t0, "", event.ToolResult{CallID: "x", Name: "glob"})); err != nil {
			return err
		}
		return failed
	}, false); !errors.Is(err, failed) {
		t.Fatalf("a failing operation returned %v", err)
	}
	check("after a rolled-back append")
	if n, err := s.PruneEvents(ctx, t0.Add(90*time.Minute)); err != nil || n != 14 {
		t.Fatalf("pruning the first two hours: %d, %v; want 14", n, err)
	}
	check("after pruning")
	s.Close()
	if s, err = Open(ctx, path, Options{}); err != nil {
		t.Fatal(err)
	}
	check("reopened")
	if _, err := s.PruneEvents(ctx, t0.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	check("after pruning everything")
	if _, err := s.AppendEvents(ctx, event.New(t0, "", event.ToolResult{CallID: "y", Name: "glob"})); err != nil {
		t.Fatal(err)
	}
	check("after appending to an empty log")
}

// TestCountsFollowStatusAndQueues: Counts' task and queue counts, kept
// between writes that cannot change them, are what the tables hold after
// every acknowledged write: a task added, a status changed, a checkpoint
// that keeps the status, a message queued and delivered.
func TestCountsFollowStatusAndQueues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "neuraphage.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	check := func(step string) {
		t.Helper()
		want := map[task.Status]int{}
		rows, err := s.rdb.QueryContext(ctx, `SELECT status, COUNT(*) FROM tasks GROUP BY status`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var (
				st task.Status
				n  int
			)
			if err := rows.Scan(&st, &n); err != nil {
				t.Fatal(err)
			}
			want[st] = n
		}
		rows.Close()
		var pending int
		if err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM injections WHERE delivered_at IS NULL AND returned_at IS NULL`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		for range 2 { // read, then kept
			c, err := s.Counts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(c.Tasks, want) || c.Pending != pending {
				t.Errorf("%s: Counts says %v and %d pending; the tables hold %v and %d", step, c.Tasks, c.Pending, want, pending)
			}
			c.Tasks[task.Failed] = 99 // the caller's copy
		}
	}
	setStatus := func(id task.ID, st task.Status) {
		t.Helper()
		if _, _, err := s.UpdateTask(ctx, id, func(tk *task.Task) ([]event.Event, error) { tk.Status = st; return nil, nil }); err != nil {
			t.Fatal(err)
		}
	}
	check("empty")
	for _, id := range []task.ID{"t-aaaaa", "t-bbbbb", "t-ccccc"} {
		tk, err := task.New(id, task.Spec{Description: "x"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	check("created")
	setStatus("t-aaaaa", task.Running)
	check("one running")
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: "t-aaaaa", Mutate: func(tk *task.Task) ([]event.Event, error) {
		tk.Usage.Iterations++
		return nil, nil
	}}); err != nil {
		t.Fatal(err)
	}
	check("checkpointed")
	inj, _, err := s.Enqueue(ctx, inject.Injection{TaskID: "t-aaaaa", Source: inject.FromUser, Kind: inject.Message, Text: "hi", CreatedAt: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("queued")
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: "t-aaaaa", From: 0, Delivered: []int64{inj.ID}}); err != nil {
		t.Fatal(err)
	}
	check("delivered")
	setStatus("t-bbbbb", task.Running)
	setStatus("t-bbbbb", task.Paused)
	check("one paused")
}
