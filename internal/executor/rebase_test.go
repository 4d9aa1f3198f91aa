package executor

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// A blocking rebase request is carried out at the task's boundary, once;
// the engine sees its outcome, never the request; a reply asking for a
// pause pauses the task, and the outcome waits for the resume.
func TestBlockingRebaseAtBoundary(t *testing.T) {
	var (
		mu    sync.Mutex
		seen  []inject.Injection
		calls int
		pause = true
	)
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		return boundaries(ctx, r, func(injs []inject.Injection) *engine.Outcome {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, injs...)
			for _, inj := range injs {
				if inj.Kind == inject.Rebase && inj.Outcome == inject.Conflict {
					return &engine.Outcome{Status: engine.Completed, Reason: "saw the outcome"}
				}
			}
			return nil
		})
	})
	e.ex.rebase = func(ctx context.Context, tk task.Task, req inject.Injection) RebaseReply {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if tk.Status != task.Running || req.Attrs["main"] != "main" {
			t.Errorf("rebase called for %s in %s with %v", tk.ID, tk.Status, req.Attrs)
		}
		r := RebaseReply{Text: "conflicts in a.go; nothing changed", Outcome: inject.Conflict}
		if pause {
			r.Pause = "rebase conflicts in a.go"
		}
		return r
	}
	tk := e.create("work", 2)
	e.start()
	e.waitStatus(tk.ID, task.Running)
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Rebase, Source: "main-watcher",
		Urgency: inject.Blocking, Attrs: map[string]string{"main": "main"}, Text: "main moved; rebasing at your next boundary", Urgent: true}); err != nil {
		t.Fatal(err)
	}
	paused := e.waitStatus(tk.ID, task.Paused)
	if paused.CloseReason != "rebase conflicts in a.go" {
		t.Errorf("paused for %q", paused.CloseReason)
	}
	mu.Lock()
	pause = false
	for _, inj := range seen {
		if inj.Kind == inject.Rebase {
			t.Errorf("the engine saw %+v before the resume", inj)
		}
	}
	mu.Unlock()
	if _, err := e.ex.Resume(context.Background(), tk.ID, ""); err != nil {
		t.Fatal(err)
	}
	done := e.waitStatus(tk.ID, task.Completed)
	if done.CloseReason != "saw the outcome" {
		t.Errorf("completed with %q", done.CloseReason)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("the rebase ran %d times, want once", calls)
	}
	var outcome *inject.Injection
	for i, inj := range seen {
		if inj.Kind == inject.Rebase {
			if inj.Urgency == inject.Blocking && inj.Outcome == "" {
				t.Errorf("the engine saw the request itself: %+v", inj)
			}
			outcome = &seen[i]
		}
	}
	if outcome == nil || !strings.Contains(outcome.Text, "conflicts in a.go") || outcome.Source != "main-watcher" {
		t.Errorf("outcome seen: %+v", outcome)
	}
	if pending, _ := e.st.Pending(context.Background(), tk.ID); len(pending) != 0 {
		t.Errorf("%d injections left: %+v", len(pending), pending)
	}
}

// A quiet injection leaves a task waiting for its user waiting (the wake
// is decided inside Inject, so the status right after it tells); a loud
// one wakes it.
func TestQuietInjectionDoesNotWake(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		inbox, _ := r.Host.Inbox(ctx)
		for _, inj := range inbox {
			if inj.Kind == inject.Message {
				if _, err := r.Host.Commit(ctx, engine.Step{Delivered: inbox}); err != nil {
					return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
				}
				return engine.Outcome{Status: engine.Completed, Reason: "answered"}
			}
		}
		return engine.Outcome{Status: engine.Waiting, Reason: "which file?"}
	})
	tk := e.create("ask first", 2)
	e.start()
	e.waitStatus(tk.ID, task.Waiting)
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Rebase, Source: "main-watcher",
		Urgency: inject.Helpful, Text: "main moved", Quiet: true}); err != nil {
		t.Fatal(err)
	}
	if got := e.get(tk.ID); got.Status != task.Waiting {
		t.Fatalf("a quiet notice moved the waiting task to %s", got.Status)
	}
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Message, Source: "user", Text: "main.go"}); err != nil {
		t.Fatal(err)
	}
	if got := e.get(tk.ID); got.Status == task.Waiting {
		t.Fatalf("the user's message did not wake the task")
	}
	e.waitStatus(tk.ID, task.Completed)
}

// A blocking request stored between a boundary's Prepare and its Inbox is
// not handed to the engine (which would mark it delivered, never
// performed): it waits for the next boundary's Prepare.
func TestBlockingRebaseBetweenPrepareAndInbox(t *testing.T) {
	between := make(chan struct{})
	injected := make(chan struct{})
	var calls int
	var mu sync.Mutex
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		for turn := 1; turn <= 3; turn++ {
			if _, err := r.Host.Prepare(ctx); err != nil {
				return engine.Outcome{Status: engine.Stopped}
			}
			if turn == 1 {
				close(between)
				<-injected
			}
			inbox, err := r.Host.Inbox(ctx)
			if err != nil {
				return engine.Outcome{Status: engine.Stopped}
			}
			for _, inj := range inbox {
				if inj.IsBlockingRebase() {
					return engine.Outcome{Status: engine.Failed, Reason: "the engine was handed the request itself"}
				}
				if inj.Kind == inject.Rebase {
					if _, err := r.Host.Commit(ctx, engine.Step{Turn: turn, Delivered: inbox}); err != nil {
						return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
					}
					return engine.Outcome{Status: engine.Completed, Reason: "saw " + string(inj.Outcome)}
				}
			}
		}
		return engine.Outcome{Status: engine.Failed, Reason: "no outcome by turn 3"}
	})
	e.ex.rebase = func(ctx context.Context, tk task.Task, req inject.Injection) RebaseReply {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return RebaseReply{Text: "rebased", Outcome: inject.Rebased}
	}
	tk := e.create("work", 2)
	e.start()
	<-between
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Rebase, Source: "main-watcher",
		Urgency: inject.Blocking, Text: "main moved"}); err != nil {
		t.Fatal(err)
	}
	close(injected)
	done := e.waitStatus(tk.ID, task.Completed)
	if done.CloseReason != "saw rebased" {
		t.Errorf("completed with %q", done.CloseReason)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("the rebase ran %d times, want once", calls)
	}
}

// An urgent blocking rebase request is not in the inbox (Prepare performs
// it) but still counts as urgent: the engine cuts its turn in flight for it.
func TestBlockingRebaseIsUrgentButNotInInbox(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		return engine.Outcome{Status: engine.Completed}
	})
	e.ex.rebase = func(ctx context.Context, tk task.Task, req inject.Injection) RebaseReply {
		return RebaseReply{Text: "rebased"}
	}
	tk := e.create("held", 2)
	h := e.ex.newHost(tk, &run{id: tk.ID, interrupts: make(chan struct{}, 1)})
	if h.UrgentWaiting(context.Background()) {
		t.Fatal("urgent with nothing queued")
	}
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Rebase, Source: "main-watcher",
		Urgency: inject.Blocking, Text: "main moved", Urgent: true}); err != nil {
		t.Fatal(err)
	}
	inbox, err := h.Inbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(inbox) != 0 {
		t.Errorf("the request is in the inbox: %+v", inbox)
	}
	if !h.UrgentWaiting(context.Background()) {
		t.Error("the urgent request does not count as urgent: the turn in flight would not be cut for it")
	}
}
