// Package merge is the merge queue: it lands finished tasks' branches on
// their target branch one at a time per target, first come first served.
//
// For each entry it predicts conflicts read-only (git merge-tree
// --write-tree); brings the task's branch up to the current target in the
// task's worktree (rebase, or merge for the merge and squash strategies);
// runs the configured gate command there; and lands the result with a
// compare-and-swap of the target ref, or through the user's checkout of the
// target when it is checked out and clean (a fast-forward that git itself
// refuses when it would overwrite anything). A conflict or a failed gate
// goes back to the task as a message (it fixes it and completes again), or
// parks the entry for the user. With merge.pr set it pushes the branch and
// opens a pull request with gh instead.
//
// The user's uncommitted work is never touched: a dirty checkout of the
// target makes the entry wait, and nothing here resets, forces or deletes.
package merge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// Strategies for landing.
const (
	Rebase = "rebase" // rebase the branch onto the target, fast-forward the target
	Merge  = "merge"  // merge commit on the target
	Squash = "squash" // one commit on the target
)

// Config configures the queue.
type Config struct {
	Strategy    string
	Gate        string
	GateTimeout time.Duration
	// MaxSendBacks caps the conflicts and gate failures sent back to one
	// task before its entry is parked.
	MaxSendBacks int
	// PR opens a pull request with gh (pushing to Remote) instead of
	// landing locally.
	PR     bool
	Remote string
	// Cleanup removes a task's worktree once its work landed (only when
	// nothing in it can be lost).
	Cleanup bool
	// AuthorName and AuthorEmail sign the commits the queue makes (merge
	// and squash commits, rebased commits' committer); empty means git's
	// configured identity, else "Neuraphage".
	AuthorName, AuthorEmail string
	// Retry is how often waiting entries are tried again; 0 means 2 s.
	Retry time.Duration
}

// Injector sends a task a message through the executor's injection door:
// from inject.FromMergeQueue, of kind inject.Rebase (a conflict) or
// inject.Message (a failed gate).
type Injector func(ctx context.Context, inj inject.Injection) error

// RefusedError is a request the task's state refuses, with the reason for
// the user: the task is still in flight, it has no branch to merge, its
// entry closed already.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Tasks changes a task's status for the queue: the tasks service, the one
// place where a task's life changes, implements it.
type Tasks interface {
	Move(ctx context.Context, id task.ID, to task.Status, reason string) (task.Task, error)
}

// storeTasks moves statuses in the store directly, for a queue wired
// without a Tasks (its tests).
type storeTasks struct {
	st  Store
	now func() time.Time
}

func (s storeTasks) Move(ctx context.Context, id task.ID, to task.Status, reason string) (task.Task, error) {
	t, _, err := s.st.UpdateTask(ctx, id, store.Transition(to, reason, s.now()))
	return t, err
}

// Store is the merge queue's entries and the tasks they carry.
type Store interface {
	store.MergeQueue
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	ListTasks(ctx context.Context, opts store.ListOptions) ([]task.Task, error)
	UpdateTask(ctx context.Context, id task.ID, m store.Mutation) (task.Task, []event.Event, error)
	// AppendEvents records the queue's ordering decisions.
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
}

// Options wires a Queue.
type Options struct {
	Store Store
	// Tasks moves the queue's tasks (merging, paused, completed); nil
	// moves them in Store.
	Tasks     Tasks
	Worktrees *worktree.Manager
	Config    Config
	Inject    Injector
	Logger    *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LookPath finds gh; nil means proc.LookPath (the PATH).
	LookPath func(string) (string, error)
	// Landed, when set, is called after work landed on target in repo (the
	// main-branch watcher hears of it at once).
	Landed func(repo, target, commit string)
	// Yield, when set, tells a task whose entry conflicts with the target
	// once a smaller overlapping entry ordered before it landed, to rebase:
	// the main watcher's notice (mainwatch.Monitor.TellRebase). Nil, or an
	// error, and the queue tells it itself (an inject.Rebase message).
	Yield func(ctx context.Context, y Yield) error
}

// Queue is the merge queue. Its methods are safe for concurrent use.
type Queue struct {
	st       Store
	tasks    Tasks
	wt       *worktree.Manager
	cfg      Config
	inject   Injector
	log      *slog.Logger
	now      func() time.Time
	lookPath func(string) (string, error)
	landed   func(repo, target, commit string)
	yield    func(ctx context.Context, y Yield) error

	kick chan struct{}

	mu      sync.Mutex
	workers map[string]bool     // queue key → a worker is draining it
	running map[int64]*inflight // entries being processed
	wg      sync.WaitGroup
	// The ordering of overlapping entries (order.go): what each branch
	// tip changes, and the decisions taken for open entries.
	changes map[string]change
	yields  map[int64]yield
	ordered map[int64]map[int64]bool

	cleanups cleanups
}

