package executor

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// A message that arrives after the engine's last look at the queue (here:
// as its run returns completed) is not kept unseen on a finished task: the
// task runs again, the engine receives it, and only then does the task
// complete. Before, the task completed and the message stayed queued on
// it for good.
func TestMessageAfterLastLookRunsTheTaskAgain(t *testing.T) {
	var (
		mu   sync.Mutex
		runs int
		seen []string
		ex   *Executor
	)
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		mu.Lock()
		runs++
		n := runs
		mu.Unlock()
		return boundaries(ctx, r, func(inbox []inject.Injection) *engine.Outcome {
			mu.Lock()
			for _, inj := range inbox {
				seen = append(seen, inj.Text)
			}
			mu.Unlock()
			if n == 1 {
				// The engine has looked at its queue for the last time;
				// the user's message arrives as its run ends.
				if _, err := ex.Inject(ctx, inject.Injection{TaskID: r.Task.ID, Text: "stop: do not merge"}); err != nil {
					t.Errorf("Inject during the final turn: %v", err)
				}
			}
			return &engine.Outcome{Status: engine.Completed, Reason: "done"}
		})
	})
	ex = e.ex
	tk := e.create("finish quickly", 2)
	e.start()
	done := e.waitStatus(tk.ID, task.Completed)
	mu.Lock()
	defer mu.Unlock()
	if runs != 2 || len(seen) != 1 || seen[0] != "stop: do not merge" {
		t.Fatalf("runs = %d, engine saw %q; want a second run that reads the message", runs, seen)
	}
	if done.Closing {
		t.Error("a completed task is still marked closing")
	}
	pending, err := e.st.Pending(context.Background(), tk.ID)
	if err != nil || len(pending) != 0 {
		t.Errorf("Pending on the completed task = %+v, %v; want none", pending, err)
	}
}

// A task that truly ended first refuses a message with a FinishedError,
// and one that ends with messages queued (cancelled while waiting) reports
// them returned.
func TestFinishedTaskRefusesAndReturnsMessages(t *testing.T) {
	release := make(chan struct{})
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return engine.Outcome{Status: engine.Waiting, Reason: "which colour?"}
	})
	tk := e.create("paint it", 2)
	e.start()
	e.waitStatus(tk.ID, task.Running)
	close(release)
	e.waitStatus(tk.ID, task.Waiting)
	ctx := context.Background()
	msg, err := e.ex.Inject(ctx, inject.Injection{TaskID: tk.ID, Text: "blue", Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ex.Cancel(ctx, tk.ID, "never mind"); err != nil {
		t.Fatal(err)
	}
	returned, err := e.st.Returned(ctx, tk.ID)
	if err != nil || len(returned) != 1 || returned[0].ID != msg.ID {
		t.Fatalf("Returned = %+v, %v; want the queued message", returned, err)
	}
	evs, err := e.st.ReadEvents(ctx, event.Query{Filter: event.Filter{TaskID: tk.ID, Kinds: []string{string(event.KindTaskReturned)}}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("returned events = %+v, %v; want one", evs, err)
	}
	var fe *task.FinishedError
	if _, err := e.ex.Inject(ctx, inject.Injection{TaskID: tk.ID, Text: "green"}); !errors.As(err, &fe) || fe.Status != task.Cancelled {
		t.Errorf("Inject on a cancelled task: error = %v, want *task.FinishedError", err)
	}
}
