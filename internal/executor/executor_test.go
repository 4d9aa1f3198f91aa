package executor

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// fakeEngine runs fn for every run; it stands for any engine.
type fakeEngine struct {
	fn    func(ctx context.Context, r engine.Run) engine.Outcome
	ready func() error
}

func (f *fakeEngine) Name() string { return "fake" }
func (f *fakeEngine) Ready() error {
	if f.ready != nil {
		return f.ready()
	}
	return nil
}
func (f *fakeEngine) Run(ctx context.Context, r engine.Run) engine.Outcome {
	return f.fn(ctx, r)
}

type env struct {
	t   *testing.T
	st  *sqlite.Store
	bus *event.Bus
	ctl creator
	ex  *Executor
	dir string

	cancel context.CancelFunc
	done   chan error
}

func newExecEnv(t *testing.T, cfg Config, fn func(ctx context.Context, r engine.Run) engine.Outcome) *env {
	t.Helper()
	var bus *event.Bus
	st := testkit.OpenStore(t, sqlite.Options{Publish: func(evs ...event.Event) { bus.Publish(evs...) }})
	bus = event.NewBus(event.Options{Buffer: 1024}, 0)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.DefaultEngine = "fake"
	e := &env{t: t, st: st, bus: bus, dir: t.TempDir(),
		ctl: creator{st: st, engine: "fake"}}
	e.ex = New(Options{Tasks: st, Runs: st, Bus: bus, Engines: []engine.Engine{&fakeEngine{fn: fn}}, Config: cfg, Logger: log,
		FullRetry: 2 * time.Millisecond})
	t.Cleanup(func() {
		e.stop()
		bus.Close()
	})
	return e
}

func (e *env) start() {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan error, 1)
	go func() { e.done <- e.ex.Run(ctx) }()
}

func (e *env) stop() {
	if e.cancel == nil {
		return
	}
	e.cancel()
	if err := <-e.done; err != nil {
		e.t.Errorf("executor Run: %v", err)
	}
	e.cancel = nil
}

func (e *env) create(desc string, prio int) task.Task {
	e.t.Helper()
	tk, err := e.ctl.Create(context.Background(), task.Spec{Description: desc, Priority: prio, Repo: e.dir})
	if err != nil {
		e.t.Fatal(err)
	}
	return tk
}

