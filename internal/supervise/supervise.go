// Package supervise is the Watcher: it follows every running task's
// observations on the event bus, keeps a window per task (internal/stuck,
// tier 1), asks the watcher persona to judge what tier 1 finds (tier 2),
// and climbs an escalation ladder: nudges of rising severity, a persona
// escalation, a pause for the user, and an abort only when configured or a
// hard limit is hit. Progress after a nudge resets the ladder. Every action
// goes through the executor's door and is recorded as an event with its
// evidence.
//
// The Watcher never reads a client's state: what it knows of a task comes
// from the bus (observations and status changes) and the store. A panic
// while evaluating one task is recovered and counted; the others go on.
package supervise

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/stuck"
	"github.com/neuraphage/neuraphage-go/internal/supervisor"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Config is the Watcher's configuration (config.Watcher, converted).
type Config struct {
	Enabled  bool
	Interval time.Duration
	Stuck    stuck.Config
	// Tier2 asks the judge about what tier 1 finds; Tier2Every also asks
	// about long-running tasks with nothing found (0: never).
	Tier2      bool
	Tier2Every time.Duration
	// The ladder.
	Nudges      int
	StepsToHeed int
	Escalate    bool
	Pause       bool
	Abort       bool
	HardTokens  int64
	HardUSD     float64
}

// Actions are what the Watcher can do to a task: the executor's door.
type Actions interface {
	Inject(ctx context.Context, inj inject.Injection) (inject.Injection, error)
	Escalate(ctx context.Context, id task.ID, to, reason, by string) (executor.Escalation, error)
	Cancel(ctx context.Context, id task.ID, reason string) (task.Task, error)
}

// Store is what the Watcher reads and records.
type Store interface {
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	ListTasks(ctx context.Context, o store.ListOptions) ([]task.Task, error)
	ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error)
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
}

// Options configure a Watcher.
type Options struct {
	Config  Config
	Store   Store
	Bus     *event.Bus
	Actions Actions
	// Judge is tier 2; nil runs tier 1 alone (degraded).
	Judge Judge
	// Excerpt returns the end of a task's conversation for tier 2.
	Excerpt func(ctx context.Context, id task.ID) string
	Hooks   *hooks.Runner
	Logger  *slog.Logger
	Now     func() time.Time
}

// Watcher supervises running tasks. Its methods are safe for concurrent
// use; Run owns its goroutines and joins them before it returns.
type Watcher struct {
	o   Options
	cfg Config
	log *slog.Logger
	rt  *supervisor.Runtime // the loop, its restarts and the judgements in flight
	deg *supervisor.Degraded

	mu    sync.Mutex
	tasks map[task.ID]*watched // guarded by mu
	// st holds the Watcher's own counters (guarded by mu); Stats adds the
	// runtime's and the degraded state.
	st Stats
}

// watched is the Watcher's state for one task.
type watched struct {
	t       task.Task
	d       *stuck.Detector
	running bool
	state   task.Status // the task's status as last seen
	started time.Time

	// The task's clock (see window.go): halt is when it last stopped
	// running (zero while it runs), offset the time it spent not running
	// since its window began.
	halt   time.Time
	offset time.Duration
	// replayedTo is the last event replayed into the window at start; the
	// live feed skips what it already holds.
	replayedTo int64
	model      *modelCall // the model call in progress, or nil
	// lastProgress is when the window last saw progress, in real time.
	lastProgress time.Time

	// Health as last judged.
	status     string
	confidence float64
	diagnosis  string
	finding    *stuck.Finding
	tier       int
	lastCheck  time.Time
	recorded   string // status|check|ladder last recorded as an event

	// The ladder.
	findingAt int // progress count when the finding was made
	rung      rung
	unheeded  int
	nudgeInj  int64 // the last nudge's injection id, 0 when none waits
	// waitFrom is the task's tool-call count when the last action took
	// effect (its nudge was read, its escalation asked); -1 while a
	// nudge waits to be read.
	waitFrom  int
	escalated bool
	// held is set while the task is stopped by its user's hand (paused,
	// or waiting for an answer): its next run starts a fresh ladder.
	held bool

	judging    bool
	judgedRung rung // the rung tier 2 was last asked about a finding at; -1 none
	lastJudge  time.Time
}

