package supervise

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervisor/supervisortest"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// This file holds the Watcher's collaborators as small in-memory fakes and
// a harness that runs a real Watcher on a real event bus, fed the
// observations a native agent publishes.

var (
	_ Store   = (*fakeStore)(nil)
	_ Actions = (*supervisortest.Actions)(nil)
	_ Judge   = (*fakeJudge)(nil)
)

// fakeStore keeps tasks and the event log in memory. AppendEvents assigns
// IDs and publishes to the bus, as the real store's writer does, so that
// Follow sees every event exactly once.
type fakeStore struct {
	bus *event.Bus
	// panicList makes that many ListTasks calls panic (a crash of the
	// Watcher's loop itself).
	panicList atomic.Int32

	mu     sync.Mutex
	tasks  map[task.ID]task.Task // guarded by mu
	events []event.Event         // guarded by mu; IDs in order
	lastID int64                 // guarded by mu
}

func newFakeStore(bus *event.Bus) *fakeStore {
	return &fakeStore{bus: bus, tasks: map[task.ID]task.Task{}}
}

func (s *fakeStore) put(t task.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks[t.ID] = t
}

func (s *fakeStore) GetTask(_ context.Context, id task.ID) (task.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return task.Task{}, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return t, nil
}

func (s *fakeStore) ListTasks(_ context.Context, o store.ListOptions) ([]task.Task, error) {
	if s.panicList.Add(-1) >= 0 {
		panic("fake store: listing tasks blew up")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []task.Task
	for _, t := range s.tasks {
		if len(o.Statuses) == 0 || slices.Contains(o.Statuses, t.Status) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (s *fakeStore) ReadEvents(_ context.Context, q event.Query) ([]event.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []event.Event
	for _, e := range s.events {
		if e.ID > q.AfterID && q.Filter.Match(e) && (q.Limit == 0 || len(out) < q.Limit) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *fakeStore) AppendEvents(_ context.Context, evs ...event.Event) ([]event.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]event.Event, len(evs))
	for i, e := range evs {
		s.lastID++
		e.ID = s.lastID
		s.events = append(s.events, e)
		out[i] = e
	}
	s.bus.Publish(out...) // under mu: the bus wants logged events in ID order
	return out, nil
}

// recorded returns the watcher.* events recorded about a task.
func (s *fakeStore) recorded(id task.ID) []event.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []event.Event
	for _, e := range s.events {
		if e.TaskID == id && event.Matches("watcher", e.Kind) {
			out = append(out, e)
		}
	}
	return out
}

// recordedOf returns the payloads of type P recorded about a task.
func recordedOf[P event.Payload](s *fakeStore, id task.ID) []P {
	var out []P
	for _, e := range s.recorded(id) {
		if p, ok := e.Payload.(P); ok {
			out = append(out, p)
		}
	}
	return out
}

// fakeJudge is tier 2: fn answers call n (from 0).
type fakeJudge struct {
	fn func(ctx context.Context, n int, s Snapshot) (Verdict, error)

	mu    sync.Mutex
	snaps []Snapshot // guarded by mu
}

func (j *fakeJudge) Judge(ctx context.Context, s Snapshot) (Verdict, error) {
	j.mu.Lock()
	n := len(j.snaps)
	j.snaps = append(j.snaps, s)
	j.mu.Unlock()
	return j.fn(ctx, n, s)
}

func (j *fakeJudge) calls() []Snapshot {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.snaps)
}

// answer is one scripted reply of a judge.
type answer struct {
	v   Verdict
	err error
}

// scripted returns a judge giving the answers in order, the last one again
// after the end.
func scripted(as ...answer) *fakeJudge {
	return &fakeJudge{fn: func(_ context.Context, n int, _ Snapshot) (Verdict, error) {
		a := as[min(n, len(as)-1)]
		return a.v, a.err
	}}
}

// baseConfig is the ladder the tests climb: three nudges, each heeded
// within two tool calls once read, then an escalation and a pause.
func baseConfig() Config {
	return Config{Enabled: true, Interval: 5 * time.Second, Nudges: 3, StepsToHeed: 2, Escalate: true, Pause: true}
}