func (e *env) get(id task.ID) task.Task {
	e.t.Helper()
	tk, err := e.st.GetTask(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return tk
}

// waitStatus waits until the task reaches status s.
func (e *env) waitStatus(id task.ID, s task.Status) task.Task {
	e.t.Helper()
	return e.waitTask(id, string(s), func(tk task.Task) bool { return tk.Status == s })
}

// waitTask waits until the stored task satisfies cond, looking again after
// each of its events.
func (e *env) waitTask(id task.ID, what string, cond func(task.Task) bool) task.Task {
	e.t.Helper()
	var tk task.Task
	if !testkit.WaitOnBus(e.bus, event.Filter{TaskID: id}, func() bool { tk = e.get(id); return cond(tk) }) {
		e.t.Fatalf("task %s is %s (%s), want %s", id, tk.Status, tk.CloseReason, what)
	}
	return tk
}

// boundaries loops like an engine: at every boundary it delivers what waits
// (stopping on a pause), then calls step; step returning a non-nil outcome
// ends the run.
func boundaries(ctx context.Context, r engine.Run, step func(injs []inject.Injection) *engine.Outcome) engine.Outcome {
	for turn := 1; ; turn++ {
		if ctx.Err() != nil {
			return engine.Outcome{Status: engine.Stopped}
		}
		if _, err := r.Host.Prepare(ctx); err != nil {
			return engine.Outcome{Status: engine.Stopped}
		}
		inbox, err := r.Host.Inbox(ctx)
		if err != nil {
			return engine.Outcome{Status: engine.Stopped}
		}
		for _, inj := range inbox {
			if inj.Kind == inject.Pause {
				if _, err := r.Host.Commit(ctx, engine.Step{Turn: turn, Delivered: []inject.Injection{inj}}); err != nil {
					return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
				}
				return engine.Outcome{Status: engine.Paused, Reason: inj.Text}
			}
		}
		if len(inbox) > 0 {
			msg := llm.UserText(engine.Render(inbox[0]))
			if _, err := r.Host.Commit(ctx, engine.Step{Turn: turn, Messages: []llm.Message{msg}, Delivered: inbox}); err != nil {
				return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
			}
		}
		if out := step(inbox); out != nil {
			return *out
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// deliverAll takes everything waiting in the run's queue as delivered, as
// an engine does when it shows its inbox to the model.
func deliverAll(ctx context.Context, r engine.Run) error {
	inbox, err := r.Host.Inbox(ctx)
	if err != nil || len(inbox) == 0 {
		return err
	}
	_, err = r.Host.Commit(ctx, engine.Step{Delivered: inbox})
	return err
}

func TestConcurrencyCapAndPriority(t *testing.T) {
	var (
		mu      sync.Mutex
		running int
		peak    int
		order   []string
	)
	release, started := make(chan struct{}), make(chan string, 5)
	e := newExecEnv(t, Config{MaxConcurrent: 2}, func(ctx context.Context, r engine.Run) engine.Outcome {
		mu.Lock()
		running++
		peak = max(peak, running)
		order = append(order, r.Task.Description)
		mu.Unlock()
		started <- r.Task.Description
		select {
		case <-release:
		case <-ctx.Done():
		}
		mu.Lock()
		running--
		mu.Unlock()
		return engine.Outcome{Status: engine.Completed, Reason: "done"}
	})
	var ids []task.ID
	for _, p := range []int{4, 3, 0, 2, 1} {
		ids = append(ids, e.create("p"+string(rune('0'+p)), p).ID)
	}
	e.start()
	// The first two start together; the rest as slots free up.
	var first []string
	for len(first) < 2 {
		select {
		case d := <-started:
			first = append(first, d)
		case <-time.After(testkit.WaitLimit):
			t.Fatalf("only %v started", first)
		}
	}
	close(release)
	for _, id := range ids {
		e.waitStatus(id, task.Completed)
	}
	if peak > 2 {
		t.Errorf("%d tasks ran at once, cap 2", peak)
	}
	if len(first) != 2 || !slices.Contains(first, "p0") || !slices.Contains(first, "p1") {
		t.Errorf("first started %v (all: %v), want the two most urgent first", first, order)
	}
}

func TestDependenciesHoldDispatch(t *testing.T) {
	var mu sync.Mutex
	var order []string
	e := newExecEnv(t, Config{MaxConcurrent: 4}, func(ctx context.Context, r engine.Run) engine.Outcome {
		mu.Lock()
		order = append(order, r.Task.Description)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		return engine.Outcome{Status: engine.Completed}
	})
	a := e.create("first", 2)
	b := e.create("second", 0)
	if _, err := e.ctl.Depend(context.Background(), string(b.ID), string(a.ID)); err != nil {
		t.Fatal(err)
	}
	e.start()
	e.waitStatus(b.ID, task.Completed)
	if !slices.Equal(order, []string{"first", "second"}) {
		t.Errorf("order %v: the blocked task ran before its blocker finished", order)
	}
}

func TestPauseResumeContinues(t *testing.T) {
	runs := 0
	var mu sync.Mutex
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		mu.Lock()
		runs++
		n := runs
		mu.Unlock()
		return boundaries(ctx, r, func([]inject.Injection) *engine.Outcome {
			if n >= 2 {
				return &engine.Outcome{Status: engine.Completed, Reason: "finished after resume"}
			}
			return nil
		})
	})
	tk := e.create("long job", 2)
	e.start()
	e.waitStatus(tk.ID, task.Running)
	got, err := e.ex.Pause(context.Background(), tk.ID, "coffee")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != task.Running {
		t.Logf("pause returned %s", got.Status)
	}
	paused := e.waitStatus(tk.ID, task.Paused)
	if paused.CloseReason != "coffee" {
		t.Errorf("pause reason %q", paused.CloseReason)
	}
	if _, err := e.ex.Resume(context.Background(), tk.ID, ""); err != nil {
		t.Fatal(err)
	}
	done := e.waitStatus(tk.ID, task.Completed)
	if done.CloseReason != "finished after resume" {
		t.Errorf("reason %q", done.CloseReason)
	}
	pending, _ := e.st.Pending(context.Background(), tk.ID)
	if len(pending) != 0 {
		t.Errorf("%d injections left undelivered", len(pending))
	}
}

func TestPauseQueuedTaskAtOnce(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		return engine.Outcome{Status: engine.Completed}
	})
	tk := e.create("not yet", 2)
	got, err := e.ex.Pause(context.Background(), tk.ID, "hold it")
	if err != nil || got.Status != task.Paused {
		t.Fatalf("Pause = %v, %v; want paused at once", got.Status, err)
	}
}

func TestCancelStopsRun(t *testing.T) {
	stopped := make(chan struct{})
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		<-ctx.Done()
		close(stopped)
		return engine.Outcome{Status: engine.Stopped}
	})
	tk := e.create("forever", 2)
	e.start()
	e.waitStatus(tk.ID, task.Running)
	if _, err := e.ex.Cancel(context.Background(), tk.ID, "wrong idea"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the run was not stopped")
	}
	testkit.WaitFor(t, "the run to end", func() bool { return len(e.ex.Running()) == 0 })
	if got := e.get(tk.ID); got.Status != task.Cancelled || got.CloseReason != "wrong idea" {
		t.Errorf("task is %s (%s)", got.Status, got.CloseReason)
	}
}

