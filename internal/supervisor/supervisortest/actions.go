// Package supervisortest holds the test doubles the supervisors' tests
// share: Actions, the executor's door in memory.
package supervisortest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Actions is the executor's door in memory: it records the injections,
// escalations and cancels a supervisor asks for, and can be told to fail
// or panic. Its methods are safe for concurrent use; OnInject is set
// before use.
type Actions struct {
	// OnInject, when set, is told of every injection (benchmarks).
	OnInject func(inj inject.Injection, at time.Time)

	mu          sync.Mutex
	nextID      int64      // guarded by mu
	injected    []Injected // guarded by mu
	escalations []string   // guarded by mu: "id|reason|by"
	cancels     []string   // guarded by mu: "id|reason"
	injectErr   error      // guarded by mu
	escalateErr error      // guarded by mu
	panicFor    task.ID    // guarded by mu
}

// Injected is one successful call of Inject: what was asked, the ID it
// got and when.
type Injected struct {
	inject.Injection
	ID int64
	At time.Time
}

// Queued is the injection as the queue would return it.
func (i Injected) Queued() inject.Injection {
	q := i.Injection
	q.ID, q.Quiet, q.CreatedAt = i.ID, false, i.At
	return q
}

// Inject records inj and returns it queued, or fails (Fail), or panics
// for one task (PanicOn).
func (a *Actions) Inject(_ context.Context, inj inject.Injection) (inject.Injection, error) {
	at := time.Now()
	a.mu.Lock()
	if inj.TaskID != "" && inj.TaskID == a.panicFor {
		a.mu.Unlock()
		panic("fake actions: injecting blew up")
	}
	if a.injectErr != nil {
		err := a.injectErr
		a.mu.Unlock()
		return inject.Injection{}, err
	}
	a.nextID++
	i := Injected{Injection: inj, ID: a.nextID, At: at}
	a.injected = append(a.injected, i)
	on := a.OnInject
	a.mu.Unlock()
	if on != nil {
		on(inj, at)
	}
	return i.Queued(), nil
}

// Escalate records the escalation and answers a move from junior to to
// (senior when to is empty), or refuses (RefuseEscalation).
func (a *Actions) Escalate(_ context.Context, id task.ID, to, reason, by string) (executor.Escalation, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.escalations = append(a.escalations, string(id)+"|"+reason+"|"+by)
	if a.escalateErr != nil {
		return executor.Escalation{}, a.escalateErr
	}
	if to == "" {
		to = "senior"
	}
	return executor.Escalation{TaskID: id, From: "junior", To: to}, nil
}

// Cancel records the cancel and returns the task cancelled.
func (a *Actions) Cancel(_ context.Context, id task.ID, reason string) (task.Task, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cancels = append(a.cancels, string(id)+"|"+reason)
	return task.Task{ID: id, Status: task.Cancelled, CloseReason: reason}, nil
}

// Fail makes Inject fail with err (nil: succeed again).
func (a *Actions) Fail(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.injectErr = err
}

// RefuseEscalation makes Escalate refuse with err (nil: accept again).
func (a *Actions) RefuseEscalation(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.escalateErr = err
}

// PanicOn makes Inject panic for the task.
func (a *Actions) PanicOn(id task.ID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.panicFor = id
}

// To returns the injections sent to a task, in order.
func (a *Actions) To(id task.ID) []Injected {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Injected
	for _, i := range a.injected {
		if i.TaskID == id {
			out = append(out, i)
		}
	}
	return out
}

// Of returns the injections of one kind sent to a task, as queued.
func (a *Actions) Of(id task.ID, k inject.Kind) []inject.Injection {
	var out []inject.Injection
	for _, i := range a.To(id) {
		if i.Kind == k {
			out = append(out, i.Queued())
		}
	}
	return out
}

// Count returns how many injections were queued.
func (a *Actions) Count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.injected)
}

// Calls returns the escalations ("id|reason|by") and cancels
// ("id|reason") asked for, in order.
func (a *Actions) Calls() (escalations, cancels []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.escalations), slices.Clone(a.cancels)
}
