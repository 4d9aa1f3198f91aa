package executor

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// manifestOf gives every task a manifest with the timeouts given.
func manifestOf(idle, total int) func(context.Context, task.Task, []string) lifecycle.Evaluation {
	return func(_ context.Context, t task.Task, env []string) lifecycle.Evaluation {
		return lifecycle.Evaluation{Manifest: task.Manifest{Readable: []string{"."}, Writable: []string{"."}, Tools: []string{"Read"},
			Complexity: task.Medium, IdleTimeoutSecs: idle, TotalTimeoutSecs: total, Source: "default"}}
	}
}

// waitFake waits in a synctest bubble until task id reaches status s:
// with no deadline of its own, which the fake clock would reach before
// the timeouts under test (a task that never gets there is a deadlock
// synctest reports).
func waitFake(t *testing.T, e *env, id task.ID, s task.Status) task.Task {
	t.Helper()
	sub := e.bus.Subscribe(event.Filter{TaskID: id})
	defer func() { sub.Close() }()
	for {
		if tk := e.get(id); tk.Status == s {
			return tk
		}
		if _, err := sub.Next(context.Background()); err != nil {
			sub.Close()
			sub = e.bus.Subscribe(event.Filter{TaskID: id})
		}
	}
}

func kindsOf(t *testing.T, e *env, id task.ID) []string {
	t.Helper()
	evs, err := e.st.ReadEvents(context.Background(), event.Query{Filter: event.Filter{TaskID: id}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Kind))
	}
	return kinds
}

// A silent hung engine is stopped by the idle timer: no observation ever
// arrives to look at the clock (the defect of the earlier implementation).
// The task pauses, resumable, with the reason.
func TestIdleTimeoutStopsASilentEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started time.Time
		var took time.Duration
		e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
			started = time.Now()
			<-ctx.Done() // hung: says nothing, does nothing
			took = time.Since(started)
			return engine.Outcome{Status: engine.Stopped}
		})
		e.ex.manifest = manifestOf(600, 7200)
		tk := e.create("hang", 1)
		e.start()
		got := waitFake(t, e, tk.ID, task.Paused)
		if took != 10*time.Minute {
			t.Errorf("the engine was stopped after %s, want 10m", took)
		}
		if !strings.Contains(got.CloseReason, "idle timeout") || !strings.Contains(got.CloseReason, "task resume") {
			t.Errorf("reason %q, want the idle timeout and how to resume", got.CloseReason)
		}
		if got.Manifest == nil || got.Manifest.IdleTimeoutSecs != 600 {
			t.Errorf("manifest %+v, want it stored with the task", got.Manifest)
		}
		kinds := strings.Join(kindsOf(t, e, tk.ID), " ")
		for _, k := range []string{"lifecycle.sandbox_created", "lifecycle.engine_started", "lifecycle.timeout"} {
			if !strings.Contains(kinds, k) {
				t.Errorf("events %s lack %s", kinds, k)
			}
		}
		e.stop()
	})
}

// Observations postpone the idle timeout, never the total one; each turn's
// end records a progress snapshot.
func TestTotalTimeoutStopsABusyEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var took time.Duration
		e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
			start := time.Now()
			for turn := 1; ; turn++ {
				select {
				case <-ctx.Done():
					took = time.Since(start)
					return engine.Outcome{Status: engine.Stopped, Turn: turn}
				case <-time.After(5 * time.Minute):
				}
				r.Host.Emit(event.TurnStarted{Turn: turn, Engine: "fake"}, event.Text{Turn: turn, Text: "still going"})
				if _, err := r.Host.Commit(ctx, engine.Step{Turn: turn, Events: []event.Payload{event.TurnEnded{Turn: turn, StopReason: "end_turn"}}}); err != nil {
					took = time.Since(start)
					return engine.Outcome{Status: engine.Stopped, Turn: turn}
				}
			}
		})
		e.ex.manifest = manifestOf(600, 3600)
		tk := e.create("busy", 1)
		e.start()
		got := waitFake(t, e, tk.ID, task.Paused)
		if took != time.Hour || !strings.Contains(got.CloseReason, "total timeout") {
			t.Errorf("stopped after %s (%q), want the total timeout at 1h", took, got.CloseReason)
		}
		evs, err := e.st.ReadEvents(context.Background(), event.Query{Filter: event.Filter{TaskID: tk.ID, Kinds: []string{string(event.KindProgress)}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) < 10 {
			t.Fatalf("%d progress snapshots, want one per turn (11)", len(evs))
		}
		last, ok := evs[len(evs)-1].Payload.(event.Progress)
		if !ok || last.OutputLines < 10 || last.IdleMs != 0 {
			t.Errorf("last snapshot %+v", evs[len(evs)-1].Payload)
		}
		e.stop()
	})
}

