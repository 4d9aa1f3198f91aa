// Package workflow runs multi-persona workflows (seed 004): a workflow task
// carries phases (design, implement, review with several personas at once,
// revise); each phase runs as child tasks on the workflow task's branch,
// after the phase before it; what a phase produced (a summary, a review's
// structured findings) is handed to the later phases before they start; when
// the last phase is done the workflow task completes and its branch goes to
// the merge queue like any task's.
//
// Ordering uses the task dependencies the scheduler already honours: every
// task of a phase waits for every task of the phase before, and the
// workflow task waits for the last phase. A phase task's outcome is queued
// for the later phases' tasks while it completes, before they can start, so
// they see it in their first context.
package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// EngineName is the engine of workflow tasks.
const EngineName = "workflow"

// Store is what a workflow reads of tasks and logs of their phases.
type Store interface {
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	ListTasks(ctx context.Context, opts store.ListOptions) ([]task.Task, error)
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
}

// Options wires a Service.
type Options struct {
	Store Store
	// Create stores a new task whose spec is checked already (tasks.Service.Add).
	Create func(ctx context.Context, spec task.Spec) (task.Task, error)
	// Depend makes id wait for blocker.
	Depend func(ctx context.Context, id, blocker task.ID) error
	// Resume releases a task created held.
	Resume func(ctx context.Context, id task.ID) error
	// Inject queues a message for a task (the executor's one door).
	Inject func(ctx context.Context, inj inject.Injection) error
	// Commit commits what is uncommitted in the workflow task's worktree
	// on its branch with message.
	Commit func(ctx context.Context, id task.ID, message string) (string, bool, error)
	Logger *slog.Logger
	Now    func() time.Time
}

// Service creates workflow tasks and carries each phase's outcome on.
type Service struct {
	o Options
}

// New returns a Service.
func New(o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{o: o}
}

// Start creates the workflow task of spec (whose Workflow holds the
// phases, their personas already checked) and the tasks of every phase,
// and wires their order. The workflow task is returned; its children are
// listed by `task list`. With spec.Hold the first phase is created held too.
func (s *Service) Start(ctx context.Context, spec task.Spec) (task.Task, error) {
	if len(spec.Workflow) == 0 {
		return task.Task{}, &task.InvalidError{Field: "workflow", Msg: "has no phases"}
	}
	hold := spec.Hold
	spec.Engine = EngineName
	spec.Persona = ""
	spec.Hold = true // released once its phases exist and it waits for them
	parent, err := s.o.Create(ctx, spec)
	if err != nil {
		return task.Task{}, err
	}
	var prev []task.ID
	for i, ph := range spec.Workflow {
		var cur []task.ID
		for _, p := range ph.Personas {
			child, err := s.o.Create(ctx, task.Spec{
				Description: words.Clip(fmt.Sprintf("%s: %s", ph.Name, spec.Description), task.MaxDescriptionLen-len(words.Ellipsis)),
				Context:     phaseContext(parent, i, p),
				Tags:        spec.Tags, Priority: spec.Priority, ParentID: parent.ID, Persona: p,
				Model: spec.Model, Repo: spec.Repo, Budget: spec.Budget, NoSupervision: spec.NoSupervision,
				Phase: &task.PhaseRef{Index: i, Name: ph.Name, Review: ph.Review},
				// Held until its dependencies are in place: a queued task
				// with none yet could start at once.
				Hold: true,
			})
			if err != nil {
				return parent, fmt.Errorf("creating phase %d (%s) for %s: %w", i+1, ph.Name, p, err)
			}
			for _, b := range prev {
				if err := s.o.Depend(ctx, child.ID, b); err != nil {
					return parent, fmt.Errorf("ordering phase %d: %w", i+1, err)
				}
			}
			cur = append(cur, child.ID)
		}
		prev = cur
	}
	for _, b := range prev {
		if err := s.o.Depend(ctx, parent.ID, b); err != nil {
			return parent, fmt.Errorf("ordering the workflow task: %w", err)
		}
	}
	kids, err := s.o.Store.ListTasks(ctx, store.ListOptions{ParentID: parent.ID})
	if err != nil {
		return parent, err
	}
	for _, k := range kids {
		if hold && k.Phase != nil && k.Phase.Index == 0 {
			continue // --no-start: the first phase waits for the user's resume
		}
		if err := s.o.Resume(ctx, k.ID); err != nil {
			return parent, err
		}
	}
	if err := s.o.Resume(ctx, parent.ID); err != nil {
		return parent, err
	}
	return s.o.Store.GetTask(ctx, parent.ID)
}

