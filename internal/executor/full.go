package executor

// A full data disk: a write that fails for want of space holds the run
// where it is, in memory, and is tried again until it succeeds, so that
// the executor's view (the run goes on) and the store's (the task is
// running) never part.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// diskFull is what the executor knows of a full disk.
type diskFull struct {
	since   time.Time        // zero when writes succeed
	err     string           // the last failed write's error
	waiting map[task.ID]bool // the tasks whose writes wait for space
	tasks   []task.ID        // every task that waited in this episode
}

// held says why runs wait for space, or "".
func (f *diskFull) held() string {
	if f.since.IsZero() {
		return ""
	}
	return fmt.Sprintf("the data disk is full since %s (%s): %d task(s) wait to store their progress and go on when space returns",
		f.since.Format("15:04:05"), words.Clip(f.err, 120), len(f.waiting))
}

// writeRetrying runs write, trying it again while it fails with
// store.ErrFull, with waits from e.fullRetry doubling up to 30 times it,
// until it succeeds, fails otherwise, ctx ends or the executor stops (then
// the last error is returned). Each try is bounded by finishTimeout. What
// says what is being written, for the log.
func (e *Executor) writeRetrying(ctx context.Context, id task.ID, what string, write func(ctx context.Context) error) error {
	wait := e.fullRetry
	for {
		actx, cancel := context.WithTimeout(ctx, finishTimeout)
		err := write(actx)
		cancel()
		if !errors.Is(err, store.ErrFull) {
			e.spaceBack(id)
			return err
		}
		e.noteFull(id, what, err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-e.quit:
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 30*e.fullRetry)
	}
}

// noteFull records that task id's write found the disk full: the first
// of an episode is logged and published (live only: the log cannot take
// it).
func (e *Executor) noteFull(id task.ID, what string, err error) {
	e.mu.Lock()
	f := &e.full
	first := f.since.IsZero()
	if first {
		f.since = e.now()
		f.waiting = map[task.ID]bool{}
		f.tasks = nil
	}
	f.err = err.Error()
	if !f.waiting[id] {
		f.waiting[id] = true
		if !slices.Contains(f.tasks, id) {
			f.tasks = append(f.tasks, id)
		}
	}
	e.mu.Unlock()
	if first {
		e.log.Error("the data disk is full: runs wait in memory and retry their writes", "task_id", id, "writing", what, "err", err)
		e.bus.Publish(event.New(e.now(), id, event.DiskFull{Err: err.Error(), Tasks: []task.ID{id}}))
	}
}

// spaceBack records that task id's write went through: once no task
// waits, the episode ends with a logged event.
func (e *Executor) spaceBack(id task.ID) {
	e.mu.Lock()
	f := &e.full
	if f.since.IsZero() || !f.waiting[id] {
		e.mu.Unlock()
		return
	}
	delete(f.waiting, id)
	if len(f.waiting) > 0 {
		e.mu.Unlock()
		return
	}
	p := event.DiskFull{Recovered: true, Tasks: f.tasks, WaitedMs: e.now().Sub(f.since).Milliseconds()}
	*f = diskFull{}
	e.mu.Unlock()
	e.log.Info("space returned: the waiting runs go on", "tasks", p.Tasks, "waited_ms", p.WaitedMs)
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	if _, err := e.runSt.AppendEvents(ctx, event.New(e.now(), "", p)); err != nil {
		e.log.Warn("recording that space returned", "err", err)
	}
}
