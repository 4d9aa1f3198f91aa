package merge

import (
	"context"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The cleanup after a landing (merge.cleanup: the landed task's worktree
// removed, its branch tip archived and its ignored files kept first) runs
// off the landing path: record hands the task to cleanLoop, a goroutine of
// Run's, and the queue goes on to the next entry at once. The landing is
// recorded on the worktree (MarkLanded) before the target moves past it, so
// a cleanup the daemon did not get to — it stopped or was killed — is
// finished at the next start (finishCleanups), as one a kill interrupted
// half way.

// cleanupNice is how far the cleanup's CPU priority is lowered (nice).
const cleanupNice = 10

// cleanups is the queue of landed tasks whose worktrees wait for removal.
type cleanups struct {
	mu      sync.Mutex
	pending []cleanup
	queued  map[task.ID]bool
	wake    chan struct{} // one token: cleanLoop has work
}

type cleanup struct {
	id     task.ID
	target string
}

// cleanLater queues the cleanup of a landed task's worktree.
func (q *Queue) cleanLater(id task.ID, target string) {
	c := &q.cleanups
	c.mu.Lock()
	if c.queued == nil {
		c.queued = map[task.ID]bool{}
	}
	if !c.queued[id] {
		c.queued[id] = true
		c.pending = append(c.pending, cleanup{id: id, target: target})
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// cleanLoop removes the worktrees queued by cleanLater until ctx ends; what
// is left then is finished at the next start.
//
// The loop runs at a lowered CPU priority, and so do the git processes it
// starts: on a busy machine the cores go to tasks being provisioned, run
// and landed first, and removals catch up when they are free (a worktree
// waiting for removal holds nothing up).
func (q *Queue) cleanLoop(ctx context.Context) {
	if err := proc.Lower(cleanupNice); err != nil {
		q.log.Debug("the cleanup of landed worktrees runs at the daemon's priority", "err", err)
	}
	c := &q.cleanups
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		for ctx.Err() == nil {
			c.mu.Lock()
			if len(c.pending) == 0 {
				c.mu.Unlock()
				break
			}
			next := c.pending[0]
			c.pending = c.pending[1:]
			c.mu.Unlock()
			q.cleanOne(ctx, next)
			c.mu.Lock()
			delete(c.queued, next.id)
			c.mu.Unlock()
		}
	}
}

// cleanOne removes a landed task's worktree once its task finished. The
// removal is never cut short by the daemon stopping (it would leave a
// half-removed worktree for the next start to mend): it has its own
// bounded time.
func (q *Queue) cleanOne(ctx context.Context, c cleanup) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	cur, err := q.st.GetTask(rctx, c.id)
	if err != nil || !cur.Status.Terminal() {
		return
	}
	_, err = q.wt.Remove(rctx, c.id, "its work landed on "+c.target, true)
	if err != nil {
		// git no longer knowing the worktree is mended, and the removal
		// tried once more; any other refusal stands.
		if ok, rerr := q.wt.RepairBackLink(rctx, c.id); rerr != nil {
			q.log.Warn("checking a landed worktree's back link", "task_id", c.id, "err", rerr)
		} else if ok {
			_, err = q.wt.Remove(rctx, c.id, "its work landed on "+c.target, true)
		}
	}
	if err != nil {
		q.log.Info("worktree kept after landing", "task_id", c.id, "reason", err)
	}
}