// New returns a queue; Run starts it.
func New(o Options) *Queue {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LookPath == nil {
		o.LookPath = proc.LookPath
	}
	if o.Config.Strategy == "" {
		o.Config.Strategy = Rebase
	}
	if o.Config.Retry <= 0 {
		o.Config.Retry = 2 * time.Second
	}
	if o.Config.Remote == "" {
		o.Config.Remote = "origin"
	}
	if o.Tasks == nil {
		o.Tasks = storeTasks{st: o.Store, now: o.Now}
	}
	return &Queue{
		st: o.Store, tasks: o.Tasks, wt: o.Worktrees, cfg: o.Config, inject: o.Inject, now: o.Now,
		log: o.Logger.With("component", "merge"), lookPath: o.LookPath, landed: o.Landed, yield: o.Yield,
		kick:     make(chan struct{}, 1),
		workers:  map[string]bool{},
		running:  map[int64]*inflight{},
		changes:  map[string]change{},
		yields:   map[int64]yield{},
		ordered:  map[int64]map[int64]bool{},
		cleanups: cleanups{wake: make(chan struct{}, 1)},
	}
}

// Kick makes the queue look for work now.
func (q *Queue) Kick() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

func key(repo, target string) string { return repo + "\x00" + target }

// Run processes the queue until ctx ends, then waits for the entries in
// progress to stop. An entry interrupted by a stop (or a crash) is taken
// up again from the start by the next Run: every step is safe to redo.
func (q *Queue) Run(ctx context.Context) error {
	if err := q.recover(ctx); err != nil {
		q.log.Error("recovering the merge queue", "err", err)
	}
	tick := time.NewTicker(q.cfg.Retry)
	defer tick.Stop()
	defer q.wg.Wait()
	q.wg.Go(func() { q.cleanLoop(ctx) })
	for {
		q.dispatch(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-q.kick:
		case <-tick.C:
		}
	}
}

// recover finishes what a daemon killed mid-way left: it rolls back the
// git steps entries had begun (rollBack), finishes the cleanup of landed
// worktrees (finishCleanups), and makes sure every merging task has an open
// entry (a daemon killed between a task's move to merging and its enqueue
// left none).
func (q *Queue) recover(ctx context.Context) error {
	open, err := q.st.ListMerges(ctx, store.MergeQuery{Open: true})
	if err != nil {
		return err
	}
	for _, e := range open {
		if e.Step == "" {
			continue
		}
		if err := q.rollBack(ctx, e); err != nil {
			if ctx.Err() != nil {
				return err
			}
			q.log.Error("rolling back an interrupted merge step", "task_id", e.TaskID, "entry", e.ID, "err", err)
			q.record(ctx, e, outcome{state: store.MergeParked, detail: err.Error()}, q.now())
		}
	}
	q.finishCleanups(ctx)
	ts, err := q.st.ListTasks(ctx, store.ListOptions{Statuses: []task.Status{task.Merging}})
	if err != nil {
		return err
	}
	for _, t := range ts {
		open, err := q.st.ListMerges(ctx, store.MergeQuery{TaskID: t.ID, Open: true})
		if err != nil {
			return err
		}
		if len(open) == 0 {
			if _, err := q.enqueue(ctx, t.ID); err != nil {
				q.log.Error("re-enqueueing a merging task", "task_id", t.ID, "err", err)
			}
		}
	}
	return nil
}

// dispatch starts a worker for every queue with open entries and none.
func (q *Queue) dispatch(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	open, err := q.st.ListMerges(ctx, store.MergeQuery{Open: true})
	if err != nil {
		if ctx.Err() == nil {
			q.log.Error("reading the merge queue", "err", err)
		}
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range open {
		k := key(e.Repo, e.Target)
		if q.workers[k] {
			continue
		}
		q.workers[k] = true
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			q.drain(ctx, e.Repo, e.Target)
		}()
	}
}

