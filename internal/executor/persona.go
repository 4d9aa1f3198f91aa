package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Personas is what the executor asks about personas. The daemon implements
// it with the persona set, the router's model and the user's hooks.
type Personas interface {
	// Select chooses the persona of a task starting for the first time:
	// the one it was created with, or the router's choice, or the default
	// (with the reason), after the PersonaSelected hooks. It never fails:
	// whatever goes wrong ends in the default persona.
	Select(ctx context.Context, t task.Task) Selection
	// Target returns the persona that escalating a task running as
	// current moves it to (to, or the next step of the chain when to is
	// ""), or why it cannot be escalated. by is who asks ("user",
	// "watcher"): supervisors are refused when escalation is off.
	Target(current, to, by string) (string, error)
	// Model returns the model a task would run on (its own, else its
	// persona's tier's), for the record.
	Model(t task.Task) string
	// Describe is what the model is told about its new persona.
	Describe(persona string) string
	// Escalated is told once an escalation took effect (PersonaEscalated
	// hooks); it must not block.
	Escalated(t task.Task, e event.PersonaEscalated)
}

// Selection is a persona chosen for a task.
type Selection struct {
	// Event records how (method, reason, the router's answer).
	Event event.PersonaSelected
	// Tags are added to the task (the router's).
	Tags []string
	// Call is the router's model call, charged to the task; nil when none
	// was made.
	Call *engine.Call
}

// prepare makes t's workspace and, for a task starting for the first
// time, chooses its persona (*t becomes the task as stored then). The two
// do not depend on each other, so the router's model call and the making
// of the worktree run side by side, and the task starts after the longer
// of the two instead of after both. The persona is chosen whether or not
// the worktree can be made, as when it was chosen first; neither waits
// for the other to fail.
func (e *Executor) prepare(ctx context.Context, t *task.Task) (Workspace, error) {
	if e.personas == nil || t.PersonaVia != "" || len(t.Workflow) > 0 {
		return e.dir(ctx, *t)
	}
	var (
		ws  Workspace
		err error
		wg  sync.WaitGroup
	)
	first := *t
	wg.Go(func() { ws, err = e.dir(ctx, first) })
	*t = e.selectPersona(ctx, *t)
	wg.Wait()
	return ws, err
}

// selectPersona gives t its persona and returns the task as stored. A
// failure to store is logged and leaves t as it was: the engine then runs
// the default persona.
func (e *Executor) selectPersona(ctx context.Context, t task.Task) task.Task {
	sel := e.personas.Select(ctx, t)
	if ctx.Err() != nil {
		// The run is stopping (shutdown, cancel): choose again next start
		// rather than keep a fallback the stop caused.
		return t
	}
	ev := sel.Event
	now := e.now()
	n, err := e.runSt.ConversationLen(ctx, t.ID)
	if err != nil {
		e.log.Warn("recording the persona chosen", "task_id", t.ID, "err", err)
		return t
	}
	cp := store.Checkpoint{TaskID: t.ID, From: n}
	mutate := func(tk *task.Task) ([]event.Event, error) {
		tk.Persona = ev.Persona
		tk.PersonaVia = ev.Method
		tags := append(append([]string{}, tk.Tags...), sel.Tags...)
		if len(tags) > task.MaxTags {
			tags = tags[:task.MaxTags]
		}
		if norm, err := task.NormalizeTags(tags); err == nil {
			tk.Tags = norm
		}
		tk.UpdatedAt = now
		return nil, nil
	}
	cp.Mutate = mutate
	if c := sel.Call; c != nil {
		cp.Charges = []store.Charge{charge(now, c)}
		cp.Mutate = func(tk *task.Task) ([]event.Event, error) {
			addUsage(tk, c)
			return mutate(tk)
		}
	}
	stored, _, err := e.runSt.Checkpoint(ctx, cp, event.New(now, t.ID, ev))
	if err != nil {
		e.log.Warn("recording the persona chosen", "task_id", t.ID, "err", err)
		return t
	}
	if sel.Call != nil {
		e.spend.add(now, sel.Call.CostUSD)
	}
	return stored
}

// EscalationRefusedError says why an escalation was refused. It is the
// user's to fix (a usage error, not a failure of the daemon).
type EscalationRefusedError struct {
	ID  task.ID
	Err error
}

func (e *EscalationRefusedError) Error() string {
	return fmt.Sprintf("task %s cannot be escalated: %v", e.ID, e.Err)
}

func (e *EscalationRefusedError) Unwrap() error { return e.Err }

// Escalation is an accepted escalation.
type Escalation struct {
	TaskID task.ID `json:"task_id"`
	From   string  `json:"from"`
	To     string  `json:"to"`
	// Applied says the change is made already (the task was not
	// running); otherwise it is made at the task's next turn boundary.
	Applied bool `json:"applied"`
}

