package executor

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// A step that finds the data disk full (a real SQLite store, capped so
// that it fails with SQLITE_FULL) holds the run in memory, retrying; the
// task stays running in the store and in the executor, the disk's state is
// reported (Held, a daemon.disk_full event), and once space returns the
// step is stored and the run finishes. Before, the run ended paused with a
// "runtime error", recording that failed too, and the task stayed running
// with no run behind it: nothing resumed after space returned.
func TestFullDiskHoldsTheRunUntilSpaceReturns(t *testing.T) {
	ready, capped := make(chan struct{}), make(chan struct{})
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		if _, err := r.Host.Commit(ctx, engine.Step{Turn: 1, Messages: []llm.Message{llm.UserText("start")}}); err != nil {
			return engine.Outcome{Status: engine.Paused, Reason: "runtime error: " + err.Error()}
		}
		close(ready)
		select {
		case <-capped:
		case <-ctx.Done():
			return engine.Outcome{Status: engine.Stopped}
		}
		// As the agent does: a failed commit pauses the run.
		big := llm.UserText(strings.Repeat("a long tool result ", 20_000))
		if _, err := r.Host.Commit(ctx, engine.Step{Turn: 2, Messages: []llm.Message{big}}); err != nil {
			return engine.Outcome{Status: engine.Paused, Reason: "runtime error: " + err.Error()}
		}
		return engine.Outcome{Status: engine.Completed, Reason: "done despite the disk"}
	})
	sub := e.bus.Subscribe(event.Filter{Kinds: []string{string(event.KindDaemonDiskFull)}})
	defer sub.Close()
	tk := e.create("write a lot", 2)
	e.start()
	<-ready
	ctx := context.Background()
	pages, err := e.st.PageCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.SetMaxPages(ctx, pages); err != nil {
		t.Fatal(err)
	}
	close(capped)

	wctx, cancel := context.WithTimeout(ctx, testkit.WaitLimit)
	defer cancel()
	ev, err := sub.Next(wctx)
	if err != nil {
		got := e.get(tk.ID)
		t.Fatalf("no %s event while the disk is full (%v); the store says %s (%s), the executor runs %v",
			event.KindDaemonDiskFull, err, got.Status, got.CloseReason, e.ex.Running())
	}
	if p := ev.Payload.(event.DiskFull); p.Recovered || !strings.Contains(p.Err, "full") || ev.TaskID != tk.ID {
		t.Errorf("disk full event = %+v", ev)
	}
	testkit.WaitFor(t, "Held to say the disk is full", func() bool { return strings.Contains(e.ex.Held(), "the data disk is full") })
	if got := e.get(tk.ID); got.Status != task.Running {
		t.Errorf("while the disk is full the task is %s (%s); want running", got.Status, got.CloseReason)
	}
	if !slices.Contains(e.ex.Running(), tk.ID) {
		t.Errorf("while the disk is full the executor runs %v; want the task's run held, not gone", e.ex.Running())
	}

	if _, err := e.st.SetMaxPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	done := e.waitStatus(tk.ID, task.Completed)
	if done.CloseReason != "done despite the disk" {
		t.Errorf("completed with %q", done.CloseReason)
	}
	testkit.WaitFor(t, "the run to be gone", func() bool { return len(e.ex.Running()) == 0 })
	if held := e.ex.Held(); held != "" {
		t.Errorf("Held after space returned = %q", held)
	}
	conv, err := e.st.Conversation(ctx, tk.ID, 0)
	if err != nil || len(conv) != 2 {
		t.Errorf("stored conversation has %d entries (%v); want both steps", len(conv), err)
	}
	evs, err := e.st.ReadEvents(ctx, event.Query{Filter: event.Filter{Kinds: []string{string(event.KindDaemonDiskFull)}}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("logged disk events = %+v, %v; want the recovery", evs, err)
	}
	if p := evs[0].Payload.(event.DiskFull); !p.Recovered || !slices.Equal(p.Tasks, []task.ID{tk.ID}) {
		t.Errorf("recovery event = %+v", p)
	}
}
