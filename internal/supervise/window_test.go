package supervise

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/supervisor/supervisortest"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// restart stops h's Watcher and starts a new one over the same store and
// bus, as a daemon restart does; a's observations go on through it.
func (h *harness) restart(cfg Config, agents ...*agent) *harness {
	h.t.Helper()
	if err := h.stop(); err != nil {
		h.t.Fatal(err)
	}
	n := &harness{t: h.t, bubble: true, bus: h.bus, st: h.st, act: &supervisortest.Actions{}, done: make(chan error, 1)}
	n.w = New(Options{Config: cfg, Store: h.st, Bus: h.bus, Actions: n.act})
	ctx, cancel := context.WithCancel(h.t.Context())
	n.cancel = cancel
	go func() { n.done <- n.w.Run(ctx) }()
	h.t.Cleanup(func() {
		if err := n.stop(); err != nil {
			h.t.Errorf("Run = %v, want nil", err)
		}
	})
	synctest.Wait()
	for _, a := range agents {
		a.h = n
	}
	return n
}

// A model call that does not answer shows as a wait on the model with its
// age, and its retries with their attempt, until the reply comes.
func TestHealthShowsAModelCallWaitingAndRetrying(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		a := h.task("t-model", nil)
		a.status(task.Running)
		a.h.pub(a.id, event.TurnStarted{Turn: 1, Engine: "native", Model: "m"})
		time.Sleep(95 * time.Second)
		synctest.Wait()
		hl, _ := h.w.Health(a.id)
		if hl.Model == nil || hl.Model.Attempt != 1 || hl.Model.WaitingSecs != 95 || hl.Activity != "waiting on model 95 s" || hl.State != "running" {
			t.Fatalf("health while waiting = %+v (model %+v)", hl, hl.Model)
		}
		a.h.pub(a.id, event.ModelRetry{Turn: 1, Attempt: 2, MaxAttempts: 5, Class: "timeout", Message: "stream idle", WaitMs: 1500})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		hl, _ = h.w.Health(a.id)
		if m := hl.Model; m == nil || m.Attempt != 2 || m.MaxAttempts != 5 || m.LastError != "timeout: stream idle" ||
			hl.Activity != "waiting on model 100 s, attempt 2 of 5" {
			t.Fatalf("health while retrying = %+v (model %+v)", hl, hl.Model)
		}
		a.h.pub(a.id, event.Usage{Turn: 1, InputTokens: 10, OutputTokens: 5})
		if hl, _ = h.w.Health(a.id); hl.Model != nil || hl.Activity != "" {
			t.Errorf("health after the reply = %+v (model %+v)", hl, hl.Model)
		}
		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Errorf("nudged a task waiting on its model: %+v", got)
		}
	})
}

// A task that does not run shows its state, not a health score.
func TestHealthOfTasksNotRunningIsTheirState(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		a := h.task("t-state", nil)
		a.status(task.Running)
		a.edit("a.go", "x")
		a.h.pub(a.id, event.TurnStarted{Turn: 9, Engine: "native"})
		for _, tc := range []struct {
			to       task.Status
			activity string
		}{{task.Paused, "paused"}, {task.Waiting, "waiting for input"}, {task.Queued, "queued"}} {
			a.status(tc.to)
			hl, ok := h.w.Health(a.id)
			if !ok || hl.Status != string(tc.to) || hl.State != string(tc.to) || hl.Confidence != 0 || hl.Activity != tc.activity || hl.Model != nil {
				t.Errorf("%s: health = %+v, %t", tc.to, hl, ok)
			}
			a.status(task.Running)
			if hl, _ := h.w.Health(a.id); hl.Status != "healthy" || hl.State != "running" {
				t.Errorf("resumed after %s: health = %+v", tc.to, hl)
			}
		}
		if n := len(h.w.HealthAll()); n != 1 {
			t.Errorf("HealthAll lists %d tasks, want 1", n)
		}
		a.status(task.Completed)
		if _, ok := h.w.Health(a.id); ok {
			t.Error("a finished task is still watched")
		}
	})
}