// New returns a Watcher.
func New(o Options) *Watcher {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Config.Interval <= 0 {
		o.Config.Interval = 5 * time.Second
	}
	o.Config.Nudges = max(o.Config.Nudges, 1)
	o.Config.StepsToHeed = max(o.Config.StepsToHeed, 1)
	log := o.Logger.With("component", "watcher")
	w := &Watcher{o: o, cfg: o.Config, log: log, tasks: map[task.ID]*watched{},
		rt: supervisor.New(supervisor.Options{Name: "the watcher", Logger: log, Now: o.Now}), deg: supervisor.NewDegraded(o.Now)}
	w.st.Enabled = o.Config.Enabled
	w.st.Tier1 = map[string]uint64{}
	if o.Judge == nil && o.Config.Tier2 {
		w.deg.Set("no model for the watcher persona") // asked for and not available
	}
	return w
}

// Run supervises until ctx ends. A panic in the loop itself is recovered,
// counted and the loop restarted; it returns nil when ctx ends, after the
// judgements in flight are done.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.cfg.Enabled {
		<-ctx.Done()
		return nil
	}
	return w.rt.Run(ctx, w.loop)
}

// loop follows the bus and the clock until ctx ends. A restarted loop
// starts live: adopt finds the live tasks it has no window for.
func (w *Watcher) loop(ctx context.Context) {
	evs, stop := w.rt.Follow(ctx, w.o.Bus, w.o.Store, event.Filter{Kinds: []string{"agent", string(event.KindTaskStatus)}})
	defer stop()
	w.adopt(ctx)
	tick := time.NewTicker(w.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-evs:
			if !ok {
				return
			}
			w.observe(ctx, e)
		case fn := <-w.rt.Results():
			fn(ctx) // a judgement's reply; it guards its task itself
		case now := <-tick.C:
			w.cycle(ctx, now)
		}
	}
}

func (w *Watcher) newWatched(t task.Task) *watched {
	now := w.o.Now()
	return &watched{t: t, d: stuck.New(w.cfg.Stuck, t.Worktree, now), running: t.Status == task.Running, state: t.Status,
		started: now, status: "healthy", lastCheck: now, judgedRung: -1, lastProgress: now}
}

// observe feeds one event to its task's window and acts on what it finds.
func (w *Watcher) observe(ctx context.Context, e event.Event) {
	if e.TaskID == "" {
		return
	}
	w.mu.Lock()
	w.st.Observations++
	wt := w.tasks[e.TaskID]
	w.mu.Unlock()
	ts, isStatus := e.Payload.(event.TaskStatus)
	if isStatus && ts.To.Terminal() {
		w.mu.Lock()
		delete(w.tasks, e.TaskID)
		w.mu.Unlock()
		return
	}
	if wt == nil {
		// First seen: it starts, or it was running before the Watcher
		// (re)started.
		if !(isStatus && ts.To == task.Running) && !isObservation(e) {
			return
		}
		t, err := w.o.Store.GetTask(ctx, e.TaskID)
		if err != nil || t.Status.Terminal() {
			return
		}
		wt = w.newWatched(t)
		w.mu.Lock()
		w.tasks[e.TaskID] = wt
		w.mu.Unlock()
	}
	if e.ID != 0 && e.ID <= wt.replayedTo {
		return // replayed into its window at start
	}
	if wt.t.NoSupervision {
		return
	}
	w.guard(e.TaskID, func(wt *watched) { w.step(ctx, wt, e) })
}

func isObservation(e event.Event) bool {
	switch e.Payload.(type) {
	case event.ToolCall, event.ToolResult, event.Text, event.TurnStarted, event.TurnEnded, event.Usage, event.FileChanged, event.ModelError:
		return true
	}
	return false
}

// guard runs fn on a task's state under the lock, recovering a panic: the
// task's window is dropped (it starts afresh) and the others go on.
func (w *Watcher) guard(id task.ID, fn func(*watched)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt := w.tasks[id]
	if wt == nil {
		return
	}
	if w.rt.Safely(func() { fn(wt) }, "evaluating a task panicked; its window starts afresh", "task", id) != nil {
		delete(w.tasks, id)
	}
}

