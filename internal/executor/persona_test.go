package executor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// chainPersonas is a Personas over the chain junior → mid → senior.
type chainPersonas struct {
	mu        sync.Mutex
	escalated []event.PersonaEscalated
}

var chain = []string{"junior", "mid", "senior"}

func (*chainPersonas) Select(_ context.Context, t task.Task) Selection {
	p := t.Persona
	if p == "" {
		p = "mid"
	}
	return Selection{Event: event.PersonaSelected{Persona: p, Method: "explicit"}, Tags: []string{"picked"}}
}

func (*chainPersonas) Target(current, to, by string) (string, error) {
	if to != "" {
		return to, nil
	}
	i := slices.Index(chain, current)
	if i < 0 || i == len(chain)-1 {
		return "", errors.New("top of the chain")
	}
	return chain[i+1], nil
}

func (*chainPersonas) Model(t task.Task) string { return "model-of-" + t.Persona }
func (*chainPersonas) Describe(p string) string { return "you are now " + p }
func (c *chainPersonas) Escalated(_ task.Task, e event.PersonaEscalated) {
	c.mu.Lock()
	c.escalated = append(c.escalated, e)
	c.mu.Unlock()
}

// Two escalations of a running task before its next boundary climb two
// steps there, in order (the task was junior when the run began); the engine sees the task's new persona from
// Prepare and only the outcome notes in its inbox, never the requests; a
// third is refused at the top of the chain.
func TestEscalateRunningTaskAtBoundary(t *testing.T) {
	var (
		mu       sync.Mutex
		personas []string
		notes    []inject.Injection
	)
	entered, release := make(chan struct{}), make(chan struct{})
	var enter sync.Once
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		enter.Do(func() { close(entered) })
		select { // the escalations are made before the first boundary
		case <-release:
		case <-ctx.Done():
			return engine.Outcome{Status: engine.Stopped}
		}
		for turn := 1; ; turn++ {
			tk, err := r.Host.Prepare(ctx)
			if err != nil {
				return engine.Outcome{Status: engine.Stopped}
			}
			inbox, err := r.Host.Inbox(ctx)
			if err != nil {
				return engine.Outcome{Status: engine.Stopped}
			}
			mu.Lock()
			personas = append(personas, tk.Persona)
			notes = append(notes, inbox...)
			mu.Unlock()
			if len(inbox) > 0 {
				if _, err := r.Host.Commit(ctx, engine.Step{Turn: turn, Delivered: inbox}); err != nil {
					return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
				}
			}
			if tk.Persona == "senior" {
				return engine.Outcome{Status: engine.Completed, Reason: "done as senior"}
			}
		}
	})
	ps := &chainPersonas{}
	e.ex.personas = ps
	tk, err := e.ctl.Create(context.Background(), task.Spec{Description: "work", Priority: 2, Repo: e.dir, Persona: "junior"})
	if err != nil {
		t.Fatal(err)
	}
	e.start()
	// Running is stored before the run selects the persona; the engine is
	// entered after, so persona.selected is in the log before any escalation.
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatal("the run never reached its engine")
	}
	for _, want := range []string{"mid", "senior"} {
		esc, err := e.ex.Escalate(context.Background(), tk.ID, "", "stuck", "watcher")
		if err != nil || esc.To != want || esc.Applied {
			t.Fatalf("escalation to %s: %+v, %v", want, esc, err)
		}
	}
	if _, err := e.ex.Escalate(context.Background(), tk.ID, "", "", "watcher"); !errors.As(err, new(*EscalationRefusedError)) {
		t.Fatalf("a third escalation past the top: %v", err)
	}
	close(release)
	done := e.waitStatus(tk.ID, task.Completed)
	if done.Persona != "senior" || done.PersonaVia != "escalated" || done.Model != "" {
		t.Errorf("task ended as %q via %q model %q", done.Persona, done.PersonaVia, done.Model)
	}
	if !slices.Contains(done.Tags, "picked") {
		t.Errorf("the selection's tags were not added: %v", done.Tags)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(personas, []string{"senior"}) {
		t.Errorf("Prepare returned personas %v, want both steps taken at the first boundary", personas)
	}
	var outcomes int
	for _, n := range notes {
		if n.Kind == inject.Persona {
			if n.Outcome != inject.Done {
				t.Errorf("the engine saw a request: %+v", n)
			}
			outcomes++
		}
	}
	if outcomes != 2 {
		t.Errorf("%d persona-change notes reached the engine, want 2", outcomes)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if len(ps.escalated) != 2 || ps.escalated[0].From != "junior" || ps.escalated[1].To != "senior" || ps.escalated[1].ToModel != "model-of-senior" {
		t.Errorf("escalations told: %+v", ps.escalated)
	}
	evs, err := e.st.ReadEvents(context.Background(), event.Query{Filter: event.Filter{TaskID: tk.ID, Kinds: []string{"persona"}}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []event.Kind
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
	}
	want := []event.Kind{event.KindPersonaSelected, event.KindEscalationRefused, event.KindPersonaEscalated, event.KindPersonaEscalated}
	if !slices.Equal(kinds, want) {
		t.Errorf("events %v, want %v", kinds, want)
	}
}

// A task that is not running changes persona at once; a request left
// waiting by a stopped run and overtaken by a later change is dropped, not
// applied backwards.
func TestEscalateStoppedTaskAtOnce(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		return engine.Outcome{Status: engine.Completed}
	})
	e.ex.personas = &chainPersonas{}
	tk, err := e.ctl.Create(context.Background(), task.Spec{Description: "held", Priority: 2, Repo: e.dir, Persona: "junior", Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	// A request as a stopped run leaves it (junior → mid), then a direct
	// escalation from there (mid → senior).
	if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Persona, Source: "watcher",
		Attrs: map[string]string{"from": "junior", "to": "mid", "by": "watcher"}, Text: "stuck"}); err != nil {
		t.Fatal(err)
	}
	esc, err := e.ex.Escalate(context.Background(), tk.ID, "", "", "user")
	if err != nil || !esc.Applied || esc.From != "mid" || esc.To != "senior" {
		t.Fatalf("escalation of a held task: %+v, %v", esc, err)
	}
	if got := e.get(tk.ID); got.Persona != "senior" {
		t.Fatalf("persona %q right after, want senior", got.Persona)
	}
	h := e.ex.newHost(e.get(tk.ID), &run{id: tk.ID, interrupts: make(chan struct{}, 1)})
	got, err := h.Prepare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Persona != "senior" {
		t.Errorf("the stale request moved the task back to %q", got.Persona)
	}
	inbox, err := h.Inbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(inbox) != 1 || inbox[0].Kind != inject.Persona || inbox[0].Attrs["to"] != "senior" {
		t.Errorf("inbox after: %+v", inbox)
	}
}

