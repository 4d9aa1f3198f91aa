// Package executor runs tasks. It schedules queued tasks under a global
// concurrency cap, most urgent priority first and honouring dependencies;
// hands each to its engine with a Host (package engine) that stores the
// run's progress, charges the cost ledger and enforces budgets; and is the
// one door for injections (Inject): nudges, sync messages, rebase notices,
// interjections, user messages and pauses all enter a task's durable queue
// here and reach the engine at its next turn boundary, the urgent ones
// interrupting the turn in flight.
//
// Every run is a goroutine owned by the executor: started by the scheduler,
// stopped through its context, joined before Run returns. Pause is a real
// state: the engine stops at its next boundary keeping its conversation, and
// resume continues from it. So is recovery: a task that was running when the
// daemon stopped (or died) is queued with resume_pending and its next run
// continues from its last stored turn.
package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Config holds the executor's settings (from the config file).
type Config struct {
	// MaxConcurrent caps running tasks; zero means 4.
	MaxConcurrent int
	// DefaultEngine runs tasks that name none; empty means "native".
	DefaultEngine string
	// MaxIterations is a task's model-call budget when its own is zero.
	MaxIterations int
	// TaskUSD is a task's cost budget when its own is zero; DailyUSD and
	// FleetUSD cap all tasks per UTC day and over the whole ledger. Zero
	// means no cap.
	TaskUSD, DailyUSD, FleetUSD float64
	// ToolTimeout is the longest a tool call may run by its own timeout
	// (agent.max_bash_timeout_secs): while one runs, a run's idle
	// timeout waits at least that long (lifecycle.go).
	ToolTimeout time.Duration
}

// Tasks is what the executor reads and changes of tasks: the task table,
// whether a task's blockers let it run, and its injection queue.
type Tasks interface {
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	UpdateTask(ctx context.Context, id task.ID, m store.Mutation) (task.Task, []event.Event, error)
	ListSummaries(ctx context.Context, opts store.ListOptions) ([]task.Summary, error)
	Readiness(ctx context.Context, id task.ID) (task.Readiness, error)
	// The injection queue (store.InjectionQueue), but for what the
	// executor never reads back (Returned).
	Enqueue(ctx context.Context, inj inject.Injection, record func(inject.Injection) []event.Event) (inject.Injection, []event.Event, error)
	EnqueueMany(ctx context.Context, injs []inject.Injection, record func(i int, stored inject.Injection) []event.Event, evs ...event.Event) ([]store.Enqueued, []event.Event, error)
	Pending(ctx context.Context, id task.ID) ([]inject.Injection, error)
	MarkDelivered(ctx context.Context, ids []int64, at time.Time, evs ...event.Event) ([]event.Event, error)
}

// Runs is what a task's run records and is held to: its conversation,
// committed step by step, its events, the cost ledger the budgets read and
// the learnings it reports.
type Runs interface {
	store.Runs
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
	EmitEvents(ctx context.Context, evs ...event.Event) error
	Spent(ctx context.Context, since time.Time) (float64, error)
	RecordLearning(ctx context.Context, l store.Learning, record func(store.Learning) []event.Event) (store.Learning, []event.Event, error)
}

