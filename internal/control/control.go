// Package control is the daemon's task control plane: the validated operations
// that create tasks and change their lives (pause, resume, cancel), queue
// messages for them and record dependencies. Each operation changes the store
// and records the events that describe the change in the same transaction, so
// a change acknowledged to a client is never lost and every watcher hears of it.
//
// The daemon routes the operations that touch a running task (pause, resume,
// cancel, messages) through the executor, which uses this package's
// Transition and FinishedError; Control does the rest (create, depend, list,
// log, costs) and recovery at start.
package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Defaults fill in what a create request leaves out.
type Defaults struct {
	Priority int
	Engine   string
}

// Control performs task operations. It is safe for concurrent use.
type Control struct {
	store    store.Store
	now      func() time.Time
	rand     io.Reader
	defaults Defaults
	log      *slog.Logger
}

// New returns a Control over st. now and rand are the clock and the source of
// task IDs (time.Now and crypto/rand.Reader in production).
func New(st store.Store, now func() time.Time, rand io.Reader, d Defaults, log *slog.Logger) *Control {
	return &Control{store: st, now: now, rand: rand, defaults: d, log: log.With("component", "control")}
}

// maxIDTries bounds retries on ID collisions, which are rare (2^25 IDs).
const maxIDTries = 8

// Create validates spec, stores the new task and records task.created.
func (c *Control) Create(ctx context.Context, spec task.Spec) (task.Task, error) {
	if spec.Engine == "" {
		spec.Engine = c.defaults.Engine
	}
	if spec.ParentID != "" {
		pid, err := c.store.ResolveTask(ctx, string(spec.ParentID))
		if err != nil {
			return task.Task{}, fmt.Errorf("parent: %w", err)
		}
		spec.ParentID = pid
	}
	for range maxIDTries {
		id, err := task.NewID(c.rand)
		if err != nil {
			return task.Task{}, err
		}
		t, err := task.New(id, spec, c.now())
		if err != nil {
			return task.Task{}, err
		}
		ev := event.New(t.CreatedAt, t.ID, event.TaskCreated{
			Description: t.Description, Status: t.Status, Priority: t.Priority, Tags: t.Tags,
			ParentID: t.ParentID, Persona: t.Persona, Engine: t.Engine, Repo: t.Repo,
		})
		_, err = c.store.CreateTask(ctx, t, ev)
		if errors.Is(err, store.ErrExists) {
			continue
		}
		if err != nil {
			return task.Task{}, fmt.Errorf("creating a task: %w", err)
		}
		c.log.Info("task created", "task_id", t.ID, "status", t.Status)
		return t, nil
	}
	return task.Task{}, fmt.Errorf("creating a task: no free id after %d tries", maxIDTries)
}

// Resolve finds the task a user's reference names.
func (c *Control) Resolve(ctx context.Context, ref string) (task.ID, error) {
	return c.store.ResolveTask(ctx, ref)
}

// Detail is a task with its blockers, readiness and queued messages.
type Detail struct {
	Task      task.Task
	Readiness task.Readiness
	Blockers  []task.ID
	Pending   []inject.Injection
}

// Get returns the task ref names, with its details.
func (c *Control) Get(ctx context.Context, ref string) (Detail, error) {
	id, err := c.store.ResolveTask(ctx, ref)
	if err != nil {
		return Detail{}, err
	}
	return c.detail(ctx, id)
}