// drain processes one target's entries in order until none can go on.
func (q *Queue) drain(ctx context.Context, repo, target string) {
	defer func() {
		q.mu.Lock()
		delete(q.workers, key(repo, target))
		q.mu.Unlock()
	}()
	for ctx.Err() == nil {
		open, err := q.st.ListMerges(ctx, store.MergeQuery{Repo: repo, Target: target, Open: true})
		if err != nil || len(open) == 0 {
			return
		}
		e := open[0] // first come, first served
		if e.State == store.MergeWaiting && q.now().Sub(e.UpdatedAt) < q.cfg.Retry {
			return // the ticker brings it back
		}
		// ... but a smaller change of the same files goes first.
		ready := q.order(ctx, repo, target, q.readyEntries(open))
		e = ready[0]
		if len(ready) > 1 && !q.cfg.PR {
			if took, goOn := q.landBatch(ctx, repo, target, ready); took {
				if !goOn {
					return
				}
				continue
			}
		}
		if !q.process(ctx, e) {
			return
		}
	}
}

// Enqueue puts a task's branch in the merge queue of its base branch. The
// task must have finished its work (merging, paused, completed, failed or
// cancelled) and have a worktree record; its uncommitted work is
// committed first. A paused task moves to merging.
func (q *Queue) Enqueue(ctx context.Context, id task.ID) (store.MergeEntry, error) {
	t, err := q.st.GetTask(ctx, id)
	if err != nil {
		return store.MergeEntry{}, err
	}
	switch t.Status {
	case task.Queued, task.Running, task.Waiting:
		return store.MergeEntry{}, &RefusedError{fmt.Errorf("task %s is %s; its work is enqueued for merge when it completes", id, t.Status)}
	}
	if _, err := q.wt.Get(ctx, id); errors.Is(err, store.ErrNotFound) {
		return store.MergeEntry{}, &RefusedError{fmt.Errorf("task %s has no worktree: it never ran in one, so there is no branch to merge", id)}
	} else if err != nil {
		return store.MergeEntry{}, err
	}
	if t.Status == task.Paused {
		// Merging before the entry exists: a worker that takes the entry
		// at once must not find the task paused.
		if _, err := q.tasks.Move(ctx, id, task.Merging, "its work is in the merge queue"); err != nil {
			return store.MergeEntry{}, err
		}
	}
	e, err := q.enqueue(ctx, id)
	if err != nil && t.Status == task.Paused {
		q.moveTask(ctx, id, task.Paused, "it could not be enqueued for merge: "+err.Error())
	}
	return e, err
}

// enqueue adds the entry (the task's worktree record gives repo, branch
// and target).
func (q *Queue) enqueue(ctx context.Context, id task.ID) (store.MergeEntry, error) {
	w, err := q.wt.Get(ctx, id)
	if err != nil {
		return store.MergeEntry{}, err
	}
	ahead, err := q.st.ListMerges(ctx, store.MergeQuery{Repo: w.Repo, Target: w.Base, Open: true})
	if err != nil {
		return store.MergeEntry{}, err
	}
	e, _, err := q.st.EnqueueMerge(ctx, store.MergeEntry{TaskID: id, Repo: w.Repo, Branch: w.Branch, Target: w.Base},
		func(e store.MergeEntry) []event.Event {
			return []event.Event{event.New(q.now(), id, event.MergeQueued{Entry: e.ID, Branch: e.Branch, Target: e.Target, Ahead: len(ahead)})}
		})
	if err != nil {
		return e, err
	}
	q.log.Info("merge queued", "task_id", id, "entry", e.ID, "target", e.Target, "ahead", len(ahead))
	q.Kick()
	return e, nil
}

// Complete is the executor's completion hook: it commits the task's work
// with summary as the message and moves the task to merging with its
// branch in the queue (auto), or to completed with the work left on its
// branch for review. It returns false when the task has no worktree (the
// executor completes it as before).
func (q *Queue) Complete(ctx context.Context, id task.ID, summary string, auto bool) bool {
	w, err := q.wt.Get(ctx, id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			q.log.Error("reading a completed task's worktree", "task_id", id, "err", err)
		}
		return false
	}
	move := func(to task.Status, reason string) {
		if _, err := q.tasks.Move(ctx, id, to, reason); err != nil {
			q.log.Warn("moving a completed task", "task_id", id, "to", to, "err", err)
		}
	}
	tip, _, err := q.wt.Commit(ctx, id, commitMessage(id, summary))
	if err != nil {
		// Nothing is lost: the files stay in the worktree.
		move(task.Paused, fmt.Sprintf("the agent finished (%s) but its work could not be committed: %v; commit it in %s and `neuraphage merge enqueue %s`", summary, err, w.Path, id))
		return true
	}
	if !auto {
		move(task.Completed, fmt.Sprintf("%s (work on branch %s at %s, left for review: `neuraphage merge enqueue %s`)", summary, w.Branch, words.ShortCommit(tip), id))
		return true
	}
	move(task.Merging, fmt.Sprintf("%s (committed on %s at %s; in the merge queue for %s)", summary, w.Branch, words.ShortCommit(tip), w.Base))
	if _, err := q.enqueue(ctx, id); err != nil && !errors.Is(err, store.ErrExists) {
		q.log.Error("enqueueing a completed task", "task_id", id, "err", err)
	}
	return true
}