// Options wires an Executor.
type Options struct {
	// Tasks and Runs are the store (two roles of it).
	Tasks   Tasks
	Runs    Runs
	Bus     *event.Bus
	Engines []engine.Engine
	Config  Config
	Logger  *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Workspace prepares the directory a task works in (its worktree) and
	// the extra environment its commands get; nil means the task's
	// worktree, else its repository, as they are. An error pauses the task
	// with the error as its reason.
	Workspace func(ctx context.Context, t task.Task) (Workspace, error)
	// Complete finishes a task whose engine completed with summary: it
	// commits the work, enqueues it for merge and moves the task on (to
	// merging, or completed). It returns false when it did not move the
	// task; the executor then moves it to completed. Nil means the
	// executor always does.
	Complete func(ctx context.Context, id task.ID, summary string) bool
	// Rebase performs a blocking rebase request (a rebase injection with
	// urgency inject.Blocking) at the task's turn boundary, while none of its
	// tools runs, and says what to tell the task. Nil leaves such requests
	// to be shown to the model as they are.
	Rebase func(ctx context.Context, t task.Task, req inject.Injection) RebaseReply
	// Personas gives tasks their persona: chosen when a task first starts,
	// changed by Escalate. Nil leaves tasks as they were created.
	Personas Personas
	// FullRetry is the first wait before a write that found the data disk
	// full (store.ErrFull) is tried again; the waits double up to 30 times
	// it. Zero means a second.
	FullRetry time.Duration
	// Brief is called when a task starts for the first time (its
	// conversation is empty), after its persona and worktree and before
	// its engine runs: what it queues for the task (the knowledge store's
	// relevant learnings) is in its first context. Nil briefs nobody.
	Brief func(ctx context.Context, t task.Task)
	// Procs records the processes tasks' commands start, so that what a
	// run leaves is stopped when it ends and what a dead daemon left is
	// found at the next start (StopLeftovers). Nil tracks nothing.
	Procs *proc.Tracker
	// Manifest evaluates the sandbox manifest of a task that has none
	// (its first start), given the environment its commands get; the
	// executor stores it with the task and holds its runs to its
	// timeouts (lifecycle.go). Nil gives tasks no manifest and no
	// timeouts.
	Manifest func(ctx context.Context, t task.Task, env []string) lifecycle.Evaluation
}

// RebaseReply is the outcome of a blocking rebase, for the task.
type RebaseReply struct {
	// Text tells the model what happened.
	Text string
	// Outcome is the rebase's (rebased, up_to_date, conflict, failed); ""
	// is inject.Done. The model sees it with the request's attributes.
	Outcome inject.Outcome
	// Pause, when set, pauses the task with this reason after the rebase
	// (a conflict, with on_conflict: pause).
	Pause string
}

// Workspace is where a task runs.
type Workspace struct {
	Dir string
	// Branch is the branch checked out in Dir, as the worktree record
	// says; "" when Dir is no task worktree.
	Branch string
	Env    []string
}

// Executor runs tasks. Its methods are safe for concurrent use.
type Executor struct {
	st       Tasks
	runSt    Runs
	bus      *event.Bus
	engines  map[string]engine.Engine
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	dir      func(ctx context.Context, t task.Task) (Workspace, error)
	complete func(ctx context.Context, id task.ID, summary string) bool
	rebase   func(ctx context.Context, t task.Task, req inject.Injection) RebaseReply
	personas Personas
	brief    func(ctx context.Context, t task.Task)
	procs    *proc.Tracker
	manifest func(ctx context.Context, t task.Task, env []string) lifecycle.Evaluation

	kick  chan struct{}
	spend *spend
	quit  chan struct{} // closed when the executor stops: writes stop retrying

	fullRetry time.Duration
	full      diskFull // guarded by mu

	mu       sync.Mutex
	runs     map[task.ID]*run
	stopped  bool
	wg       sync.WaitGroup
	halted   string            // why dispatching is held (a spent budget); "" when not
	notReady map[string]string // engines with queued tasks that cannot run, and why

	hooks hooks
}

// run is one task's engine run.
type run struct {
	id         task.ID
	cancel     context.CancelCauseFunc
	interrupts chan struct{}
	// arrivals is signalled for every message stored for the task while
	// it runs (Host.Arrivals).
	arrivals chan struct{}
	// loud holds the IDs of the messages that arrived for the task while
	// the run was registered and that wake a waiting task (not quiet);
	// guarded by the executor's mu. A run that ends waiting wakes the
	// task for those of them still undelivered: a message arriving as the
	// run ends found it registered and woke nothing itself.
	loud []int64
}

