// Package tasks is the one place where a task's life changes: it creates
// tasks (checking their persona, engine and workflow once), pauses, resumes
// and cancels them (a workflow task's phases with it), queues messages and
// nudges for them, records dependencies, escalates personas, asks for
// rebases and moves tasks for the merge queue. The API server, the merge
// queue, workflows and supervisors act through a Service; the executor runs
// tasks and is told of a life change only by it.
//
// Every change is made in the store with the events that describe it in the
// same transaction, so a change acknowledged to a client is never lost and
// every watcher hears of it. Recover, at daemon start, marks the tasks that
// were running to resume.
package tasks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/mainwatch"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Store is what the service reads and changes of tasks.
type Store interface {
	CreateTask(ctx context.Context, t task.Task, evs ...event.Event) ([]event.Event, error)
	UpdateTask(ctx context.Context, id task.ID, m store.Mutation) (task.Task, []event.Event, error)
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	ResolveTask(ctx context.Context, ref string) (task.ID, error)
	ListTasks(ctx context.Context, opts store.ListOptions) ([]task.Task, error)
	ListSummariesJSON(ctx context.Context, opts store.ListOptions) (store.SummaryPage, error)
	AddDependency(ctx context.Context, dep task.Dependency, evs ...event.Event) ([]event.Event, error)
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
}

// Records is what the service reads about a task besides the task: its
// blockers, readiness, queued messages, conversation and costs.
type Records interface {
	Blockers(ctx context.Context, id task.ID) ([]task.ID, error)
	Readiness(ctx context.Context, id task.ID) (task.Readiness, error)
	Pending(ctx context.Context, id task.ID) ([]inject.Injection, error)
	Returned(ctx context.Context, id task.ID) ([]inject.Injection, error)
	Conversation(ctx context.Context, id task.ID, from int) ([]store.Entry, error)
	Costs(ctx context.Context, q store.CostQuery) ([]store.CostRow, error)
}

// Runner runs tasks (the executor): it is told of pauses, resumes,
// cancels, messages and escalations, since a running task takes them at its
// boundaries.
type Runner interface {
	Pause(ctx context.Context, id task.ID, reason string) (task.Task, error)
	Resume(ctx context.Context, id task.ID, reason string) (task.Task, error)
	Cancel(ctx context.Context, id task.ID, reason string) (task.Task, error)
	Inject(ctx context.Context, inj inject.Injection) (inject.Injection, error)
	InjectMany(ctx context.Context, injs []inject.Injection, record func(i int, stored inject.Injection) []event.Event, evs ...event.Event) ([]store.Enqueued, error)
	Escalate(ctx context.Context, id task.ID, to, reason, by string) (executor.Escalation, error)
	// Engines names the engines a task may name.
	Engines() []string
}

// Workflows starts workflow tasks and takes their phases' completions.
type Workflows interface {
	Start(ctx context.Context, spec task.Spec) (task.Task, error)
	// Completed takes the completion of a phase task and reports whether
	// id was one.
	Completed(ctx context.Context, id task.ID, summary string) bool
}

// Merges takes a completed task's work (the merge queue).
type Merges interface {
	// Complete reports whether the queue took the task's work; if not,
	// the task completes as it is.
	Complete(ctx context.Context, id task.ID, summary string, auto bool) bool
}

// Rebases asks for blocking rebases of task branches (the main watcher).
type Rebases interface {
	RequestRebase(ctx context.Context, ids []task.ID, all bool) ([]mainwatch.Request, error)
}

// Options configure a Service.
type Options struct {
	Store   Store
	Records Records
	// Personas are the persona set tasks are checked against; nil lets
	// any persona through.
	Personas *persona.Set
	// Priority and Engine fill in what a create request leaves out.
	Priority int
	Engine   string
	// AutoMerge enqueues a completed task's work for merge.
	AutoMerge bool
	// Now and Rand are the clock and the source of task IDs (time.Now
	// and crypto/rand.Reader in production).
	Now    func() time.Time
	Rand   io.Reader
	Logger *slog.Logger
}

// Runtime is what runs tasks and carries their work on; it is built after
// the service, since its parts act through the service.
type Runtime struct {
	Runner    Runner
	Workflows Workflows
	Merges    Merges
	Rebases   Rebases
}

// Service changes tasks' lives. It is safe for concurrent use once Bind
// has been called.
type Service struct {
	o   Options
	st  Store
	rec Records
	log *slog.Logger
	rt  Runtime
}

// New returns a Service. Before tasks run, Bind gives it the runtime.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{o: o, st: o.Store, rec: o.Records, log: o.Logger.With("component", "tasks")}
}