// A loop split by a pause, by a question to the user, or by a daemon
// restart is caught at the same count as one that is not.
func TestLoopSplitByAStopIsCaughtAtTheSameCount(t *testing.T) {
	t.Parallel()
	for _, split := range []string{"none", "pause", "waiting", "restart"} {
		t.Run(split, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				h := start(t, true, baseConfig(), nil)
				a := h.task("t-split", nil)
				a.status(task.Running)
				a.failN(2)
				switch split {
				case "pause", "waiting":
					to := task.Paused
					if split == "waiting" {
						to = task.Waiting
					}
					a.status(to)
					time.Sleep(time.Hour)
					a.status(task.Running)
				case "restart":
					if err := h.stop(); err != nil {
						t.Fatal(err)
					}
					time.Sleep(time.Hour) // the daemon is down
					h = h.restart(baseConfig(), a)
				}
				if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
					t.Fatalf("nudged before the third failure: %+v", got)
				}
				a.fail()
				if got := h.act.Of(a.id, inject.Nudge); len(got) != 1 {
					t.Fatalf("nudges after the third failure = %d, want 1", len(got))
				}
				if hl, _ := h.w.Health(a.id); hl.Check != "failing" || hl.Steps != 6 {
					t.Errorf("health = %+v", hl)
				}
			})
		})
	}
}

// Time spent paused, waiting or with the daemon down is not held against
// the task as time without progress.
func TestTimeNotRunningIsNotIdleTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := baseConfig()
		h := start(t, true, cfg, nil)
		a := h.task("t-idle", nil)
		a.status(task.Running)
		for i := range 4 {
			a.edit("a.go", string(rune('a'+i)))
		}
		a.status(task.Paused)
		time.Sleep(3 * time.Hour)
		a.status(task.Running)
		time.Sleep(2 * cfg.Interval)
		synctest.Wait()
		h = h.restart(cfg, a)
		time.Sleep(2 * cfg.Interval)
		synctest.Wait()
		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Errorf("nudged after a pause and a restart: %+v", got)
		}
		if hl, _ := h.w.Health(a.id); hl.Status != "healthy" || hl.Steps != 8 {
			t.Errorf("health = %+v", hl)
		}
	})
}

// A daemon that died while its task ran recovers the task (running →
// queued) only at its next start: the time it was down is not the task's
// idle time either.
func TestCrashGapIsNotIdleTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := baseConfig()
		h := start(t, true, cfg, nil)
		a := h.task("t-crash", nil)
		a.status(task.Running)
		for i := range 4 {
			a.edit("a.go", string(rune('a'+i)))
		}
		if err := h.stop(); err != nil { // the daemon dies
			t.Fatal(err)
		}
		time.Sleep(3 * time.Hour)
		a.status(task.Queued) // recovered at the next start
		h = h.restart(cfg, a)
		a.status(task.Running)
		time.Sleep(2 * cfg.Interval)
		synctest.Wait()
		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Errorf("nudged after a crash: %+v", got)
		}
		if hl, _ := h.w.Health(a.id); hl.Status != "healthy" || hl.Steps != 8 {
			t.Errorf("health = %+v", hl)
		}
	})
}

// A model service that keeps failing (retry after retry for longer than
// the no-progress limit) is not the task's lack of progress: no nudge while
// it lasts, nor once the reply comes.
func TestRetriedModelCallIsNotIdleTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := baseConfig()
		h := start(t, true, cfg, nil)
		a := h.task("t-outage", nil)
		a.status(task.Running)
		for i := range 4 {
			a.edit("a.go", string(rune('a'+i)))
		}
		a.h.pub(a.id, event.TurnStarted{Turn: 9, Engine: "native"})
		time.Sleep(30 * time.Second)
		for n := 2; n <= 5; n++ {
			a.h.pub(a.id, event.ModelRetry{Turn: 9, Attempt: n, MaxAttempts: 5, Class: "timeout"})
			time.Sleep(5 * time.Minute)
		}
		synctest.Wait()
		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Fatalf("nudged during the outage: %+v", got)
		}
		if hl, _ := h.w.Health(a.id); hl.Model == nil || hl.Model.Attempt != 5 || hl.Activity != "waiting on model 20m30s, attempt 5 of 5" {
			t.Fatalf("health during the outage = %+v (model %+v)", hl, hl.Model)
		}
		a.h.pub(a.id, event.Usage{Turn: 9, InputTokens: 10})
		time.Sleep(2 * cfg.Interval)
		synctest.Wait()
		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Errorf("nudged after the outage: %+v", got)
		}
	})
}