// hooks hold a run at the points where it races with messages; tests set
// them, nil in the daemon.
type hooks struct {
	// finished is called after a run's end is recorded (to is the status
	// finish moved the task to), while the run is still registered.
	finished func(id task.ID, to task.Status)
	// waking is called by a wake after it found the task waiting with a
	// loud message pending, before it stores the move to queued.
	waking func(id task.ID)
	// ended is called last in a run's goroutine.
	ended func(id task.ID)
}

// Causes of a run's end that the executor itself sets.
var (
	errShutdown  = errors.New("the daemon is stopping")
	errCancelled = errors.New("the task was cancelled")
)

// New returns an executor; Run starts it.
func New(o Options) *Executor {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Config.MaxConcurrent <= 0 {
		o.Config.MaxConcurrent = 4
	}
	if o.Config.DefaultEngine == "" {
		o.Config.DefaultEngine = "native"
	}
	if o.Workspace == nil {
		o.Workspace = defaultWorkspace
	}
	if o.FullRetry <= 0 {
		o.FullRetry = time.Second
	}
	e := &Executor{
		st: o.Tasks, runSt: o.Runs, bus: o.Bus, cfg: o.Config, now: o.Now, dir: o.Workspace, complete: o.Complete, rebase: o.Rebase, personas: o.Personas, brief: o.Brief, procs: o.Procs, manifest: o.Manifest,
		log:     o.Logger.With("component", "executor"),
		engines: map[string]engine.Engine{},
		kick:    make(chan struct{}, 1),
		runs:    map[task.ID]*run{},
		quit:    make(chan struct{}),

		fullRetry: o.FullRetry,
	}
	for _, en := range o.Engines {
		e.engines[en.Name()] = en
	}
	return e
}

func defaultWorkspace(_ context.Context, t task.Task) (Workspace, error) {
	switch {
	case t.Worktree != "":
		return Workspace{Dir: t.Worktree}, nil
	case t.Repo != "":
		return Workspace{Dir: t.Repo}, nil
	}
	return Workspace{}, errors.New("the task has no repository; create it with --repo")
}

// Run schedules tasks until ctx ends, then stops every run (each task goes
// back to queued, marked to resume) and returns once all are joined.
func (e *Executor) Run(ctx context.Context) error {
	total, err := e.runSt.Spent(ctx, time.Time{})
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return fmt.Errorf("reading the cost ledger: %w", err)
	}
	day := dayStart(e.now())
	today, err := e.runSt.Spent(ctx, day)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("reading the cost ledger: %w", err)
	}
	e.spend = &spend{total: total, day: day, today: today}

	// Wake the scheduler on every change of a task's life. The pump is
	// joined before Run returns. It subscribes here, before the first look
	// below: a task created between that look and a subscription made later
	// would wait for the ticker.
	var pump sync.WaitGroup
	pumpCtx, stopPump := context.WithCancel(ctx)
	sub := e.bus.Subscribe(event.Filter{Kinds: []string{"task"}})
	pump.Go(func() { e.pump(pumpCtx, sub) })
	defer func() {
		stopPump()
		pump.Wait()
	}()

	e.Kick()
	tick := time.NewTicker(30 * time.Second) // budgets change with the day
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			e.stopAll()
			return nil
		case <-e.kick:
		case <-tick.C:
			// Orphans of tasks' commands (and of git) that the daemon
			// adopted as their subreaper and that have exited.
			e.procs.Reap()
		}
		if err := e.dispatch(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("dispatching tasks", "err", err)
		}
	}
}

// pump kicks the scheduler for every event on sub, until ctx ends or the
// bus closes; it closes sub.
func (e *Executor) pump(ctx context.Context, sub *event.Subscription) {
	defer func() { sub.Close() }()
	for {
		if _, err := sub.Next(ctx); err != nil {
			if !errors.Is(err, event.ErrLagged) {
				return // done, or the bus closed
			}
			// Lagged: only wake-ups were lost. Subscribe again before the
			// kick, so that the look it asks for misses nothing.
			sub.Close()
			sub = e.bus.Subscribe(event.Filter{Kinds: []string{"task"}})
		}
		e.Kick()
	}
}