func commitMessage(id task.ID, summary string) string {
	s := strings.TrimSpace(summary)
	if s == "" {
		s = "work of " + string(id)
	}
	subject, body, _ := strings.Cut(s, "\n")
	if len(subject) > 72 {
		body = subject + "\n" + body
		subject = subject[:69] + "..."
	}
	msg := subject + "\n"
	if strings.TrimSpace(body) != "" {
		msg += "\n" + strings.TrimSpace(body) + "\n"
	}
	return msg + "\nNeuraphage-Task: " + string(id) + "\n"
}

// Retry takes a task's parked (or waiting) entry up again: a new entry
// when the last one closed, an immediate try when it waits.
func (q *Queue) Retry(ctx context.Context, id task.ID) (store.MergeEntry, error) {
	open, err := q.st.ListMerges(ctx, store.MergeQuery{TaskID: id, Open: true})
	if err != nil {
		return store.MergeEntry{}, err
	}
	if len(open) > 0 {
		e := open[0]
		if e.State == store.MergeWaiting {
			e, _, err = q.st.UpdateMerge(ctx, e.ID, func(m *store.MergeEntry) ([]event.Event, error) {
				m.State = store.MergeQueued
				return nil, nil
			})
		}
		q.Kick()
		return e, err
	}
	return q.Enqueue(ctx, id)
}

// Cancel takes a task's open entry out of the queue (stopping it if it is
// being processed). A merging task is paused: its work stays on its branch.
func (q *Queue) Cancel(ctx context.Context, id task.ID, reason string) (store.MergeEntry, error) {
	if reason == "" {
		reason = "cancelled by the user"
	}
	open, err := q.st.ListMerges(ctx, store.MergeQuery{TaskID: id, Open: true})
	if err != nil {
		return store.MergeEntry{}, err
	}
	if len(open) == 0 {
		return store.MergeEntry{}, fmt.Errorf("task %s has nothing in the merge queue: %w", id, store.ErrNotFound)
	}
	e := open[0]
	q.mu.Lock()
	fl := q.running[e.ID]
	q.mu.Unlock()
	if fl != nil {
		// Stop its processing and wait for it: a landing already under
		// way completes and is recorded, and then there is nothing to
		// cancel.
		fl.cancel(errors.New(reason))
		select {
		case <-fl.done:
		case <-ctx.Done():
			return e, ctx.Err()
		}
	}
	e, _, err = q.st.UpdateMerge(ctx, e.ID, func(m *store.MergeEntry) ([]event.Event, error) {
		if !m.State.Open() {
			return nil, &RefusedError{fmt.Errorf("task %s's merge #%d is already %s; nothing to cancel", m.TaskID, m.ID, m.State)}
		}
		now := q.now().UTC()
		m.State, m.Detail, m.FinishedAt = store.MergeCancelled, reason, &now
		return []event.Event{event.New(now, id, event.MergeCancelled{Entry: m.ID, Reason: reason})}, nil
	})
	if err != nil {
		return e, err
	}
	if t, err := q.st.GetTask(ctx, id); err == nil && t.Status == task.Merging {
		w, _ := q.wt.Get(ctx, id)
		q.moveTask(ctx, id, task.Paused, fmt.Sprintf("merge %s; the work stays on branch %s (`neuraphage merge enqueue %s` queues it again)", reason, w.Branch, id))
	}
	return e, nil
}

func (q *Queue) moveTask(ctx context.Context, id task.ID, to task.Status, reason string) {
	if _, err := q.tasks.Move(ctx, id, to, reason); err != nil {
		q.log.Warn("moving a task", "task_id", id, "to", to, "err", err)
	}
}

// Status returns the open entries, then the newest closed ones (up to
// recent), each list oldest first.
func (q *Queue) Status(ctx context.Context, recent int) (open, closed []store.MergeEntry, err error) {
	open, err = q.st.ListMerges(ctx, store.MergeQuery{Open: true})
	if err != nil {
		return nil, nil, err
	}
	all, err := q.st.ListMerges(ctx, store.MergeQuery{Limit: recent + len(open)})
	if err != nil {
		return nil, nil, err
	}
	for _, e := range all {
		if !e.State.Open() {
			closed = append(closed, e)
		}
	}
	if len(closed) > recent {
		closed = closed[len(closed)-recent:]
	}
	return open, closed, nil
}