// cycle runs the clock checks over every running task.
func (w *Watcher) cycle(ctx context.Context, now time.Time) {
	w.mu.Lock()
	w.st.Cycles++
	w.st.LastCycle = now.UTC()
	w.st.Watched = len(w.tasks)
	ids := make([]task.ID, 0, len(w.tasks))
	for id, wt := range w.tasks {
		if wt.running && !wt.t.NoSupervision {
			ids = append(ids, id)
		}
	}
	w.mu.Unlock()
	for _, id := range ids {
		w.guard(id, func(wt *watched) { w.tick(ctx, wt, now) })
	}
}

// Stats returns the Watcher's counters.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.st
	s.Tier1 = maps.Clone(w.st.Tier1)
	rs, d := w.rt.Stats(), w.deg.State()
	s.Running, s.Started, s.Restarts, s.Panics = rs.Running, rs.Started, rs.Restarts, rs.Panics
	s.Degraded, s.DegradedReason, s.DegradedSecs, s.Tier2Failures = d.On, d.Reason, d.Secs, d.Failures
	s.Watched = len(w.tasks)
	return s
}

// Spent adds a judgement's cost to the stats (ModelJudge.Spent).
func (w *Watcher) Spent(_ task.ID, u llm.Usage, usd float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.st.Tier2Tokens += u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
	w.st.Tier2USD += usd
}

// Health returns the Watcher's view of a task; ok is false when it does
// not watch it.
func (w *Watcher) Health(id task.ID) (Health, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt := w.tasks[id]
	if wt == nil {
		return Health{}, false
	}
	return wt.health(w.o.Now()), true
}

// HealthAll returns the Watcher's view of every task it watches.
func (w *Watcher) HealthAll() []Health {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Health, 0, len(w.tasks))
	now := w.o.Now()
	for _, wt := range w.tasks {
		out = append(out, wt.health(now))
	}
	return out
}

func (wt *watched) health(now time.Time) Health {
	c := wt.d.Counters()
	h := Health{TaskID: wt.t.ID, State: string(wt.state), Status: wt.status, Confidence: wt.confidence, Diagnosis: wt.diagnosis,
		Tier: wt.tier, Ladder: wt.rung.String(), Unheeded: wt.unheeded, LastCheck: wt.lastCheck.UTC(),
		Steps: c.Steps, StepsSinceProgress: c.StepsSinceProgress, TokensSinceProgress: c.TokensSinceProgress,
		USDSinceProgress: c.USDSinceProgress, LastProgress: wt.lastProgress.UTC()}
	if f := wt.finding; f != nil {
		h.Check, h.Evidence = string(f.Check), f.Evidence
	}
	switch {
	case wt.t.NoSupervision:
		h.Status = "unsupervised"
	case !wt.running:
		// Not running: nothing to judge. Its state is its status; what
		// was last found stays in the diagnosis and the ladder.
		h.Status, h.Confidence = string(wt.state), 0
	}
	if m := wt.model; m != nil && wt.running {
		h.Model = &ModelCall{Turn: m.turn, Since: m.since.UTC(), WaitingSecs: max(0, now.Sub(m.since).Seconds()),
			Attempt: m.attempt, MaxAttempts: m.max, LastError: m.lastErr}
	}
	h.Activity = activity(h)
	return h
}

// record appends events; a failure is logged (the action was taken).
func (w *Watcher) record(ctx context.Context, id task.ID, p event.Payload) {
	if _, err := w.o.Store.AppendEvents(ctx, event.New(w.o.Now(), id, p)); err != nil && ctx.Err() == nil {
		w.log.Warn("recording a watcher event", "task", id, "kind", p.EventKind(), "err", err)
	}
}

// setDegraded turns degraded mode (tier 1 alone) on, counting a failed
// judgement, or off.
func (w *Watcher) setDegraded(on bool, reason string) {
	switch {
	case on && w.deg.Fail(reason):
		w.log.Warn("tier 2 unavailable; supervising on tier 1 alone", "reason", reason)
	case !on && w.deg.Recover():
		w.log.Info("tier 2 is back")
	}
}