// Kick asks the scheduler to look for work. It never blocks.
func (e *Executor) Kick() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// stopAll stops every run and waits for them.
func (e *Executor) stopAll() {
	e.mu.Lock()
	if !e.stopped {
		close(e.quit)
	}
	e.stopped = true
	for _, r := range e.runs {
		r.cancel(errShutdown)
	}
	e.mu.Unlock()
	e.wg.Wait()
}

// Running returns the IDs of the tasks running now.
func (e *Executor) Running() []task.ID {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]task.ID, 0, len(e.runs))
	for id := range e.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// dispatch starts queued tasks that are ready, while slots are free.
func (e *Executor) dispatch(ctx context.Context) error {
	e.mu.Lock()
	free := e.cfg.MaxConcurrent - len(e.runs)
	stopped := e.stopped
	e.mu.Unlock()
	if free <= 0 || stopped {
		return nil
	}
	if reason := e.spend.over(e.cfg, e.now()); reason != "" {
		e.hold(reason)
		return nil
	}
	e.hold("")
	// The queue is read from the listing columns: decoding every queued
	// task at each dispatch grew with the queue.
	queued, err := e.st.ListSummaries(ctx, store.ListOptions{Statuses: []task.Status{task.Queued}})
	if err != nil {
		return err
	}
	slices.SortStableFunc(queued, func(a, b task.Summary) int { return cmp.Compare(a.Priority, b.Priority) })
	notReady := map[string]string{}
	defer func() { e.setNotReady(notReady) }()
	for _, t := range queued {
		if free == 0 {
			break
		}
		if e.isRunning(t.ID) {
			continue
		}
		if en, ok := e.engines[cmp.Or(t.Engine, e.cfg.DefaultEngine)]; ok {
			if err := en.Ready(); err != nil {
				notReady[en.Name()] = err.Error()
				continue
			}
		}
		r, err := e.st.Readiness(ctx, t.ID)
		if err != nil {
			return err
		}
		if r != task.Ready {
			continue
		}
		// start reads the task again as it moves it to running.
		if e.start(ctx, task.Task{ID: t.ID, Engine: t.Engine, ResumePending: t.ResumePending}) {
			free--
		}
	}
	return nil
}

// hold records why dispatching is held, logging changes.
func (e *Executor) hold(reason string) {
	e.mu.Lock()
	changed := e.halted != reason
	e.halted = reason
	e.mu.Unlock()
	if changed && reason != "" {
		e.log.Warn("dispatching held", "reason", reason)
	} else if changed {
		e.log.Info("dispatching resumed")
	}
}

// Held returns why dispatching is held, or "": a spent budget, or engines
// that are not ready while tasks wait for them.
func (e *Executor) Held() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	reasons := []string{}
	if why := e.full.held(); why != "" {
		reasons = append(reasons, why)
	}
	if e.halted != "" {
		reasons = append(reasons, e.halted)
	}
	for _, name := range slices.Sorted(maps.Keys(e.notReady)) {
		reasons = append(reasons, fmt.Sprintf("engine %s is not ready: %s", name, e.notReady[name]))
	}
	return strings.Join(reasons, "; ")
}

// setNotReady records the engines found not ready, logging changes.
func (e *Executor) setNotReady(m map[string]string) {
	e.mu.Lock()
	old := e.notReady
	e.notReady = m
	e.mu.Unlock()
	for name, why := range m {
		if old[name] != why {
			e.log.Warn("tasks wait: their engine is not ready", "engine", name, "reason", why)
		}
	}
}

func (e *Executor) isRunning(id task.ID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[id] != nil
}