// Bind gives the service the runtime. It is called once, while the daemon
// is wired, before any other method but Create, Add, Depend and the reads.
func (s *Service) Bind(rt Runtime) { s.rt = rt }

// maxIDTries bounds retries on ID collisions, which are rare (2^25 IDs).
const maxIDTries = 8

// Create checks spec and creates the task, or the workflow task with its
// phases. The checks are made here once: a persona must be assignable, an
// engine one that runs tasks, a workflow's personas assignable; a mistake is
// a *task.InvalidError (the user's to fix).
func (s *Service) Create(ctx context.Context, spec task.Spec) (task.Task, error) {
	if set := s.o.Personas; set != nil {
		if spec.Persona != "" {
			if _, err := set.Assignable(spec.Persona); err != nil {
				return task.Task{}, &task.InvalidError{Field: "persona", Msg: err.Error()}
			}
		}
		if len(spec.Workflow) > 0 {
			if err := set.CheckPhases(spec.Workflow); err != nil {
				return task.Task{}, &task.InvalidError{Field: "workflow", Msg: err.Error()}
			}
		}
	}
	if s.rt.Runner != nil {
		// The engine named, or the configured default for a task that is
		// not a workflow: a task that could only fail when it runs is
		// refused now.
		name, from := spec.Engine, ""
		if name == "" && len(spec.Workflow) == 0 {
			name, from = s.o.Engine, " (tasks.default_engine)"
		}
		if names := s.rt.Runner.Engines(); name != "" && !slices.Contains(names, name) {
			return task.Task{}, &task.InvalidError{Field: "engine", Msg: fmt.Sprintf("%q%s: no such engine; engines: %s", name, from, strings.Join(names, ", "))}
		}
		// An engine that cannot run as installed (a CLI missing or too
		// old) refuses the task with its hint; one waiting for setup
		// (a model to configure) takes it and holds it queued.
		if rd, ok := s.rt.Runner.(interface{ EngineReady(string) error }); ok && name != "" {
			if err := rd.EngineReady(name); errors.Is(err, engine.ErrUnavailable) {
				return task.Task{}, &task.InvalidError{Field: "engine", Msg: err.Error()}
			}
		}
	}
	if len(spec.Workflow) > 0 && s.rt.Workflows != nil {
		return s.rt.Workflows.Start(ctx, spec)
	}
	return s.Add(ctx, spec)
}

// Add stores a new task of spec, checked already (a workflow's phases),
// and records task.created.
func (s *Service) Add(ctx context.Context, spec task.Spec) (task.Task, error) {
	if spec.Engine == "" {
		spec.Engine = s.o.Engine
	}
	if spec.ParentID != "" {
		pid, err := s.st.ResolveTask(ctx, string(spec.ParentID))
		if err != nil {
			return task.Task{}, fmt.Errorf("parent: %w", err)
		}
		spec.ParentID = pid
	}
	for range maxIDTries {
		id, err := task.NewID(s.o.Rand)
		if err != nil {
			return task.Task{}, err
		}
		t, err := task.New(id, spec, s.o.Now())
		if err != nil {
			return task.Task{}, err
		}
		ev := event.New(t.CreatedAt, t.ID, event.TaskCreated{
			Description: t.Description, Status: t.Status, Priority: t.Priority, Tags: t.Tags,
			ParentID: t.ParentID, Persona: t.Persona, Engine: t.Engine, Repo: t.Repo,
		})
		_, err = s.st.CreateTask(ctx, t, ev)
		if errors.Is(err, store.ErrExists) {
			continue
		}
		if err != nil {
			return task.Task{}, fmt.Errorf("creating a task: %w", err)
		}
		s.log.Info("task created", "task_id", t.ID, "status", t.Status)
		return t, nil
	}
	return task.Task{}, fmt.Errorf("creating a task: no free id after %d tries", maxIDTries)
}

// Resolve finds the task a user's reference names.
func (s *Service) Resolve(ctx context.Context, ref string) (task.ID, error) {
	return s.st.ResolveTask(ctx, ref)
}

// Detail is a task with its blockers, readiness, queued messages and the
// messages it never saw because it finished first (Returned).
type Detail struct {
	Task      task.Task
	Readiness task.Readiness
	Blockers  []task.ID
	Pending   []inject.Injection
	Returned  []inject.Injection
}

// Get returns the task ref names, with its details.
func (s *Service) Get(ctx context.Context, ref string) (Detail, error) {
	id, err := s.st.ResolveTask(ctx, ref)
	if err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, id)
}