// meetingPersonas is a Personas whose Select waits, inside the router's
// call, until the task's workspace is being made; workspace is that
// making, which waits until Select has begun.
type meetingPersonas struct {
	chainPersonas
	gate              sync.Mutex
	selecting, making chan struct{}
	fail              bool // the workspace cannot be made
}

// round sets up the meeting of the next task to start.
func (m *meetingPersonas) round(fail bool) {
	m.gate.Lock()
	defer m.gate.Unlock()
	m.selecting, m.making, m.fail = make(chan struct{}), make(chan struct{}), fail
}

func (m *meetingPersonas) chans() (selecting, making chan struct{}, fail bool) {
	m.gate.Lock()
	defer m.gate.Unlock()
	return m.selecting, m.making, m.fail
}

func (m *meetingPersonas) Select(ctx context.Context, t task.Task) Selection {
	selecting, making, _ := m.chans()
	close(selecting)
	select {
	case <-making:
	case <-ctx.Done():
	}
	return m.chainPersonas.Select(ctx, t)
}

func (m *meetingPersonas) workspace(dir string) func(context.Context, task.Task) (Workspace, error) {
	return func(ctx context.Context, tk task.Task) (Workspace, error) {
		selecting, making, fail := m.chans()
		close(making)
		select {
		case <-selecting:
		case <-ctx.Done():
			return Workspace{}, ctx.Err()
		}
		if fail {
			return Workspace{}, errors.New("no room for a worktree")
		}
		return Workspace{Dir: dir, Branch: "work-of-" + string(tk.ID)}, nil
	}
}

// A task starting for the first time has its persona chosen and its
// worktree made side by side: each of the two waits here until the other
// has begun, which only happens when neither waits for the other to end.
// The task then runs with both, and a worktree that cannot be made still
// leaves the persona chosen.
func TestPersonaAndWorkspaceSideBySide(t *testing.T) {
	ran := make(chan engine.Run, 2)
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		ran <- r
		return engine.Outcome{Status: engine.Completed}
	})
	ps := &meetingPersonas{}
	ps.round(false)
	e.ex.personas, e.ex.dir = ps, ps.workspace(e.dir)
	tk := e.create("side by side", 2)
	e.start()
	e.waitStatus(tk.ID, task.Completed) // fails, not hangs, when one waits for the other
	r := <-ran
	if r.Branch != "work-of-"+string(tk.ID) || r.Task.Persona != "mid" || r.Task.PersonaVia != "explicit" {
		t.Errorf("the run got branch %q, persona %q (%q); want its workspace and its persona", r.Branch, r.Task.Persona, r.Task.PersonaVia)
	}

	ps.round(true)
	tk2 := e.create("no worktree", 2)
	got := e.waitStatus(tk2.ID, task.Paused)
	if got.Persona != "mid" || got.PersonaVia != "explicit" || !slices.Contains(got.Tags, "picked") {
		t.Errorf("after a failed worktree: persona %q (%q), tags %v; want the persona chosen", got.Persona, got.PersonaVia, got.Tags)
	}
	if !strings.Contains(got.CloseReason, "no room for a worktree") {
		t.Errorf("paused for %q", got.CloseReason)
	}
}