// start moves t to running and starts its engine. It reports whether a run
// started.
func (e *Executor) start(ctx context.Context, t task.Task) bool {
	name := cmp.Or(t.Engine, e.cfg.DefaultEngine)
	en, ok := e.engines[name]
	if !ok {
		e.finishEarly(ctx, t.ID, task.Failed, fmt.Sprintf("unknown engine %q; engines: %s", name, strings.Join(e.engineNames(), ", ")))
		return false
	}
	now := e.now()
	reason := "started"
	if t.ResumePending {
		reason = "resumed after a daemon restart"
	}
	move := store.Transition(task.Running, reason, now)
	// Not abandoned when ctx ends: a write the store commits after the
	// caller gave up would leave a task running with no run.
	uctx, cancelUpdate := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancelUpdate()
	t, _, err := e.st.UpdateTask(uctx, t.ID, func(t *task.Task) ([]event.Event, error) {
		evs, err := move(t)
		if err != nil {
			return nil, err
		}
		t.ResumePending = false
		if t.StartedAt == nil {
			t.StartedAt = &now
		}
		return evs, nil
	})
	if err != nil {
		var te *task.TransitionError
		if !errors.As(err, &te) {
			e.log.Error("starting a task", "task_id", t.ID, "err", err)
		}
		return false
	}
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		e.requeue(t.ID, "the daemon is stopping")
		return false
	}
	// The commands the run starts are recorded as the task's.
	runCtx, cancel := context.WithCancelCause(proc.WithOwner(context.WithoutCancel(ctx), e.procs, string(t.ID)))
	r := &run{id: t.ID, cancel: cancel, interrupts: make(chan struct{}, 1), arrivals: make(chan struct{}, 1)}
	e.runs[t.ID] = r
	e.wg.Add(1)
	e.mu.Unlock()
	// A cancel between the move to running and the registration above did
	// not find the run to stop: look again now that it can be found.
	if cur, err := e.st.GetTask(ctx, t.ID); err == nil && cur.Status != task.Running {
		cancel(errCancelled)
	}
	go func() {
		defer e.wg.Done()
		defer cancel(nil)
		// The workspace is prepared in the run, not by the dispatcher: making
		// a worktree and running its setup may take a while.
		var out engine.Outcome
		ws, err := e.prepare(runCtx, &t)
		if err != nil {
			out = engine.Outcome{Status: engine.Paused, Reason: "preparing its worktree: " + err.Error()}
			if runCtx.Err() != nil {
				out = engine.Outcome{Status: engine.Stopped, Reason: err.Error()}
			}
		} else {
			e.log.Info("task started", "task_id", t.ID, "engine", name, "dir", ws.Dir)
			if e.brief != nil {
				if n, err := e.runSt.ConversationLen(runCtx, t.ID); err == nil && n == 0 {
					e.brief(runCtx, t)
				}
			}
			t = e.evaluate(runCtx, t, ws)
			h, mon := e.startMonitor(runCtx, cancel, t, name, ws, e.newHost(t, r))
			out = e.safeRun(runCtx, en, engine.Run{Task: t, Dir: ws.Dir, Branch: ws.Branch, Env: ws.Env, Host: h})
			mon.end()
			out = e.timedOut(t.ID, out, context.Cause(runCtx))
		}
		sctx, cancelStop := context.WithTimeout(context.Background(), finishTimeout)
		e.stopTaskProcs(sctx, t.ID)
		cancelStop()
		to := e.finish(t.ID, out, context.Cause(runCtx))
		if e.hooks.finished != nil {
			e.hooks.finished(t.ID, to)
		}
		e.mu.Lock()
		if e.runs[t.ID] == r {
			delete(e.runs, t.ID)
		}
		loud := r.loud
		r.loud = nil
		e.mu.Unlock()
		if to == task.Waiting && len(loud) > 0 {
			// A loud message that arrived while the run was ending found
			// the run still registered and woke nothing; one that arrives
			// from now on finds it gone, and wakes the task itself. Quiet
			// ones leave it waiting, whenever they came.
			ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
			e.wake(ctx, t.ID, loud)
			cancel()
		}
		if e.hooks.ended != nil {
			e.hooks.ended(t.ID)
		}
		e.Kick()
	}()
	return true
}

func dayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