func (c *Control) detail(ctx context.Context, id task.ID) (Detail, error) {
	t, err := c.store.GetTask(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{Task: t}
	if d.Blockers, err = c.store.Blockers(ctx, id); err != nil {
		return Detail{}, err
	}
	if d.Readiness, err = c.store.Readiness(ctx, id); err != nil {
		return Detail{}, err
	}
	if d.Pending, err = c.store.Pending(ctx, id); err != nil {
		return Detail{}, err
	}
	return d, nil
}

// ListJSON returns tasks as a JSON array, straight from the store: those in
// statuses, or with none given the unfinished ones unless all is set.
func (c *Control) ListJSON(ctx context.Context, statuses []task.Status, all bool) (json.RawMessage, error) {
	return c.store.ListTasksJSON(ctx, c.listOptions(statuses, all))
}

func (c *Control) listOptions(statuses []task.Status, all bool) store.ListOptions {
	opts := store.ListOptions{Statuses: statuses}
	if len(statuses) == 0 && !all {
		opts.Statuses = []task.Status{task.Queued, task.Running, task.Waiting, task.Paused, task.Merging}
	}
	return opts
}

// Pause holds a task: a queued task is not dispatched, a running one stops at
// its next boundary (once the runtime exists) keeping its conversation.
func (c *Control) Pause(ctx context.Context, ref, reason string) (task.Task, error) {
	return c.move(ctx, ref, task.Paused, orDefault(reason, "paused by user"))
}

// Resume puts a paused task back in the queue.
func (c *Control) Resume(ctx context.Context, ref, reason string) (task.Task, error) {
	return c.move(ctx, ref, task.Queued, orDefault(reason, "resumed by user"))
}

// Cancel stops a task for good.
func (c *Control) Cancel(ctx context.Context, ref, reason string) (task.Task, error) {
	return c.move(ctx, ref, task.Cancelled, orDefault(reason, "cancelled by user"))
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func (c *Control) move(ctx context.Context, ref string, to task.Status, reason string) (task.Task, error) {
	id, err := c.store.ResolveTask(ctx, ref)
	if err != nil {
		return task.Task{}, err
	}
	t, _, err := c.store.UpdateTask(ctx, id, Transition(to, reason, c.now()))
	if err != nil {
		return task.Task{}, err
	}
	c.log.Info("task status changed", "task_id", id, "status", to, "reason", reason)
	return t, nil
}

// Transition is the mutation that moves a task to status to and records
// task.status. Everything that changes a status uses it.
func Transition(to task.Status, reason string, now time.Time) store.Mutation {
	return func(t *task.Task) ([]event.Event, error) {
		from := t.Status
		if err := t.Transition(to, reason, now); err != nil {
			return nil, err
		}
		return []event.Event{event.New(now, t.ID, event.TaskStatus{From: from, To: to, Reason: reason})}, nil
	}
}

// MaxMessageLen bounds a message sent to a task.
const MaxMessageLen = 100_000

// Send queues a user's message for a task, to be delivered at its next turn
// boundary. Messages to finished tasks are refused. The daemon routes
// messages through the executor instead (executor.Inject), which also wakes
// a waiting task and interrupts for urgent ones; this is the plain queueing
// for a control plane without one.
func (c *Control) Send(ctx context.Context, ref, text string, urgent bool) (inject.Injection, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return inject.Injection{}, &task.InvalidError{Field: "message", Msg: "must not be empty"}
	}
	if len(text) > MaxMessageLen {
		return inject.Injection{}, &task.InvalidError{Field: "message", Msg: fmt.Sprintf("is %d bytes; at most %d", len(text), MaxMessageLen)}
	}
	id, err := c.store.ResolveTask(ctx, ref)
	if err != nil {
		return inject.Injection{}, err
	}
	t, err := c.store.GetTask(ctx, id)
	if err != nil {
		return inject.Injection{}, err
	}
	if t.Status.Terminal() {
		return inject.Injection{}, &FinishedError{ID: id, Status: t.Status}
	}
	inj, _, err := c.store.Enqueue(ctx, inject.Injection{TaskID: id, Source: inject.FromUser, Kind: inject.Message, Text: text, Urgent: urgent, CreatedAt: c.now()},
		func(inj inject.Injection) []event.Event {
			return []event.Event{event.New(inj.CreatedAt, id, event.TaskMessage{InjectionID: inj.ID, Source: string(inj.Source), Kind: string(inj.Kind), Urgent: inj.Urgent, Text: inj.Text})}
		})
	return inj, err
}

// FinishedError refuses an operation on a task that has finished.
type FinishedError struct {
	ID     task.ID
	Status task.Status
}

func (e *FinishedError) Error() string {
	return fmt.Sprintf("task %s is %s and takes no more messages", e.ID, e.Status)
}

// Depend makes the task ref wait until blockerRef completes.
func (c *Control) Depend(ctx context.Context, ref, blockerRef string) (Detail, error) {
	id, err := c.store.ResolveTask(ctx, ref)
	if err != nil {
		return Detail{}, err
	}
	bid, err := c.store.ResolveTask(ctx, blockerRef)
	if err != nil {
		return Detail{}, fmt.Errorf("blocker: %w", err)
	}
	dep := task.Dependency{Task: id, Blocker: bid}
	if _, err := c.store.AddDependency(ctx, dep, event.New(c.now(), id, event.TaskDependency{Blocker: bid})); err != nil {
		return Detail{}, err
	}
	return c.detail(ctx, id)
}

// Recover runs at daemon start: every task that was running or waiting on an
// engine when the daemon stopped goes back to queued, marked to resume from its
// last persisted turn. Waiting and paused tasks keep their state. It returns the
// tasks marked.
func (c *Control) Recover(ctx context.Context) ([]task.ID, error) {
	running, err := c.store.ListTasks(ctx, store.ListOptions{Statuses: []task.Status{task.Running}})
	if err != nil {
		return nil, fmt.Errorf("recovering running tasks: %w", err)
	}
	var ids []task.ID
	now := c.now()
	for _, t := range running {
		mark := Transition(task.Queued, "daemon restarted; resumes from its last turn", now)
		_, _, err := c.store.UpdateTask(ctx, t.ID, func(t *task.Task) ([]event.Event, error) {
			evs, err := mark(t)
			t.ResumePending = true
			return evs, err
		})
		if err != nil {
			return ids, fmt.Errorf("recovering task %s: %w", t.ID, err)
		}
		ids = append(ids, t.ID)
	}
	if len(ids) > 0 {
		if _, err := c.store.AppendEvents(ctx, event.New(now, "", event.DaemonRecovered{ResumePending: ids})); err != nil {
			return ids, err
		}
		c.log.Info("recovered tasks", "count", len(ids))
	}
	return ids, nil
}
