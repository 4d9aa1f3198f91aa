package executor

// Seed 003's lifecycle around every engine's run (package lifecycle): the
// task's sandbox manifest evaluated at its first start, the engine's start
// recorded, its progress followed from its observations, and its idle and
// total timeouts held by timers.

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// evaluate gives t its sandbox manifest when it has none, stores it with
// the task (the model's pass charged to it) and records sandbox_created;
// it returns the task as stored. A failure to store leaves t as it was:
// the run goes on, without timeouts, and the next start tries again.
func (e *Executor) evaluate(ctx context.Context, t task.Task, ws Workspace) task.Task {
	if e.manifest == nil || t.Manifest != nil || len(t.Workflow) > 0 {
		return t // a workflow task runs no agent of its own
	}
	ev := e.manifest(ctx, t, ws.Env)
	if ctx.Err() != nil {
		return t
	}
	m := ev.Manifest
	now := e.now()
	n, err := e.runSt.ConversationLen(ctx, t.ID)
	if err != nil {
		e.log.Warn("recording the sandbox manifest", "task_id", t.ID, "err", err)
		return t
	}
	cp := store.Checkpoint{TaskID: t.ID, From: n, Mutate: func(tk *task.Task) ([]event.Event, error) {
		tk.Manifest = &m
		tk.UpdatedAt = now
		if ev.Call != nil {
			addUsage(tk, ev.Call)
		}
		return nil, nil
	}}
	if ev.Call != nil {
		cp.Charges = []store.Charge{charge(now, ev.Call)}
	}
	stored, _, err := e.runSt.Checkpoint(ctx, cp, event.New(now, t.ID, event.SandboxCreated{
		Dir: ws.Dir, Source: m.Source, Complexity: string(m.Complexity), Tools: m.Tools, Writable: m.Writable,
		IdleSecs: m.IdleTimeoutSecs, TotalSecs: m.TotalTimeoutSecs, Note: m.Note}))
	if err != nil {
		e.log.Warn("recording the sandbox manifest", "task_id", t.ID, "err", err)
		return t
	}
	if ev.Call != nil {
		e.spend.add(now, ev.Call.CostUSD)
	}
	return stored
}

// monitor is one run's lifecycle: its progress, its watchdog and the
// host the engine sees, which feeds both.
type monitor struct {
	progress *lifecycle.Progress
	dog      *lifecycle.Watchdog // nil: no timeouts
	wg       sync.WaitGroup
	stop     context.CancelFunc
}

// startMonitor records the engine's start and starts the watchdog of t's
// manifest's timeouts, which cancels the run with a
// *lifecycle.TimeoutError as its cause when one passes. The returned host
// wraps h; end stops the watchdog and joins it.
func (e *Executor) startMonitor(ctx context.Context, cancel context.CancelCauseFunc, t task.Task, name string, ws Workspace, h *host) (engine.Host, *monitor) {
	now := e.now()
	mon := &monitor{progress: lifecycle.NewProgress(now)}
	h.Emit(event.EngineStarted{Engine: name, Dir: ws.Dir, Resumed: t.Usage.Iterations > 0})
	if m := t.Manifest; m != nil && (m.IdleTimeoutSecs > 0 || m.TotalTimeoutSecs > 0) {
		// While a tool call runs, the run may stay silent as long as the
		// tool's own timeout lets it (a build that prints nothing), and a
		// minute more for its result to be reported.
		busy := time.Duration(0)
		if e.cfg.ToolTimeout > 0 {
			busy = e.cfg.ToolTimeout + time.Minute
		}
		mon.dog = lifecycle.NewWatchdog(time.Duration(m.IdleTimeoutSecs)*time.Second, busy, time.Duration(m.TotalTimeoutSecs)*time.Second)
		wctx, stop := context.WithCancel(ctx)
		mon.stop = stop
		mon.wg.Go(func() {
			if te := mon.dog.Run(wctx); te != nil {
				cancel(te)
			}
		})
	}
	return &monitoredHost{host: h, mon: mon}, mon
}

// end stops the watchdog and waits for it.
func (m *monitor) end() {
	if m.stop != nil {
		m.stop()
	}
	m.wg.Wait()
}

// touch records activity at now.
func (m *monitor) touch() {
	if m.dog != nil {
		m.dog.Touch()
	}
}

// timedOut turns the outcome of a run its watchdog stopped into a pause
// with the reason, and records the timeout. A run that ended stopped, or
// failed (an external CLI killed by the cancel may read as a crash), is
// the timeout's; one that completed or waits for its user as the timer
// fired keeps its outcome, as does any run not stopped by a timer.
func (e *Executor) timedOut(id task.ID, out engine.Outcome, cause error) engine.Outcome {
	var te *lifecycle.TimeoutError
	if !errors.As(cause, &te) || (out.Status != engine.Stopped && out.Status != engine.Failed) {
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	if err := e.runSt.EmitEvents(ctx, event.New(e.now(), id, te.Event())); err != nil {
		e.log.Warn("recording a timeout", "task_id", id, "err", err)
	}
	e.log.Warn("task run stopped by its timeout", "task_id", id, "which", te.Which, "limit", te.Limit)
	return engine.Outcome{Status: engine.Paused, Reason: te.Error() + "; `neuraphage task resume` continues it", Turn: out.Turn}
}

// monitoredHost is the host an engine sees: every observation it emits or
// commits feeds the run's progress and postpones its idle timeout, and a
// progress snapshot is recorded at each turn's end.
type monitoredHost struct {
	*host
	mon *monitor
}

var _ engine.Host = (*monitoredHost)(nil)

// Emit implements engine.Host.
func (h *monitoredHost) Emit(ps ...event.Payload) {
	if snaps := h.observe(ps); len(snaps) > 0 {
		ps = slices.Concat(ps, snaps) // never into the caller's array
	}
	h.host.Emit(ps...)
}

// Commit implements engine.Host.
func (h *monitoredHost) Commit(ctx context.Context, s engine.Step) (task.Task, error) {
	snaps := h.observe(s.Events)
	t, err := h.host.Commit(ctx, s)
	if err == nil && len(snaps) > 0 {
		h.host.Emit(snaps...)
	}
	return t, err
}

// Prepare implements engine.Host: the boundary's work (a blocking rebase,
// say) is activity, before and after.
func (h *monitoredHost) Prepare(ctx context.Context) (task.Task, error) {
	h.mon.touch()
	defer h.mon.touch()
	return h.host.Prepare(ctx)
}

// Allow implements engine.Host: a model call about to start is activity.
func (h *monitoredHost) Allow(ctx context.Context) *engine.Stop {
	h.mon.touch()
	return h.host.Allow(ctx)
}

// observe feeds ps to the progress and the watchdog, and returns a
// progress snapshot for each turn end among them.
func (h *monitoredHost) observe(ps []event.Payload) []event.Payload {
	if len(ps) == 0 {
		return nil
	}
	now := h.e.now()
	var snaps []event.Payload
	for _, p := range ps {
		h.mon.progress.Observe(p, now)
		if _, ok := p.(event.TurnEnded); ok {
			snaps = append(snaps, h.mon.progress.Snapshot(now))
		}
	}
	if h.mon.dog != nil {
		h.mon.dog.Busy(h.mon.progress.ToolRunning())
	}
	return snaps
}