func (s *Service) detail(ctx context.Context, id task.ID) (Detail, error) {
	t, err := s.st.GetTask(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{Task: t}
	if d.Blockers, err = s.rec.Blockers(ctx, id); err != nil {
		return Detail{}, err
	}
	if d.Readiness, err = s.rec.Readiness(ctx, id); err != nil {
		return Detail{}, err
	}
	if d.Pending, err = s.rec.Pending(ctx, id); err != nil {
		return Detail{}, err
	}
	if d.Returned, err = s.rec.Returned(ctx, id); err != nil {
		return Detail{}, err
	}
	return d, nil
}

// ListQuery selects a page of tasks for List.
type ListQuery struct {
	// Statuses selects tasks in these statuses; with none, the unfinished
	// ones, or every task when All is set.
	Statuses []task.Status
	All      bool
	// After is a task reference (an ID or a unique prefix, as Resolve takes):
	// the page starts after that task. Empty starts at the oldest task.
	After string
	// Limit caps the page; 0 means no cap.
	Limit int
}

// Page is one page of a listing, as the store serves it: what listings
// show of each task, oldest first, each a task.Summary as JSON, joined by
// ",\n" (the inside of a JSON array); N of them; and Next, the ID to pass
// as After for the next page when more tasks remain (else empty).
type Page = store.SummaryPage

// List returns a page of the tasks q selects, read from the store's listing
// column: nothing is decoded or encoded.
func (s *Service) List(ctx context.Context, q ListQuery) (Page, error) {
	if q.Limit < 0 {
		return Page{}, &task.InvalidError{Field: "limit", Msg: fmt.Sprintf("is %d; want 0 (no cap) or more", q.Limit)}
	}
	opts := store.ListOptions{Statuses: q.Statuses}
	if len(q.Statuses) == 0 && !q.All {
		opts.Statuses = []task.Status{task.Queued, task.Running, task.Waiting, task.Paused, task.Merging}
	}
	if q.After != "" {
		id, err := s.st.ResolveTask(ctx, q.After)
		if err != nil {
			return Page{}, err
		}
		opts.After = id
	}
	opts.Limit = q.Limit
	return s.st.ListSummariesJSON(ctx, opts)
}

// Depend makes task id wait until blocker completes.
func (s *Service) Depend(ctx context.Context, id, blocker task.ID) (Detail, error) {
	dep := task.Dependency{Task: id, Blocker: blocker}
	if _, err := s.st.AddDependency(ctx, dep, event.New(s.o.Now(), id, event.TaskDependency{Blocker: blocker})); err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, id)
}

// Recover runs at daemon start: every task that was running when the daemon
// stopped goes back to queued, marked to resume from its last stored turn.
// Waiting and paused tasks keep their state. It returns the tasks marked.
func (s *Service) Recover(ctx context.Context) ([]task.ID, error) {
	running, err := s.st.ListTasks(ctx, store.ListOptions{Statuses: []task.Status{task.Running}})
	if err != nil {
		return nil, fmt.Errorf("recovering running tasks: %w", err)
	}
	var ids []task.ID
	now := s.o.Now()
	for _, t := range running {
		mark := store.Transition(task.Queued, "daemon restarted; resumes from its last turn", now)
		_, _, err := s.st.UpdateTask(ctx, t.ID, func(t *task.Task) ([]event.Event, error) {
			evs, err := mark(t)
			t.ResumePending = true
			return evs, err
		})
		if err != nil {
			return ids, fmt.Errorf("recovering task %s: %w", t.ID, err)
		}
		ids = append(ids, t.ID)
	}
	// A waiting task with a message that must reach it (the user's, a
	// pause, an urgent one) was to be woken by a daemon that died first:
	// Quiet is not stored, so only what holds a task's end counts here.
	waiting, err := s.st.ListTasks(ctx, store.ListOptions{Statuses: []task.Status{task.Waiting}})
	if err != nil {
		return ids, fmt.Errorf("recovering waiting tasks: %w", err)
	}
	for _, t := range waiting {
		pending, err := s.rec.Pending(ctx, t.ID)
		if err != nil {
			return ids, fmt.Errorf("recovering task %s: %w", t.ID, err)
		}
		if !slices.ContainsFunc(pending, inject.Injection.HoldsEnd) {
			continue
		}
		if _, _, err := s.st.UpdateTask(ctx, t.ID, store.Transition(task.Queued, "a message arrived while the daemon was down", now)); err != nil {
			var te *task.TransitionError
			if !errors.As(err, &te) {
				return ids, fmt.Errorf("recovering task %s: %w", t.ID, err)
			}
		}
	}
	if len(ids) > 0 {
		if _, err := s.st.AppendEvents(ctx, event.New(now, "", event.DaemonRecovered{ResumePending: ids})); err != nil {
			return ids, err
		}
		s.log.Info("recovered tasks", "count", len(ids))
	}
	return ids, nil
}
