package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// A queue read empty is answered from memory until an injection is
// written, and every write is seen by the next read: enqueued, delivered,
// returned, whatever the task.
func TestPendingRemembersEmptyQueuesUntilAWrite(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var ids []task.ID
	for _, id := range []task.ID{"t-aaaaa", "t-bbbbb"} {
		tk, err := task.New(id, task.Spec{Description: "queued"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	a, b := ids[0], ids[1]
	pending := func(id task.ID) int {
		t.Helper()
		p, err := s.Pending(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return len(p)
	}
	remembered := func(id task.ID) bool { return s.queues.isEmpty(id, s.queues.gen.Load()) }

	if pending(a) != 0 || !remembered(a) || remembered(b) {
		t.Fatalf("after reading a's empty queue: a remembered %v, b %v", remembered(a), remembered(b))
	}
	if pending(a) != 0 {
		t.Fatal("a's queue is not empty")
	}
	pending(b)
	// A message for b: both are read again, and b's is seen.
	inj, _, err := s.Enqueue(ctx, inject.Injection{TaskID: b, Source: "user", Text: "hello", CreatedAt: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if remembered(a) || remembered(b) {
		t.Error("queues still remembered empty after an enqueue")
	}
	if pending(b) != 1 || pending(a) != 0 {
		t.Fatal("the enqueued message is not pending, or a's queue is not empty")
	}
	if remembered(b) {
		t.Error("a queue holding a message is remembered empty")
	}
	if _, err := s.MarkDelivered(ctx, []int64{inj.ID}, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if pending(b) != 0 || !remembered(b) {
		t.Error("b's queue after the delivery: not read empty, or not remembered")
	}
}