// harness runs one Watcher. In a synctest bubble (bubble set) every
// publish waits until the Watcher has done all it will do with it;
// outside one the tests poll for what they expect.
type harness struct {
	t      *testing.T
	bubble bool
	bus    *event.Bus
	st     *fakeStore
	act    *supervisortest.Actions
	w      *Watcher

	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// start runs a Watcher with cfg; opt may change the options.
func start(t *testing.T, bubble bool, cfg Config, opt func(*Options)) *harness {
	t.Helper()
	bus := event.NewBus(event.Options{}, 0)
	h := &harness{t: t, bubble: bubble, bus: bus, st: newFakeStore(bus), act: &supervisortest.Actions{}, done: make(chan error, 1)}
	o := Options{Config: cfg, Store: h.st, Bus: bus, Actions: h.act}
	if opt != nil {
		opt(&o)
	}
	h.w = New(o)
	ctx, cancel := context.WithCancel(t.Context())
	h.cancel = cancel
	go func() { h.done <- h.w.Run(ctx) }()
	t.Cleanup(func() {
		if err := h.stop(); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
	if bubble {
		synctest.Wait()
	} else if cfg.Enabled {
		testkit.WaitFor(t, "the Watcher to follow the bus", func() bool { return bus.Stats().Subscribers > 0 })
	}
	return h
}

// stop cancels Run and returns its error; it may be called again.
func (h *harness) stop() error {
	h.once.Do(func() {
		h.cancel()
		select {
		case h.err = <-h.done:
		case <-time.After(time.Minute):
			h.err = fmt.Errorf("run did not return a minute after its context ended")
		}
	})
	return h.err
}

// pub records an event and publishes it, as the store's writer does.
func (h *harness) pub(id task.ID, p event.Payload) {
	h.t.Helper()
	if _, err := h.st.AppendEvents(h.t.Context(), event.New(time.Now(), id, p)); err != nil {
		h.t.Fatal(err)
	}
	if h.bubble {
		synctest.Wait()
	}
}

// agent publishes one task's observations as the native agent emits them
// (internal/agent/loop.go): per turn, turn.started, the tool call, the
// call's usage, the result, the files it changed, turn.ended.
type agent struct {
	h   *harness
	id  task.ID
	obs testkit.Agent
}

// task stores a queued task and returns its agent.
func (h *harness) task(id task.ID, mod func(*task.Task)) *agent {
	t := task.Task{ID: id, Description: "make the release check pass for " + string(id), Persona: "junior",
		Status: task.Queued, Worktree: "/home/dev/.neuraphage/worktrees/" + string(id)}
	if mod != nil {
		mod(&t)
	}
	h.st.put(t)
	return &agent{h: h, id: id, obs: testkit.Agent{ID: id, Tokens: 1200}}
}

// status moves the task in the store and publishes the change.
func (a *agent) status(to task.Status) {
	t, err := a.h.st.GetTask(context.Background(), a.id)
	if err != nil {
		a.h.t.Fatal(err)
	}
	from := t.Status
	t.Status = to
	a.h.st.put(t)
	a.h.pub(a.id, event.TaskStatus{From: from, To: to})
}

// tool runs one turn with one tool call.
func (a *agent) tool(name string, args map[string]string, out string, failed bool, changes ...string) {
	for _, p := range a.obs.ToolTurn(name, args, out, failed, changes...) {
		a.h.pub(a.id, p)
	}
}

// fail runs the release check, which fails the same way every time.
func (a *agent) fail() {
	a.tool("bash", map[string]string{"command": "sh check.sh"},
		"check.sh: line 3: VERSION: No such file or directory\nrelease check FAILED", true)
}

// failN runs the failing check n times.
func (a *agent) failN(n int) {
	for range n {
		a.fail()
	}
}

// edit changes a file.
func (a *agent) edit(path, text string) {
	a.tool("edit_file", map[string]string{"path": path, "old_text": "TODO", "new_text": text}, "Edited "+path+".", false, path)
}

// deliver publishes the receipt of injections: the model now sees them.
func (a *agent) deliver(ids ...int64) {
	kinds := make([]string, len(ids))
	for i := range kinds {
		kinds[i] = string(inject.Nudge)
	}
	a.h.pub(a.id, a.obs.Delivered(ids, kinds))
}

// lastNudge returns the last nudge injected to the agent's task.
func (a *agent) lastNudge() inject.Injection {
	a.h.t.Helper()
	ns := a.h.act.Of(a.id, inject.Nudge)
	if len(ns) == 0 {
		a.h.t.Fatalf("task %s was never nudged", a.id)
	}
	return ns[len(ns)-1]
}

// severities returns the severities of the nudges sent to the task.
func (a *agent) severities() []string {
	var out []string
	for _, n := range a.h.act.Of(a.id, inject.Nudge) {
		out = append(out, n.Attrs["severity"])
	}
	return out
}

// kinds returns the kinds of the watcher events recorded about the task.
func (a *agent) kinds() []string {
	var out []string
	for _, e := range a.h.st.recorded(a.id) {
		out = append(out, string(e.Kind))
	}
	return out
}
