package executor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// answers is an engine that waits for its user until a message is in its
// inbox, then reads it and completes.
func answers(ctx context.Context, r engine.Run) engine.Outcome {
	inbox, err := r.Host.Inbox(ctx)
	if err != nil {
		return engine.Outcome{Status: engine.Stopped}
	}
	for _, inj := range inbox {
		if inj.Kind == inject.Message {
			if _, err := r.Host.Commit(ctx, engine.Step{Delivered: inbox}); err != nil {
				return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
			}
			return engine.Outcome{Status: engine.Completed, Reason: "answered"}
		}
	}
	return engine.Outcome{Status: engine.Waiting, Reason: "which file?"}
}

// within receives from ch, failing the test after testkit.WaitLimit.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testkit.WaitLimit):
		t.Fatalf("no %s within %s", what, testkit.WaitLimit)
		panic("unreachable")
	}
}

// A quiet notice that arrives while a run that ended waiting is still
// registered leaves the task waiting, as one arriving later does: the run
// wakes its task on its way out only for loud messages. (The run's end
// used to wake the task for anything in its queue.)
func TestQuietNoticeAsTheRunEndsLeavesItWaiting(t *testing.T) {
	e := newExecEnv(t, Config{}, answers)
	tk := e.create("asks", 2)
	ended := make(chan struct{}, 4)
	var injected atomic.Bool
	e.ex.hooks.finished = func(id task.ID, to task.Status) {
		if to == task.Waiting && injected.CompareAndSwap(false, true) {
			if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: id, Kind: inject.Rebase,
				Source: inject.FromMainWatcher, Urgency: inject.Helpful, Text: "main moved", Quiet: true}); err != nil {
				t.Error(err)
			}
		}
	}
	e.ex.hooks.ended = func(task.ID) { ended <- struct{}{} }
	e.start()
	within(t, ended, "end of the first run")
	if !injected.Load() {
		t.Fatal("the run did not end waiting")
	}
	if s := e.get(tk.ID); s.Status != task.Waiting {
		t.Fatalf("a quiet notice that came as the run ended moved the task to %s (%s)", s.Status, s.CloseReason)
	}
	if p, err := e.st.Pending(context.Background(), tk.ID); err != nil || len(p) != 1 || p[0].Text != "main moved" {
		t.Fatalf("queue %+v, %v; want the notice", p, err)
	}
	// The user's answer wakes it, and the next run reads both.
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Text: "main.go"}); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(tk.ID, task.Completed)
	if p, err := e.st.Pending(context.Background(), tk.ID); err != nil || len(p) != 0 {
		t.Fatalf("queue %+v, %v after the task completed; want empty", p, err)
	}
}

// A loud message that arrives while a run that ended waiting is still
// registered finds nobody to wake the task but the run: the run wakes it
// on its way out, and the next run reads it.
func TestMessageAsTheRunEndsWakesIt(t *testing.T) {
	e := newExecEnv(t, Config{}, answers)
	tk := e.create("asks", 2)
	var injected atomic.Bool
	e.ex.hooks.finished = func(id task.ID, to task.Status) {
		if to == task.Waiting && injected.CompareAndSwap(false, true) {
			if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: id, Text: "main.go"}); err != nil {
				t.Error(err)
			}
		}
	}
	e.start()
	got := e.waitStatus(tk.ID, task.Completed)
	if !injected.Load() || got.CloseReason != "answered" {
		t.Fatalf("task %s (%s), message injected as it ended: %v", got.Status, got.CloseReason, injected.Load())
	}
}

// A loud message that arrives after the run's last look at its queue but
// before its end is recorded (the store still says running, so the
// message wakes nothing itself) is the run's to wake for as it
// unregisters.
func TestMessageBeforeTheRunEndsWakesIt(t *testing.T) {
	var (
		ex   *Executor
		runs atomic.Int32
	)
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		if runs.Add(1) == 1 {
			if _, err := r.Host.Inbox(ctx); err != nil {
				return engine.Outcome{Status: engine.Stopped}
			}
			if _, err := ex.Inject(ctx, inject.Injection{TaskID: r.Task.ID, Text: "main.go"}); err != nil {
				t.Error(err)
			}
			return engine.Outcome{Status: engine.Waiting, Reason: "which file?"}
		}
		return answers(ctx, r)
	})
	ex = e.ex
	tk := e.create("asks", 2)
	e.start()
	got := e.waitStatus(tk.ID, task.Completed)
	if got.CloseReason != "answered" || runs.Load() != 2 {
		t.Fatalf("task %s (%s) after %d runs; want completed after 2", got.Status, got.CloseReason, runs.Load())
	}
}

// Two wakes of one waiting task race (one by its run on the way out, for
// a message that came before the run's end was recorded; one by a message
// that came after): the one that loses, its view of the task stale, must
// not move the task's next run, already running, back to the queue. It
// used to: the next run read both messages, its completion was refused
// (the task was queued), and a third run found nothing to read and waited
// again with the user's messages taken (and a task that waits twice got
// its next answer appended to a conversation its run had not read:
// "conversation changed underneath").
func TestLosingWakeDoesNotRequeueTheNextRun(t *testing.T) {
	var (
		ex   *Executor
		runs atomic.Int32
	)
	started2, release2 := make(chan struct{}), make(chan struct{})
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		switch runs.Add(1) {
		case 1:
			// m1 comes after the run's last look: the store still says
			// running, so only the run's way out wakes the task for it.
			if _, err := ex.Inject(ctx, inject.Injection{TaskID: r.Task.ID, Text: "m1"}); err != nil {
				t.Error(err)
			}
			return engine.Outcome{Status: engine.Waiting, Reason: "which file?"}
		case 2:
			close(started2)
			select {
			case <-release2:
			case <-ctx.Done():
				return engine.Outcome{Status: engine.Stopped}
			}
		}
		return answers(ctx, r)
	})
	ex = e.ex
	tk := e.create("asks", 2)
	var (
		wakes atomic.Int32
		ended atomic.Bool
	)
	e.ex.hooks.waking = func(id task.ID) {
		if wakes.Add(1) != 1 {
			return
		}
		// Run 1's wake for m1 found the task waiting; before it stores
		// its move, m2 comes (no run registered: it wakes the task
		// itself) and the task's next run starts.
		if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: id, Text: "m2"}); err != nil {
			t.Error(err)
		}
		within(t, started2, "second run")
	}
	e.ex.hooks.ended = func(task.ID) {
		// Run 1 is gone, its wake done: let run 2 read its inbox.
		if ended.CompareAndSwap(false, true) {
			close(release2)
		}
	}
	e.start()
	got := e.waitStatus(tk.ID, task.Completed)
	if got.CloseReason != "answered" || runs.Load() != 2 || wakes.Load() < 2 {
		t.Fatalf("task %s (%s) after %d runs, %d wakes; want completed after 2 runs, 2 wakes", got.Status, got.CloseReason, runs.Load(), wakes.Load())
	}
	if p, err := e.st.Pending(context.Background(), tk.ID); err != nil || len(p) != 0 {
		t.Fatalf("queue %+v, %v after the task completed; want empty", p, err)
	}
}
