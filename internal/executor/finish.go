package executor

// How a run ends: its outcome becomes the task's status, or the task goes
// back to the queue.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// safeRun runs the engine, turning a panic into a failed outcome.
func (e *Executor) safeRun(ctx context.Context, en engine.Engine, r engine.Run) (out engine.Outcome) {
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("engine panicked", "task_id", r.Task.ID, "panic", p)
			out = engine.Outcome{Status: engine.Failed, Reason: fmt.Sprintf("the %s engine crashed: %v", en.Name(), p)}
		}
	}()
	return en.Run(ctx, r)
}

// finishTimeout bounds the writes that record a run's end.
const finishTimeout = 10 * time.Second

// finish records how a run ended and returns the status it moved the task
// to ("" when none). Its writes wait for space on a full disk (the run
// stays registered meanwhile, as the store still says running), until the
// executor stops.
func (e *Executor) finish(id task.ID, out engine.Outcome, cause error) task.Status {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.log.Info("task run ended", "task_id", id, "outcome", out.Status, "reason", out.Reason, "turn", out.Turn)
	var to task.Status
	switch out.Status {
	case engine.Completed:
		err := e.writeRetrying(ctx, id, "the task's end", func(ctx context.Context) error { return e.close(ctx, id) })
		switch {
		case errors.As(err, new(*store.PendingError)):
			// Messages arrived after the engine's last look at the queue:
			// the task runs again to read them before it may end.
			e.log.Info("task end held: messages arrived as it finished", "task_id", id)
			e.resumeFor(ctx, id, "messages arrived as it finished; it resumes to read them")
			return task.Queued
		case err != nil:
			e.logMove(id, task.Completed, err)
			return ""
		}
		cctx, cancel := context.WithTimeout(ctx, finishTimeout)
		defer cancel()
		if e.complete != nil && e.complete(cctx, id, out.Reason) {
			if t, err := e.st.GetTask(ctx, id); err != nil || t.Status != task.Running {
				return "" // Complete moved it on.
			}
			// Complete could not record its move (a full disk, say): the
			// task must not stay running with no run.
			to = task.Paused
			out.Reason = fmt.Sprintf("the agent finished (%s) but its move to the merge queue was not recorded; `neuraphage merge enqueue %s` queues its work", out.Reason, id)
			break
		}
		to = task.Completed
	case engine.Failed:
		to = task.Failed
	case engine.Waiting:
		to = task.Waiting
	case engine.Paused:
		to = task.Paused
	case engine.Stopped:
		switch {
		case errors.Is(cause, errCancelled):
			return "" // Cancel already moved it.
		case errors.Is(cause, errShutdown):
			e.requeue(id, "the daemon is stopping; resumes from its last turn")
		default:
			e.requeue(id, "its run stopped; resumes from its last turn")
		}
		return task.Queued
	default:
		to = task.Failed
		out.Reason = fmt.Sprintf("engine returned an unknown outcome %q: %s", out.Status, out.Reason)
	}
	move := store.Transition(to, out.Reason, e.now())
	if err := e.writeRetrying(ctx, id, "the task's outcome", func(ctx context.Context) error {
		_, _, err := e.st.UpdateTask(ctx, id, move)
		return err
	}); err != nil {
		e.logMove(id, to, err)
		return ""
	}
	return to
}

func (e *Executor) logMove(id task.ID, to task.Status, err error) {
	var te *task.TransitionError
	if errors.As(err, &te) {
		// The user moved the task first (cancelled it, say): theirs stands.
		e.log.Info("task outcome not applied", "task_id", id, "to", to, "err", err)
		return
	}
	e.log.Error("recording a task's outcome", "task_id", id, "to", to, "err", err)
}

// close marks a running task Closing, refused by the store while messages
// wait in its queue (*store.PendingError): from then on no message is
// taken for it, so none can wait unseen while its result is recorded.
func (e *Executor) close(ctx context.Context, id task.ID) error {
	_, _, err := e.st.UpdateTask(ctx, id, func(t *task.Task) ([]event.Event, error) {
		if t.Status != task.Running {
			return nil, &task.TransitionError{ID: t.ID, From: t.Status, To: task.Completed}
		}
		t.Closing = true
		return nil, nil
	})
	return err
}

// resumeFor puts a running task back in the queue to run again from its
// last turn, for reason.
func (e *Executor) resumeFor(ctx context.Context, id task.ID, reason string) {
	move := store.Transition(task.Queued, reason, e.now())
	if err := e.writeRetrying(ctx, id, "the task's requeue", func(ctx context.Context) error {
		_, _, err := e.st.UpdateTask(ctx, id, move)
		return err
	}); err != nil {
		e.logMove(id, task.Queued, err)
	}
}

// requeue puts a running task back in the queue, to resume from its last turn.
func (e *Executor) requeue(id task.ID, reason string) {
	move := store.Transition(task.Queued, reason, e.now())
	err := e.writeRetrying(context.Background(), id, "the task's requeue", func(ctx context.Context) error {
		_, _, err := e.st.UpdateTask(ctx, id, func(t *task.Task) ([]event.Event, error) {
			evs, err := move(t)
			t.ResumePending = err == nil
			return evs, err
		})
		return err
	})
	if err != nil {
		e.logMove(id, task.Queued, err)
	}
}

// finishEarly ends a task that could not start.
func (e *Executor) finishEarly(ctx context.Context, id task.ID, to task.Status, reason string) {
	e.log.Warn("task not started", "task_id", id, "to", to, "reason", reason)
	if _, _, err := e.st.UpdateTask(ctx, id, store.Transition(to, reason, e.now())); err != nil {
		e.logMove(id, to, err)
	}
}

// errMovedMeanwhile refuses a wake whose view of the task is stale.
var errMovedMeanwhile = errors.New("the task moved meanwhile")

// wake queues task id if it is waiting for its user and one of the
// messages ids is still undelivered in its queue. The move is stored only
// if the task is still as read, waiting since before the queue was read:
// a wake that lost a race with another (which queued the task, whose next
// run may already be running and reading the same messages) must not move
// that run's task back to the queue, which would drop its outcome and run
// it again. A task that moved on meanwhile is left to whoever moved it.
func (e *Executor) wake(ctx context.Context, id task.ID, ids []int64) {
	for ctx.Err() == nil {
		t, err := e.st.GetTask(ctx, id)
		if err != nil || t.Status != task.Waiting {
			return
		}
		pending, err := e.st.Pending(ctx, id)
		if err != nil {
			e.log.Error("waking a waiting task", "task_id", id, "err", err)
			return
		}
		if !slices.ContainsFunc(pending, func(p inject.Injection) bool { return slices.Contains(ids, p.ID) }) {
			return // read already, or returned
		}
		if e.hooks.waking != nil {
			e.hooks.waking(id)
		}
		move := store.Transition(task.Queued, "a message arrived", e.now())
		_, _, err = e.st.UpdateTask(ctx, id, func(cur *task.Task) ([]event.Event, error) {
			// Waiting all along (same status, same update) means no run
			// took the messages in between.
			if cur.Status != task.Waiting || !cur.UpdatedAt.Equal(t.UpdatedAt) {
				return nil, errMovedMeanwhile
			}
			return move(cur)
		})
		switch {
		case errors.Is(err, errMovedMeanwhile):
			continue // look again: still waiting (changed otherwise), or moved on
		case err != nil:
			e.log.Error("waking a waiting task", "task_id", id, "err", err)
		}
		return
	}
}
