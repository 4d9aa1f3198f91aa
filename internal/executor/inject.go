package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

var errStartedMeanwhile = errors.New("the task started meanwhile")

// MaxInjectionLen bounds an injection's text.
const MaxInjectionLen = 100_000

// Inject is the one door for every message to a task. The message is stored
// in the task's durable queue before Inject returns and is delivered at the
// task's next turn boundary, exactly once, with a receipt event. An urgent
// one interrupts a running task's turn in flight; one for a task waiting for
// its user wakes it. A task that is queued or paused keeps it for later.
// Inject never waits for the task.
//
// A pause injection stops a running task at its next boundary (it is queued
// so that it survives a restart); a task that is not running is paused at
// once.
func (e *Executor) Inject(ctx context.Context, inj inject.Injection) (inject.Injection, error) {
	inj, err := checkInjection(inj)
	if err != nil {
		return inject.Injection{}, err
	}
	t, err := e.st.GetTask(ctx, inj.TaskID)
	if err != nil {
		return inject.Injection{}, err
	}
	if t.Status.Terminal() {
		return inject.Injection{}, &task.FinishedError{ID: t.ID, Status: t.Status}
	}
	if inj.Kind == inject.Pause && !e.isRunning(t.ID) {
		// Pause at once, unless the scheduler started the task meanwhile:
		// the store serializes this check with its start.
		reason := words.Or(inj.Text, "paused by "+string(inj.Source))
		move := store.Transition(task.Paused, reason, e.now())
		_, _, err := e.st.UpdateTask(ctx, t.ID, func(t *task.Task) ([]event.Event, error) {
			if t.Status == task.Running {
				return nil, errStartedMeanwhile
			}
			return move(t)
		})
		if err == nil {
			return inject.Injection{TaskID: t.ID, Source: inj.Source, Kind: inject.Pause, Text: inj.Text}, nil
		}
		if !errors.Is(err, errStartedMeanwhile) {
			return inject.Injection{}, err
		}
	}
	quiet := inj.Quiet
	inj.ID, inj.TaskID, inj.CreatedAt, inj.DeliveredAt = 0, t.ID, e.now(), nil
	stored, _, err := e.st.Enqueue(ctx, inj, func(s inject.Injection) []event.Event {
		return []event.Event{receipt(s)}
	})
	if err != nil {
		return inject.Injection{}, err
	}
	e.arrived(ctx, stored, quiet)
	return stored, nil
}

// checkInjection fills in an injection's defaults and refuses bad input.
func checkInjection(inj inject.Injection) (inject.Injection, error) {
	inj.Text = strings.TrimSpace(inj.Text)
	if inj.Kind == "" {
		inj.Kind = inject.Message
	}
	if _, err := inject.ParseKind(string(inj.Kind)); err != nil {
		return inject.Injection{}, &task.InvalidError{Field: "kind", Msg: err.Error()}
	}
	if strings.TrimSpace(string(inj.Source)) == "" {
		inj.Source = inject.FromUser
	}
	switch {
	case inj.Text == "" && inj.Kind != inject.Pause:
		return inject.Injection{}, &task.InvalidError{Field: "message", Msg: "must not be empty"}
	case len(inj.Text) > MaxInjectionLen:
		return inject.Injection{}, &task.InvalidError{Field: "message", Msg: fmt.Sprintf("is %d bytes; at most %d", len(inj.Text), MaxInjectionLen)}
	}
	return inj, nil
}

// receipt is the event logged with a stored injection.
func receipt(s inject.Injection) event.Event {
	return event.New(s.CreatedAt, s.TaskID, event.TaskMessage{InjectionID: s.ID, Source: string(s.Source),
		Kind: string(s.Kind), Attrs: s.AttrMap(), Urgent: s.Urgent, Text: s.Text})
}

// arrived lets the task know a stored message is waiting: an urgent one
// interrupts its turn in flight; one for a task waiting for its user
// wakes it unless it is quiet.
//
// A loud message wakes the task here if the store says it waits (its run
// gone, or ended and on its way out). A run still registered is told of
// it too (run.loud): it reads the message at its next boundary, or, if it
// ends waiting without having read it, wakes the task as it unregisters.
// Whichever wake comes second finds the task moved and leaves it. Nothing
// acts on a quiet one.
func (e *Executor) arrived(ctx context.Context, stored inject.Injection, quiet bool) {
	e.mu.Lock()
	r := e.runs[stored.TaskID]
	if r != nil && !quiet {
		r.loud = append(r.loud, stored.ID)
	}
	e.mu.Unlock()
	if r != nil && stored.Urgent {
		select {
		case r.interrupts <- struct{}{}:
		default: // a signal is already waiting
		}
	}
	if r != nil {
		select {
		case r.arrivals <- struct{}{}:
		default:
		}
	}
	if !quiet {
		e.wake(ctx, stored.TaskID, []int64{stored.ID})
	}
}

