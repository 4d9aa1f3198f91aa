package executor

import (
	"context"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Why leftover processes were found, in their events.
const (
	leftoverDeadRun = "left by a daemon that died while the command ran"
	leftoverRunEnd  = "still running when the task's run ended"
)

// StopLeftovers stops the processes that tasks' commands left when a
// daemon died (see proc.Tracker) and reports them, on each task as a
// proc.leftover_stopped event and in the log. The daemon calls it at start,
// before any task runs and before worktrees are reconciled.
func (e *Executor) StopLeftovers(ctx context.Context) {
	if e.procs == nil {
		return
	}
	stopped, err := e.procs.StopLeftovers()
	if err != nil {
		e.log.Warn("reading the records of tasks' processes", "err", err)
	}
	e.reportStopped(ctx, stopped, leftoverDeadRun)
}

// stopTaskProcs stops whatever a task's commands left once its run ended,
// before the task moves on (and its worktree may be removed). Commands stop
// their processes themselves when they end; this finds what escaped that.
func (e *Executor) stopTaskProcs(ctx context.Context, id task.ID) {
	if e.procs == nil {
		return
	}
	stopped, err := e.procs.StopOwner(string(id))
	if err != nil {
		e.log.Warn("reading the records of tasks' processes", "task_id", id, "err", err)
	}
	e.reportStopped(ctx, stopped, leftoverRunEnd)
}

func (e *Executor) reportStopped(ctx context.Context, stopped []proc.Stopped, reason string) {
	for _, s := range stopped {
		p := event.ProcLeftoverStopped{Command: s.Command, Reason: reason, Processes: procEvents(s.Processes), Survivors: procEvents(s.Survivors)}
		pids := make([]int, len(s.Processes))
		for i, q := range s.Processes {
			pids[i] = q.PID
		}
		e.log.Warn("stopped leftover processes of a task", "task_id", s.Owner, "command", s.Command, "pids", pids,
			"survivors", len(s.Survivors), "reason", reason)
		id := task.ID(s.Owner)
		if _, err := e.st.GetTask(ctx, id); err != nil {
			id = "" // not a task of this store: the event stays the daemon's
		}
		if _, err := e.runSt.AppendEvents(ctx, event.New(e.now(), id, p)); err != nil {
			e.log.Error("recording stopped leftover processes", "task_id", s.Owner, "err", err)
		}
	}
}

func procEvents(ps []proc.Process) []event.ProcStopped {
	if len(ps) == 0 {
		return nil
	}
	out := make([]event.ProcStopped, len(ps))
	for i, p := range ps {
		out[i] = event.ProcStopped{PID: p.PID, Command: p.Command}
	}
	return out
}
