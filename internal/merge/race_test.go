package merge_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// slowStore delays the task updates of one task, widening the window
// between two writes that a caller makes one after the other.
type slowStore struct {
	store.Store
	slow  atomic.Value // task.ID
	delay time.Duration
}

func (s *slowStore) UpdateTask(ctx context.Context, id task.ID, m store.Mutation) (task.Task, []evt, error) {
	if v, _ := s.slow.Load().(task.ID); v == id {
		time.Sleep(s.delay)
	}
	return s.Store.UpdateTask(ctx, id, m)
}

// TestEnqueuePausedTaskRace: Enqueue (and Retry) of a paused task adds the
// entry and kicks the queue before it moves the task to merging; a queue
// that takes the entry up in between finds the task paused and cancels
// the entry, leaving the task merging with nothing queued.
func TestEnqueuePausedTaskRace(t *testing.T) {
	t.Parallel()
	var slow *slowStore
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2}, withStore(func(s store.Store) store.Store {
		slow = &slowStore{Store: s, delay: 400 * time.Millisecond}
		return slow
	}))
	e.write(e.repo, "README", "dirty\n")
	e.start()
	tk, w := e.newTask("task")
	e.write(w.Path, "task.txt", "task\n")
	e.complete(tk.ID, "task")
	e.waitState(tk.ID, store.MergeWaiting)
	if _, err := e.q.Cancel(e.ctx, tk.ID, ""); err != nil {
		t.Fatal(err)
	}
	e.waitTask(tk.ID, task.Paused)
	e.git(e.repo, "checkout", "--", "README")

	slow.slow.Store(tk.ID) // the store is slow to write this task (a busy disk, say)
	ent, err := e.q.Retry(e.ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	slow.slow.Store(task.ID(""))
	got := e.waitEntry(tk.ID, "closed", func(m store.MergeEntry) bool { return m.ID == ent.ID && !m.State.Open() })
	if got.State != store.MergeLanded {
		t.Errorf("Enqueue/Retry of a paused task kicks the queue before moving the task to merging: the entry was %s (%s) and the task is left %s with no open entry",
			got.State, got.Detail, e.task(tk.ID).Status)
	}
	e.waitTask(tk.ID, task.Completed)
}

// holdStore blocks PutWorktree of one task until released, signalling
// when it is reached (MarkLanded writes the worktree record right after
// the target moved).
type holdStore struct {
	store.Store
	task    atomic.Value // task.ID
	reached chan struct{}
	release chan struct{}
}

func (s *holdStore) PutWorktree(ctx context.Context, w store.Worktree, evs ...evt) ([]evt, error) {
	if v, _ := s.task.Load().(task.ID); v == w.TaskID && w.Landed != "" {
		s.task.Store(task.ID(""))
		close(s.reached)
		<-s.release
	}
	return s.Store.PutWorktree(ctx, w, evs...)
}

// TestCancelAfterTargetMoved: a Cancel that arrives once the target has
// moved (the work is on main) must not report the entry cancelled and
// pause the task as if nothing had landed.
func TestCancelAfterTargetMoved(t *testing.T) {
	t.Parallel()
	hold := &holdStore{reached: make(chan struct{}), release: make(chan struct{})}
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2}, withStore(func(s store.Store) store.Store {
		hold.Store = s
		return hold
	}))
	e.start()
	tk, w := e.newTask("task")
	e.write(w.Path, "task.txt", "task\n")
	hold.task.Store(tk.ID)
	e.complete(tk.ID, "task")
	<-hold.reached // main moved; the landing is being recorded
	landedTip := e.rev(e.repo, "main")
	// Cancel waits for the processing under way; it cannot finish before
	// the landing is recorded.
	cerrc := make(chan error, 1)
	go func() {
		_, err := e.q.Cancel(e.ctx, tk.ID, "")
		cerrc <- err
	}()
	select {
	case err := <-cerrc:
		t.Fatalf("Cancel returned (%v) before the landing under way was recorded", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(hold.release)
	cerr := <-cerrc
	ent := e.waitEntry(tk.ID, "closed", func(m store.MergeEntry) bool { return !m.State.Open() })
	e.stop()
	onMain := e.git(e.repo, "show", "main:task.txt") == "task"
	tkNow := e.task(tk.ID)
	if !onMain || ent.State != store.MergeLanded || tkNow.Status != task.Completed {
		t.Errorf("Cancel after the target moved: main at %s (work on main: %v), Cancel returned %v, the entry is %s (%s) and the task %s (%q)",
			landedTip[:10], onMain, cerr, ent.State, ent.Detail, tkNow.Status, tkNow.CloseReason)
	}
	if cerr == nil || !strings.Contains(cerr.Error(), "already landed") {
		t.Errorf("Cancel = %v, want a refusal saying the merge already landed", cerr)
	}
}