// WorkTask returns the task whose worktree t works in: a phase works in its
// workflow task's (and its start is recorded there); any other task in its
// own.
func (s *Service) WorkTask(ctx context.Context, t task.Task) (task.Task, error) {
	if t.Phase == nil || t.ParentID == "" {
		return t, nil
	}
	parent, err := s.o.Store.GetTask(ctx, t.ParentID)
	if err != nil {
		return task.Task{}, fmt.Errorf("reading workflow task %s: %w", t.ParentID, err)
	}
	s.PhaseStarting(ctx, t)
	return parent, nil
}

// Completed takes the completion of task id when it is a phase and reports
// whether it did: a phase's work stays on the workflow's branch (PhaseDone),
// and the workflow task goes to the merge queue once all are done. Any
// other task is left to the caller.
func (s *Service) Completed(ctx context.Context, id task.ID, summary string) bool {
	t, err := s.o.Store.GetTask(ctx, id)
	if err != nil || t.Phase == nil {
		return false
	}
	s.PhaseDone(ctx, t, summary)
	return true
}

// PhaseStarting records on the workflow task that phase task t starts.
func (s *Service) PhaseStarting(ctx context.Context, t task.Task) {
	if t.Phase == nil || t.ParentID == "" {
		return
	}
	s.record(ctx, t.ParentID, event.PhaseStarted{Index: t.Phase.Index, Phase: t.Phase.Name, Personas: []string{t.Persona}, Tasks: []string{string(t.ID)}})
}

// phaseContext is the context of the task running persona p in phase i.
func phaseContext(parent task.Task, i int, p string) string {
	var b strings.Builder
	ph := parent.Workflow[i]
	fmt.Fprintf(&b, "This task is phase %d of %d (%s) of workflow task %s:\n\n%s\n\nThe phases:\n",
		i+1, len(parent.Workflow), ph.Name, parent.ID, parent.Description)
	for j, q := range parent.Workflow {
		mark := ""
		if j == i {
			mark = "  <- this one"
		}
		fmt.Fprintf(&b, "%d. %s (%s)%s\n", j+1, q.Name, strings.Join(q.Personas, ", "), mark)
	}
	b.WriteString("\nEvery phase works in the same worktree, on the same branch, one after another; what the phases before produced reaches you as messages.\n")
	if parent.Context != "" {
		fmt.Fprintf(&b, "\nContext of the workflow:\n%s\n", parent.Context)
	}
	if ph.Instructions != "" {
		fmt.Fprintf(&b, "\nInstructions for this phase:\n%s\n", ph.Instructions)
	}
	if ph.Review {
		b.WriteString("\n" + ReviewInstructions + "\n")
	}
	return b.String()
}

// ReviewInstructions tell a review phase how to report.
const ReviewInstructions = `You review the work on this branch (git log and git diff against the base); do not change files.
When done, call complete_task with a summary that is one JSON object:
{"verdict": "approve" or "changes", "findings": [{"severity": "critical" | "important" | "nitpick", "file": "path", "line": 12, "message": "what is wrong and what to do"}]}`

// PhaseDone is told that phase task t completed with summary: the work is
// committed on the workflow's branch, the outcome (a review's findings) is
// recorded, and queued for every task of the later phases.
func (s *Service) PhaseDone(ctx context.Context, t task.Task, summary string) {
	if t.Phase == nil || t.ParentID == "" {
		return
	}
	ph := *t.Phase
	fin := event.PhaseFinished{Index: ph.Index, Phase: ph.Name, Task: string(t.ID), Persona: t.Persona, Status: string(task.Completed), Summary: summary}
	if ph.Review {
		r := ParseReview(summary)
		fin.Verdict, fin.Findings = r.Verdict, r.Findings
		fin.Summary = r.Summary
	}
	msg := fmt.Sprintf("%s (%s, %s): %s", ph.Name, t.Persona, t.ID, words.FirstLine(summary))
	if _, made, err := s.o.Commit(ctx, t.ParentID, words.Clip(msg, 2000)); err != nil {
		s.o.Logger.Warn("committing a phase's work", "task_id", t.ID, "workflow", t.ParentID, "err", err)
	} else if made {
		s.o.Logger.Info("phase work committed", "task_id", t.ID, "workflow", t.ParentID)
	}
	s.record(ctx, t.ParentID, fin)
	next, err := s.o.Store.ListTasks(ctx, store.ListOptions{ParentID: t.ParentID})
	if err != nil {
		s.o.Logger.Error("listing a workflow's tasks", "workflow", t.ParentID, "err", err)
		return
	}
	text := handOff(fin)
	for _, n := range next {
		// Every later phase hears it: the revise phase needs the design
		// as much as the review.
		if n.Phase == nil || n.Phase.Index <= ph.Index || n.Status.Terminal() {
			continue
		}
		attrs := map[string]string{"phase": ph.Name, "task": string(t.ID), "persona": t.Persona}
		if err := s.o.Inject(ctx, inject.Injection{TaskID: n.ID, Kind: inject.Message, Source: inject.FromWorkflow, Attrs: attrs, Text: text}); err != nil {
			s.o.Logger.Warn("handing a phase's outcome on", "from", t.ID, "to", n.ID, "err", err)
		}
	}
}

