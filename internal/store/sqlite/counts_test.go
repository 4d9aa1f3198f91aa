package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/inject"
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