// InjectMany is Inject for several messages at once, the batch door (the
// main watcher's notices when main moves): each is checked as Inject
// checks it, then all that pass are stored in one store commit, evs first
// and each message followed by the events record(i, stored) returns for
// it (nil: none) and its receipt; after the commit each task is
// interrupted or woken as Inject does. The result holds, for each message
// in order, the stored injection or why it was refused (bad input, a
// finished task); the error is a store failure that queued none. A pause
// goes through Inject on its own.
func (e *Executor) InjectMany(ctx context.Context, injs []inject.Injection, record func(i int, stored inject.Injection) []event.Event, evs ...event.Event) ([]store.Enqueued, error) {
	out := make([]store.Enqueued, len(injs))
	var (
		batch []inject.Injection
		at    []int // batch[j] is injs[at[j]]
		quiet []bool
	)
	now := e.now()
	for i, inj := range injs {
		if inj.Kind == inject.Pause {
			out[i].Injection, out[i].Err = e.Inject(ctx, inj)
			continue
		}
		inj, err := checkInjection(inj)
		if err != nil {
			out[i].Err = err
			continue
		}
		quiet = append(quiet, inj.Quiet)
		inj.ID, inj.CreatedAt, inj.DeliveredAt = 0, now, nil
		batch, at = append(batch, inj), append(at, i)
	}
	if len(batch) == 0 && len(evs) == 0 {
		return out, nil
	}
	got, _, err := e.st.EnqueueMany(ctx, batch, func(j int, s inject.Injection) []event.Event {
		var evs []event.Event
		if record != nil {
			evs = record(at[j], s)
		}
		return append(evs, receipt(s))
	}, evs...)
	if err != nil {
		return nil, err
	}
	for j, g := range got {
		out[at[j]] = g
		if g.Err == nil {
			e.arrived(ctx, g.Injection, quiet[j])
		}
	}
	return out, nil
}

// Pause pauses a task: a running one at its next boundary (its status
// changes then), any other at once.
func (e *Executor) Pause(ctx context.Context, id task.ID, reason string) (task.Task, error) {
	if _, err := e.Inject(ctx, inject.Injection{TaskID: id, Kind: inject.Pause, Source: inject.FromUser, Text: words.Or(reason, "paused by user")}); err != nil {
		return task.Task{}, err
	}
	return e.st.GetTask(ctx, id)
}

// Resume puts a paused task back in the queue; it continues from its stored
// conversation. A task paused for its own budget is granted the same budget
// again (the limit it reached moves up by its size).
func (e *Executor) Resume(ctx context.Context, id task.ID, reason string) (task.Task, error) {
	reason = words.Or(reason, "resumed by user")
	move := store.Transition(task.Queued, reason, e.now())
	cfg := e.cfg
	t, _, err := e.st.UpdateTask(ctx, id, func(t *task.Task) ([]event.Event, error) {
		if t.Status != task.Paused {
			// Only a paused task resumes; a running one is already going.
			return nil, &task.TransitionError{ID: t.ID, From: t.Status, To: task.Queued}
		}
		if isBudgetPause(*t) {
			b := effectiveBudget(*t, cfg)
			u := t.Usage
			if b.MaxIterations > 0 && u.Iterations >= b.MaxIterations {
				t.Budget.MaxIterations = u.Iterations + b.MaxIterations
			}
			if b.MaxTokens > 0 && u.InputTokens+u.OutputTokens >= b.MaxTokens {
				t.Budget.MaxTokens = u.InputTokens + u.OutputTokens + b.MaxTokens
			}
			if b.MaxCostUSD > 0 && u.CostUSD >= b.MaxCostUSD {
				t.Budget.MaxCostUSD = u.CostUSD + b.MaxCostUSD
			}
		}
		return move(t)
	})
	return t, err
}

// Cancel stops a task for good; a running one is stopped at once, its
// processes killed.
func (e *Executor) Cancel(ctx context.Context, id task.ID, reason string) (task.Task, error) {
	t, _, err := e.st.UpdateTask(ctx, id, store.Transition(task.Cancelled, words.Or(reason, "cancelled by user"), e.now()))
	if err != nil {
		return task.Task{}, err
	}
	e.mu.Lock()
	if r := e.runs[id]; r != nil {
		r.cancel(errCancelled)
	}
	e.mu.Unlock()
	return t, nil
}
