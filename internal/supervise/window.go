package supervise

import (
	"context"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/stuck"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// A task's window lives from its first run to its end: pauses, resumes,
// questions to the user, requeues and daemon restarts do not start it
// afresh, so a loop that spans them is still one loop. The detector never
// sees the task's status changes (it would start a fresh window on every
// resume); instead the Watcher runs it on the task's own clock, which
// stops while the task does not run: every time given to the detector is
// the real time less the time spent not running (watched.offset), so a
// long pause is not "no progress". The clock also stops while a model call
// is being retried: a model service that fails is shown in health as
// such, and its outage is not the task's lack of progress.

// replayLimit bounds the observations replayed into a window at start.
const replayLimit = 2000

// liveStatuses are the statuses of tasks whose window is kept.
var liveStatuses = []task.Status{task.Running, task.Paused, task.Waiting, task.Queued}

// apply feeds one event to the task's window and tracks its state and its
// model call; it returns what the checks found.
func (wt *watched) apply(e event.Event) []stuck.Finding {
	switch p := e.Payload.(type) {
	case event.TaskStatus:
		wt.state = p.To
		wt.running = p.To == task.Running
		switch {
		case wt.running && !wt.halt.IsZero():
			wt.offset += max(0, e.Time.Sub(wt.halt))
			wt.halt = time.Time{}
		case !wt.running && wt.halt.IsZero():
			wt.halt = e.Time
		}
		if !wt.running {
			wt.model = nil
		}
		return nil
	case event.TurnStarted:
		wt.model = &modelCall{turn: p.Turn, since: e.Time, attempt: 1}
	case event.ModelRetry:
		if m := wt.model; m != nil && m.turn == p.Turn {
			m.attempt, m.max, m.lastErr = p.Attempt, p.MaxAttempts, p.Class
			if p.Message != "" {
				m.lastErr += ": " + p.Message
			}
		}
		if wt.running && wt.halt.IsZero() {
			// The model service is failing: the task's clock stops until
			// the call ends (a provider's outage is not the task's lack
			// of progress; health shows it).
			wt.halt = e.Time
		}
	case event.Text, event.ToolCall, event.Usage, event.TurnEnded, event.ModelError, event.Interrupted,
		event.NeedsInput, event.Completed, event.Failed:
		// The call answered, failed, or was cut short; a clock stopped by
		// its retries goes on.
		if wt.running && !wt.halt.IsZero() {
			wt.offset += max(0, e.Time.Sub(wt.halt))
			wt.halt = time.Time{}
		}
		wt.model = nil
	}
	before := wt.d.Counters().Progress
	fs := wt.d.Observe(wt.onClock(e))
	if wt.d.Counters().Progress != before {
		wt.lastProgress = e.Time
	}
	return fs
}

// clock returns now on the task's clock: stopped at halt while it is set.
func (wt *watched) clock(now time.Time) time.Time {
	if !wt.halt.IsZero() && wt.halt.Before(now) {
		now = wt.halt
	}
	return now.Add(-wt.offset)
}

// onClock returns e with its time on the task's clock.
func (wt *watched) onClock(e event.Event) event.Event {
	e.Time = e.Time.Add(-wt.offset)
	return e
}

// modelCall is a model call in progress: since its turn started, on which
// attempt, and why the last attempt failed.
type modelCall struct {
	turn    int
	since   time.Time
	attempt int
	max     int
	lastErr string
}

// adopt gives a window to every live task that has none (a Watcher
// starting with the daemon, or a restarted loop), rebuilt from the task's
// recent observations in the event log.
func (w *Watcher) adopt(ctx context.Context) {
	ts, err := w.o.Store.ListTasks(ctx, store.ListOptions{Statuses: liveStatuses})
	if err != nil {
		w.log.Warn("listing live tasks", "err", err)
		return
	}
	for _, t := range ts {
		w.mu.Lock()
		known := w.tasks[t.ID] != nil
		w.mu.Unlock()
		if known {
			continue
		}
		wt := w.rebuild(ctx, t)
		w.mu.Lock()
		if w.tasks[t.ID] == nil {
			w.tasks[t.ID] = wt
		}
		w.mu.Unlock()
	}
}

// rebuild returns a window for t with its recent observations replayed:
// the detector sees them as it saw them live, and nothing is acted on
// (what was found before is acted on again only if the task repeats it).
// The time from the last observation to now (the daemon was down, or the
// task waited) is not held against the task.
func (w *Watcher) rebuild(ctx context.Context, t task.Task) *watched {
	evs, err := w.recent(ctx, t.ID)
	if err != nil {
		w.log.Warn("reading a task's observations to rebuild its window", "task", t.ID, "err", err)
	}
	now := w.o.Now()
	if len(evs) == 0 {
		wt := w.newWatched(t)
		if !wt.running {
			wt.halt = now
		}
		return wt
	}
	wt := w.newWatched(t)
	wt.d = stuck.New(w.cfg.Stuck, t.Worktree, evs[0].Time)
	wt.lastProgress = evs[0].Time
	wt.running, wt.halt = true, time.Time{}
	prev := evs[0].Time
	for _, e := range evs {
		if event.Matches("watcher", e.Kind) {
			wt.relive(e)
			wt.replayedTo = e.ID
			continue
		}
		wasRunning := wt.running
		wt.apply(e)
		wt.relive(e)
		if wasRunning && !wt.running && prev.Before(wt.halt) {
			// The task stopped at its last observation at the latest: a
			// daemon that died is recovered (running → queued) only at its
			// next start, and the time between is not the task's.
			wt.halt = prev
		}
		prev = e.Time
		wt.replayedTo = e.ID
	}
	last := evs[len(evs)-1].Time
	if wt.halt.IsZero() {
		wt.offset += max(0, now.Sub(last))
	}
	wt.state, wt.running = t.Status, t.Status == task.Running
	switch {
	case wt.running:
		if !wt.halt.IsZero() {
			wt.offset += max(0, now.Sub(wt.halt))
		}
		wt.halt = time.Time{}
	case wt.halt.IsZero():
		wt.halt = now
	}
	if !wt.running {
		wt.model = nil
	}
	return wt
}

// recent reads the task's last observations, status changes and the
// Watcher's actions on it, oldest first, at most replayLimit.
func (w *Watcher) recent(ctx context.Context, id task.ID) ([]event.Event, error) {
	q := event.Query{Filter: event.Filter{TaskID: id, Kinds: []string{"agent", string(event.KindTaskStatus),
		string(event.KindWatcherNudge), string(event.KindWatcherEscalate), string(event.KindWatcherPause), string(event.KindWatcherAbort)}},
		AfterID: 0, Limit: 1000}
	var out []event.Event
	for {
		page, err := w.o.Store.ReadEvents(ctx, q)
		if err != nil {
			return out, err
		}
		for _, e := range page {
			if !e.Transient() {
				out = append(out, e)
			}
		}
		if len(out) > replayLimit {
			out = out[len(out)-replayLimit:]
		}
		if len(page) < q.Limit {
			return out, nil
		}
		q.AfterID = page[len(page)-1].ID
	}
}