func TestWaitingTaskWokenByMessage(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		inbox, _ := r.Host.Inbox(ctx)
		if len(inbox) == 0 {
			return engine.Outcome{Status: engine.Waiting, Reason: "which file?"}
		}
		if _, err := r.Host.Commit(ctx, engine.Step{Messages: []llm.Message{llm.UserText(engine.Render(inbox[0]))}, Delivered: inbox}); err != nil {
			return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
		}
		return engine.Outcome{Status: engine.Completed, Reason: "answered: " + inbox[0].Text}
	})
	tk := e.create("ask first", 2)
	e.start()
	w := e.waitStatus(tk.ID, task.Waiting)
	if w.CloseReason != "which file?" {
		t.Errorf("waiting reason %q", w.CloseReason)
	}
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Message, Source: "user", Text: "main.go"}); err != nil {
		t.Fatal(err)
	}
	if got := e.waitStatus(tk.ID, task.Completed); got.CloseReason != "answered: main.go" {
		t.Errorf("reason %q", got.CloseReason)
	}
}

func TestUrgentInjectionSignalsRun(t *testing.T) {
	// The run is registered after the task is stored as running: an
	// urgent message in between has no turn to cut and waits for the
	// first boundary. The message goes in once the engine runs.
	entered := make(chan struct{})
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		close(entered)
		select {
		case <-r.Host.Interrupts():
			// Read as an engine does: a task ends with its queue read.
			if err := deliverAll(ctx, r); err != nil {
				return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
			}
			return engine.Outcome{Status: engine.Completed, Reason: "interrupted"}
		case <-ctx.Done():
			return engine.Outcome{Status: engine.Stopped}
		}
	})
	tk := e.create("busy", 2)
	e.start()
	<-entered
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Nudge, Source: "watcher", Text: "look up", Urgent: true}); err != nil {
		t.Fatal(err)
	}
	if got := e.waitStatus(tk.ID, task.Completed); got.CloseReason != "interrupted" {
		t.Errorf("reason %q", got.CloseReason)
	}
}

func TestInjectValidates(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		return engine.Outcome{Status: engine.Completed}
	})
	tk := e.create("x", 2)
	var inv *task.InvalidError
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: "shout", Text: "hi"}); !errors.As(err, &inv) {
		t.Errorf("bad kind: %v", err)
	}
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Text: "  "}); !errors.As(err, &inv) {
		t.Errorf("empty text: %v", err)
	}
	if _, err := e.ex.Cancel(context.Background(), tk.ID, ""); err != nil {
		t.Fatal(err)
	}
	var fin *task.FinishedError
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Text: "hello"}); !errors.As(err, &fin) {
		t.Errorf("finished task: %v", err)
	}
}

func TestShutdownRequeuesRunningTasks(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		<-ctx.Done()
		return engine.Outcome{Status: engine.Stopped}
	})
	tk := e.create("long", 2)
	e.start()
	e.waitStatus(tk.ID, task.Running)
	e.stop()
	got := e.get(tk.ID)
	if got.Status != task.Queued || !got.ResumePending {
		t.Errorf("after shutdown the task is %s resume_pending=%v, want queued and marked", got.Status, got.ResumePending)
	}
}

func TestBudgetsPauseAndHoldDispatch(t *testing.T) {
	e := newExecEnv(t, Config{FleetUSD: 1}, func(ctx context.Context, r engine.Run) engine.Outcome {
		for turn := 1; ; turn++ {
			if stop := r.Host.Allow(ctx); stop != nil {
				return engine.Outcome{Status: stop.Status, Reason: stop.Reason}
			}
			_, err := r.Host.Commit(ctx, engine.Step{Turn: turn, Call: &engine.Call{Provider: "anthropic", Model: "m", CostUSD: 0.4,
				Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}})
			if err != nil {
				return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
			}
		}
	})
	a := e.create("spender", 2)
	e.start()
	got := e.waitStatus(a.ID, task.Paused)
	if got.Usage.Iterations != 3 || got.Usage.InputTokens != 30 {
		t.Errorf("usage %+v, want 3 calls before the $1 fleet budget stopped it", got.Usage)
	}
	b := e.create("next", 2)
	// Nothing signals that a task was not dispatched: give the scheduler,
	// which the creation woke, time to do it wrongly. A slow machine can
	// only make this pass when it should not, never fail when it should not.
	time.Sleep(100 * time.Millisecond)
	if s := e.get(b.ID).Status; s != task.Queued {
		t.Errorf("a task was dispatched over the fleet budget: %s", s)
	}
	if held := e.ex.Held(); held == "" {
		t.Error("Held() is empty while the fleet budget is spent")
	}
	rows, err := e.st.Costs(context.Background(), store.CostQuery{By: "task"})
	if err != nil || len(rows) != 1 || rows[0].Calls != 3 {
		t.Errorf("ledger by task = %+v, %v", rows, err)
	}
}

