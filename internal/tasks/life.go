package tasks

import (
	"context"
	"errors"
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/mainwatch"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Pause holds a task: a queued one is not dispatched, a running one stops
// at its next boundary keeping its conversation.
func (s *Service) Pause(ctx context.Context, id task.ID, reason string) (task.Task, error) {
	return s.rt.Runner.Pause(ctx, id, reason)
}

// Resume puts a paused task back in the queue.
func (s *Service) Resume(ctx context.Context, id task.ID, reason string) (task.Task, error) {
	return s.rt.Runner.Resume(ctx, id, reason)
}

// Cancel stops a task for good; a workflow task's unfinished phase tasks
// go with it.
func (s *Service) Cancel(ctx context.Context, id task.ID, reason string) (task.Task, error) {
	out, err := s.rt.Runner.Cancel(ctx, id, reason)
	if err != nil || len(out.Workflow) == 0 {
		return out, err
	}
	kids, err := s.st.ListTasks(ctx, store.ListOptions{ParentID: id})
	if err != nil {
		return out, err
	}
	for _, k := range kids {
		if k.Phase != nil && !k.Status.Terminal() {
			if _, err := s.rt.Runner.Cancel(ctx, k.ID, "its workflow "+string(id)+" was cancelled"); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// Send queues the user's message for task id, delivered at its next turn
// boundary; an urgent one interrupts the turn in flight. A finished task
// takes none (*task.FinishedError).
func (s *Service) Send(ctx context.Context, id task.ID, text string, urgent bool) (inject.Injection, error) {
	return s.Inject(ctx, inject.Injection{TaskID: id, Kind: inject.Message, Source: inject.FromUser, Text: text, Urgent: urgent})
}

// Nudge queues the user's nudge (a hint) for task id.
func (s *Service) Nudge(ctx context.Context, id task.ID, text string) (inject.Injection, error) {
	return s.Inject(ctx, inject.Injection{TaskID: id, Kind: inject.Nudge, Source: inject.FromUser, Text: text,
		Attrs: map[string]string{"severity": "hint"}})
}

// Inject queues any message for a task through the executor's one door:
// supervisors', the merge queue's, the main watcher's and workflows'.
func (s *Service) Inject(ctx context.Context, inj inject.Injection) (inject.Injection, error) {
	return s.rt.Runner.Inject(ctx, inj)
}

// InjectMany queues several messages through the same door in one store
// commit, with evs and each message's events (record) logged in it: the
// main watcher's notices when main moves (executor.Executor.InjectMany).
func (s *Service) InjectMany(ctx context.Context, injs []inject.Injection, record func(i int, stored inject.Injection) []event.Event, evs ...event.Event) ([]store.Enqueued, error) {
	return s.rt.Runner.InjectMany(ctx, injs, record, evs...)
}

// Escalate moves task id to persona to, or one step up its chain; by says
// who asks ("user", "watcher"). A refusal of the user's request is a
// *task.InvalidError (the user's to fix); a supervisor gets the
// *executor.EscalationRefusedError.
func (s *Service) Escalate(ctx context.Context, id task.ID, to, reason, by string) (executor.Escalation, error) {
	e, err := s.rt.Runner.Escalate(ctx, id, to, reason, by)
	var refused *executor.EscalationRefusedError
	if (by == "" || by == "user") && errors.As(err, &refused) {
		return executor.Escalation{}, &task.InvalidError{Field: "task", Msg: fmt.Sprintf("%s cannot be escalated: %v", refused.ID, refused.Err)}
	}
	return e, err
}

// RequestRebase asks for a blocking rebase of tasks ids, or with all of
// every task that is behind main; each task rebases at its next boundary.
// A request the task's state refuses is a *mainwatch.RefusedError.
func (s *Service) RequestRebase(ctx context.Context, ids []task.ID, all bool) ([]mainwatch.Request, error) {
	return s.rt.Rebases.RequestRebase(ctx, ids, all)
}

// Move changes the status of a task that is not running (the merge
// queue's merging, paused and completed).
func (s *Service) Move(ctx context.Context, id task.ID, to task.Status, reason string) (task.Task, error) {
	t, _, err := s.st.UpdateTask(ctx, id, store.Transition(to, reason, s.o.Now()))
	if err != nil {
		return task.Task{}, err
	}
	s.log.Info("task status changed", "task_id", id, "status", to, "reason", reason)
	return t, nil
}

// Completed routes the work of a task whose agent completed: a workflow's
// phase stays on the workflow's branch, other work goes to the merge
// queue. It reports whether the task goes on elsewhere (the executor
// completes it otherwise).
func (s *Service) Completed(ctx context.Context, id task.ID, summary string) bool {
	if s.rt.Workflows != nil && s.rt.Workflows.Completed(ctx, id, summary) {
		return false
	}
	return s.rt.Merges != nil && s.rt.Merges.Complete(ctx, id, summary, s.o.AutoMerge)
}