// Without a manifest hook (or with timeouts off) nothing is timed.
func TestNoTimeoutsWithoutThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
			select {
			case <-ctx.Done():
				return engine.Outcome{Status: engine.Stopped}
			case <-time.After(3 * time.Hour):
				return engine.Outcome{Status: engine.Completed, Reason: "done"}
			}
		})
		e.ex.manifest = manifestOf(0, 0)
		tk := e.create("slow", 1)
		e.start()
		if got := waitFake(t, e, tk.ID, task.Completed); got.Manifest == nil {
			t.Errorf("no manifest stored")
		}
		e.stop()
	})
}

// An engine recovering from a permission denial stores the widened
// manifest with the step that records the denial and the recovery.
func TestRecoveredManifestIsStoredWithTheStep(t *testing.T) {
	t.Parallel()
	policy := lifecycle.Policy{Tools: []string{"Read", "Edit", "Bash"}, Recovery: lifecycle.Moderate, MaxEscalations: 1}
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		m := *r.Task.Manifest
		denial := event.PermissionDenied{Turn: 1, Tool: "Edit", Path: "main.go", Write: true}
		r.Host.Emit(denial)
		dec := lifecycle.Recoverer{Policy: policy}.Decide(m, denial)
		if dec.Action != lifecycle.Retry {
			return engine.Outcome{Status: engine.Failed, Reason: "no retry: " + dec.Reason}
		}
		if _, err := r.Host.Commit(ctx, engine.Step{Turn: 1, Events: dec.Events, Manifest: &dec.Manifest}); err != nil {
			return engine.Outcome{Status: engine.Stopped}
		}
		return engine.Outcome{Status: engine.Completed, Reason: "edited after all"}
	})
	e.ex.manifest = manifestOf(600, 3600)
	tk := e.create("edit", 1)
	e.start()
	got := e.waitStatus(tk.ID, task.Completed)
	if m := got.Manifest; m == nil || m.Escalations != 1 || m.Source != "default+recovered" || m.Tools[len(m.Tools)-1] != "Edit" {
		t.Fatalf("stored manifest %+v, want Edit added by one escalation", got.Manifest)
	}
	kinds := strings.Join(kindsOf(t, e, tk.ID), " ")
	for _, k := range []string{"agent.permission_denied", "lifecycle.permission_error", "lifecycle.recovery_attempt"} {
		if !strings.Contains(kinds, k) {
			t.Errorf("events %s lack %s", kinds, k)
		}
	}
}

// An engine whose run reads as failed when its timer cancelled it (an
// external CLI killed by the cancel reads as a crash) still pauses with
// the timeout's reason.
func TestTimeoutOfAnEngineThatFailsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newExecEnv(t, Config{ToolTimeout: 30 * time.Minute}, func(ctx context.Context, r engine.Run) engine.Outcome {
			r.Host.Emit(event.ToolCall{Turn: 1, CallID: "a", Name: "bash", Args: []byte(`{"command":"sleep infinity"}`)})
			<-ctx.Done()
			return engine.Outcome{Status: engine.Failed, Reason: "the CLI exited with signal: killed"}
		})
		e.ex.manifest = manifestOf(60, 0)
		tk := e.create("hang in a tool", 1)
		start := time.Now()
		e.start()
		got := waitFake(t, e, tk.ID, task.Paused)
		// The tool's own timeout (30m) and a minute, not the idle 1m.
		if took := time.Since(start); took < 31*time.Minute || !strings.Contains(got.CloseReason, "idle timeout: nothing reported for 31m0s") {
			t.Errorf("paused after %s: %q", took, got.CloseReason)
		}
		e.stop()
	})
}