// handOff is the message the later phases get.
func handOff(f event.PhaseFinished) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Phase %d (%s) is done: %s (task %s)", f.Index+1, f.Phase, f.Persona, f.Task)
	if f.Verdict == "" {
		fmt.Fprintf(&b, " reports:\n\n%s\n", f.Summary)
		return b.String()
	}
	fmt.Fprintf(&b, " reviewed the work. Verdict: %s.", f.Verdict)
	if f.Summary != "" {
		fmt.Fprintf(&b, " %s", f.Summary)
	}
	if len(f.Findings) == 0 {
		b.WriteString("\nNo findings.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "\nFindings (%d):\n", len(f.Findings))
	for _, fd := range f.Findings {
		loc := fd.File
		if loc != "" && fd.Line > 0 {
			loc = fmt.Sprintf("%s:%d", loc, fd.Line)
		}
		if loc != "" {
			loc += ": "
		}
		fmt.Fprintf(&b, "- [%s] %s%s\n", fd.Severity, loc, fd.Message)
	}
	return b.String()
}

// record appends an event about the workflow task.
func (s *Service) record(ctx context.Context, id task.ID, p event.Payload) {
	if _, err := s.o.Store.AppendEvents(ctx, event.New(s.o.Now(), id, p)); err != nil {
		s.o.Logger.Warn("recording a workflow event", "task_id", id, "err", err)
	}
}

// Engine is the engine of workflow tasks. A workflow task runs once every
// phase is done: it completes with a summary of its phases, and its branch
// goes to the merge queue.
type Engine struct{ s *Service }

// Engine returns the engine of workflow tasks.
func (s *Service) Engine() *Engine { return &Engine{s: s} }

// Name implements engine.Engine.
func (*Engine) Name() string { return EngineName }

// Ready implements engine.Engine.
func (*Engine) Ready() error { return nil }

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, r engine.Run) engine.Outcome {
	if _, err := r.Host.Prepare(ctx); err != nil {
		return engine.Outcome{Status: engine.Stopped, Reason: err.Error()}
	}
	// The merge queue sends a conflict or a failed gate back to the task;
	// no agent of the workflow's is running to fix it, so the user is
	// asked (completing again would only loop until the queue parks it).
	inbox, err := r.Host.Inbox(ctx)
	if err != nil {
		return engine.Outcome{Status: engine.Stopped, Reason: err.Error()}
	}
	var back []inject.Injection
	for _, inj := range inbox {
		if inj.Source == inject.FromMergeQueue {
			back = append(back, inj)
		}
	}
	if len(back) > 0 {
		if _, err := r.Host.Commit(ctx, engine.Step{Delivered: back}); err != nil {
			return engine.Outcome{Status: engine.Stopped, Reason: err.Error()}
		}
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("the merge queue sent the workflow's branch back: %s; fix it in the worktree (%s), then `neuraphage merge enqueue %s`",
			words.FirstLine(back[len(back)-1].Text), r.Dir, r.Task.ID)}
	}
	kids, err := e.s.o.Store.ListTasks(ctx, store.ListOptions{ParentID: r.Task.ID})
	if err != nil {
		return engine.Outcome{Status: engine.Stopped, Reason: err.Error()}
	}
	var parts []string
	for i, ph := range r.Task.Workflow {
		var who []string
		for _, k := range kids {
			if k.Phase == nil || k.Phase.Index != i {
				continue
			}
			if k.Status != task.Completed {
				return engine.Outcome{Status: engine.Failed, Reason: fmt.Sprintf("phase %d (%s): task %s is %s", i+1, ph.Name, k.ID, k.Status)}
			}
			who = append(who, fmt.Sprintf("%s %s", k.Persona, k.ID))
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", ph.Name, strings.Join(who, ", ")))
	}
	return engine.Outcome{Status: engine.Completed, Reason: "workflow done: " + strings.Join(parts, " → ")}
}