// Escalate moves a task to a stronger persona: to, or one step up the
// escalation chain. A running task changes at its next turn boundary (new
// system prompt and model, same conversation and worktree); another one at
// once. by says who asks ("user", "watcher"). A refusal (the top of the
// chain, an unknown persona, escalation off for supervisors) is an
// *EscalationRefusedError and is recorded as an event.
func (e *Executor) Escalate(ctx context.Context, id task.ID, to, reason, by string) (Escalation, error) {
	if e.personas == nil {
		return Escalation{}, errors.New("personas are not set up in this daemon")
	}
	by = words.Or(by, "user")
	reason = strings.TrimSpace(reason)
	t, err := e.st.GetTask(ctx, id)
	if err != nil {
		return Escalation{}, err
	}
	if t.Status.Terminal() {
		return Escalation{}, &task.FinishedError{ID: t.ID, Status: t.Status}
	}
	if len(t.Workflow) > 0 {
		return Escalation{}, &EscalationRefusedError{ID: id, Err: errors.New("a workflow task runs no persona itself; escalate one of its phase tasks")}
	}
	current := t.Persona
	// A request still waiting for the boundary counts: escalating twice
	// climbs two steps.
	pending, err := e.st.Pending(ctx, id)
	if err != nil {
		return Escalation{}, err
	}
	for _, p := range pending {
		if p.IsPersonaRequest() {
			current = p.Attrs["to"]
		}
	}
	target, err := e.personas.Target(current, to, by)
	if err != nil {
		e.record(ctx, id, event.EscalationRefused{From: current, To: to, Reason: err.Error(), By: by})
		return Escalation{}, &EscalationRefusedError{ID: id, Err: err}
	}
	esc := Escalation{TaskID: id, From: current, To: target}
	if !e.isRunning(id) {
		_, err := e.applyEscalation(ctx, id, current, target, reason, by, 0, true)
		switch {
		case err == nil:
			esc.Applied = true
			return esc, nil
		case !errors.Is(err, errStartedMeanwhile):
			return Escalation{}, err
		}
	}
	_, err = e.Inject(ctx, inject.Injection{TaskID: id, Kind: inject.Persona, Source: inject.Source(by),
		Attrs: map[string]string{"from": current, "to": target, "by": by, "reason": reason},
		Text:  words.Or(reason, "escalated by "+by)})
	if err != nil {
		return Escalation{}, err
	}
	return esc, nil
}

// applyEscalation makes the change: the task's persona becomes to, its own
// model (if any) is dropped so that the new persona's tier chooses, the
// change is recorded, and the model is told at its next boundary: it
// returns the injection that tells it as queued (zero when queueing it
// failed, which is logged). With notRunning, a task that started meanwhile
// is errStartedMeanwhile.
func (e *Executor) applyEscalation(ctx context.Context, id task.ID, from, to, reason, by string, turn int, notRunning bool) (inject.Injection, error) {
	var ev event.PersonaEscalated
	stored, _, err := e.st.UpdateTask(ctx, id, func(t *task.Task) ([]event.Event, error) {
		if notRunning && t.Status == task.Running {
			return nil, errStartedMeanwhile
		}
		if t.Status.Terminal() {
			return nil, &task.FinishedError{ID: t.ID, Status: t.Status}
		}
		if !notRunning && t.Persona != from {
			// A later escalation of the stopped task went past this one.
			return nil, errSuperseded
		}
		ev = event.PersonaEscalated{From: t.Persona, To: to, FromModel: e.personas.Model(*t), Reason: reason, By: by, Turn: turn}
		t.Persona = to
		t.PersonaVia = "escalated"
		t.Model = ""
		t.UpdatedAt = e.now()
		ev.ToModel = e.personas.Model(*t)
		return []event.Event{event.New(e.now(), t.ID, ev)}, nil
	})
	if err != nil {
		return inject.Injection{}, err
	}
	text := e.personas.Describe(to)
	if reason != "" {
		text += "\nWhy: " + reason
	}
	told, err := e.Inject(ctx, inject.Injection{TaskID: id, Kind: inject.Persona, Source: inject.Source(by), Outcome: inject.Done,
		Attrs: map[string]string{"from": ev.From, "to": to}, Text: text, Quiet: true})
	if err != nil {
		e.log.Warn("telling the task of its new persona", "task_id", id, "err", err)
	}
	e.personas.Escalated(stored, ev)
	return told, nil
}

// errSuperseded: a waiting persona request was overtaken by a later change.
var errSuperseded = errors.New("superseded by a later change of persona")

// record appends an event about a task, logging a failure.
func (e *Executor) record(ctx context.Context, id task.ID, p event.Payload) {
	if _, err := e.runSt.AppendEvents(ctx, event.New(e.now(), id, p)); err != nil {
		e.log.Warn("recording an event", "task_id", id, "kind", p.EventKind(), "err", err)
	}
}