func TestTaskBudgetResumeGrantsMore(t *testing.T) {
	e := newExecEnv(t, Config{MaxIterations: 2}, func(ctx context.Context, r engine.Run) engine.Outcome {
		for turn := 1; turn < 100; turn++ {
			if stop := r.Host.Allow(ctx); stop != nil {
				return engine.Outcome{Status: stop.Status, Reason: stop.Reason}
			}
			if _, err := r.Host.Commit(ctx, engine.Step{Turn: turn, Call: &engine.Call{Model: "m"}}); err != nil {
				return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
			}
		}
		return engine.Outcome{Status: engine.Completed}
	})
	tk := e.create("bounded", 2)
	e.start()
	p := e.waitStatus(tk.ID, task.Paused)
	if p.Usage.Iterations != 2 {
		t.Fatalf("paused after %d calls, want 2: %s", p.Usage.Iterations, p.CloseReason)
	}
	if _, err := e.ex.Resume(context.Background(), tk.ID, ""); err != nil {
		t.Fatal(err)
	}
	p = e.waitTask(tk.ID, "paused after 4 calls", func(tk task.Task) bool { return tk.Status == task.Paused && tk.Usage.Iterations == 4 })
	if p.Budget.MaxIterations != 4 {
		t.Errorf("budget after resume %+v, want 4 calls", p.Budget)
	}
}

func TestEngineNotReadyKeepsTasksQueued(t *testing.T) {
	var mu sync.Mutex
	ready := errors.New("set ANTHROPIC_API_KEY")
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		return engine.Outcome{Status: engine.Completed}
	})
	e.ex.engines["fake"].(*fakeEngine).ready = func() error {
		mu.Lock()
		defer mu.Unlock()
		return ready
	}
	tk := e.create("needs a model", 2)
	e.start()
	testkit.WaitFor(t, "the dispatcher to hold", func() bool { return e.ex.Held() != "" })
	if held := e.ex.Held(); !strings.Contains(held, "engine fake is not ready: set ANTHROPIC_API_KEY") {
		t.Errorf("Held() = %q", held)
	}
	if s := e.get(tk.ID).Status; s != task.Queued {
		t.Errorf("task is %s, want it left queued", s)
	}
	mu.Lock()
	ready = nil
	mu.Unlock()
	e.ex.Kick()
	e.waitStatus(tk.ID, task.Completed)
}

func TestUnknownEngineFails(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		return engine.Outcome{Status: engine.Completed}
	})
	tk, err := e.ctl.Create(context.Background(), task.Spec{Description: "x", Engine: "nope", Repo: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	e.start()
	if got := e.waitStatus(tk.ID, task.Failed); got.CloseReason == "" {
		t.Error("no reason")
	}
}

func TestEnginePanicFailsTask(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome { panic("boom") })
	tk := e.create("x", 2)
	e.start()
	e.waitStatus(tk.ID, task.Failed)
}

// A reply sent the moment a task starts waiting must wake it, however the
// reply and the end of the run interleave.
func TestReplyRacingTheWaitIsNotLost(t *testing.T) {
	e := newExecEnv(t, Config{MaxConcurrent: 64}, func(ctx context.Context, r engine.Run) engine.Outcome {
		inbox, _ := r.Host.Inbox(ctx)
		if len(inbox) == 0 {
			return engine.Outcome{Status: engine.Waiting, Reason: "q"}
		}
		if _, err := r.Host.Commit(ctx, engine.Step{Messages: []llm.Message{llm.UserText("x")}, Delivered: inbox}); err != nil {
			return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
		}
		return engine.Outcome{Status: engine.Completed}
	})
	sub := e.bus.Subscribe(event.Filter{Kinds: []string{"task.status"}})
	defer sub.Close()
	e.start()
	const n = 400
	ids := make([]task.ID, n)
	for i := range ids {
		ids[i] = e.create("asks", 2).ID
	}
	var wg sync.WaitGroup
	for injected := 0; injected < n; {
		ev, err := sub.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if p := ev.Payload.(event.TaskStatus); p.From == task.Running && p.To == task.Waiting {
			id := ev.TaskID
			wg.Go(func() {
				if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: id, Text: "the answer"}); err != nil {
					t.Error(err)
				}
			})
			injected++
		}
	}
	wg.Wait()
	for _, id := range ids {
		e.waitStatus(id, task.Completed)
	}
}
