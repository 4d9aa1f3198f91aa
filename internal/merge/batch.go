package merge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Batches. When several entries of one target are ready, the queue lands
// them together: it builds, without any work tree, a chain of commits on
// top of the target — for each entry in queue order, its branch brought up
// to the chain so far with `git merge-tree --write-tree` and made into
// commits with `git commit-tree` (the rebased commits, a merge commit or a
// squash commit, as the strategy says) — gates the chain's result (when a
// gate is configured; bisecting on failure), and moves the target to the
// chain's last commit in one compare-and-swap (or one fast-forward of the
// user's checkout). The tasks' worktrees and branches are not touched.
//
// An entry that conflicts with the target itself is sent back (or parked)
// as a single landing would be. An entry that conflicts only with an
// earlier entry of the same batch is left queued and tried again on the
// new tip: the earlier one may still fail its gate and not land, and the
// conflict a task is sent back with must name a commit that is on the
// target. An entry the batch cannot build — its worktree is not there, or
// a commit of its branch conflicts half way through a rebase — is left to
// the one-at-a-time path, which reports what is wrong as it always did.
//
// Crash safety: building writes objects only. Before the target moves,
// every entry of the chain records the step "batch" with the commit it
// lands as (Commit) and its branch tip (StepTip). A daemon killed after
// that finds, at its next start, either the target containing that commit
// (the landing is recorded and its cleanup finished) or not (the step is
// cleared and the entry lands from the start).

const (
	stepBatch = "batch"
	// maxBatch bounds the entries one batch takes.
	maxBatch = 64
)

// member is an entry of a batch.
type member struct {
	e     store.MergeEntry
	t     task.Task
	env   []string      // the gate's extra environment (the task's port)
	tip   string        // its branch tip
	ready chan struct{} // closed once prepared (nil: prepared)
	bad   bool          // preparing found it cannot go in a batch
	// cs are its branch's commits not on csBase, read when prepared.
	cs     []git.RangeCommit
	csBase string
	start  time.Time

	retry     bool
	waitedFor string

	ctx    context.Context // cancelled by Cancel
	fl     *inflight
	closed bool // its entry closed before it started (cancelled)

	// What building decided.
	commit   string   // the chain commit it lands as
	already  bool     // its work is on the target already
	deferred bool     // left queued for the next round
	out      *outcome // decided: a conflict or a failed gate
	badBuild bool     // cannot be built: the one-at-a-time path takes it
}

// inChain reports whether m lands as a commit of the chain.
func (m *member) inChain() bool {
	return m.commit != "" && m.out == nil && !m.deferred && !m.closed && !m.already
}

// readyEntries returns the open entries, oldest first, that may be taken
// now (not waiting out a retry), at most maxBatch.
func (q *Queue) readyEntries(open []store.MergeEntry) []store.MergeEntry {
	var out []store.MergeEntry
	for _, e := range open {
		if e.State == store.MergeWaiting && q.now().Sub(e.UpdatedAt) < q.cfg.Retry {
			continue
		}
		if out = append(out, e); len(out) == maxBatch {
			break
		}
	}
	return out
}

// landBatch lands entries (ready, oldest first) as one batch. It reports
// whether it took the first entry up (false: nothing was changed, the
// one-at-a-time path takes it) and whether the queue may go on.
func (q *Queue) landBatch(ctx context.Context, repo, target string, entries []store.MergeEntry) (took, goOn bool) {
	base, err := git.RevParse(ctx, repo, "refs/heads/"+target)
	if err != nil {
		return false, true
	}
	// Entries are prepared a few at a time while the chain is built in
	// order behind them.
	ms, wait := q.prepareAll(ctx, repo, base, entries)
	defer wait()
	if <-ms[0].ready; ms[0].bad {
		return false, true
	}
	env := q.identity(ctx, repo)
	built, err := q.build(ctx, repo, base, base, ms, env)
	wait()
	if err != nil || ms[0].badBuild || ms[0].deferred || ctx.Err() != nil {
		if err != nil && ctx.Err() == nil {
			q.log.Warn("building a batch; landing one at a time", "target", target, "err", err)
		}
		return false, true
	}
	var live []*member
	for _, m := range ms {
		if !m.bad && !m.deferred && !m.badBuild {
			live = append(live, m)
		}
	}
	if len(live) < 2 {
		return false, true
	}
	q.startMembers(ctx, live)
	defer func() {
		for _, m := range live {
			q.finishMember(m)
		}
	}()
	if ctx.Err() != nil {
		q.requeueAll(live)
		return true, false
	}
	result, err := q.landChain(ctx, repo, target, live, env, base, built)
	if ctx.Err() != nil && !result.landed {
		q.requeueAll(live)
		return true, false
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer rcancel()
	goOn = ctx.Err() == nil
	// The members' outcomes are recorded side by side: each is its own
	// entry, task and worktree, and the store commits what arrives
	// together in one transaction, where one after the other each waited
	// for a commit of its own (three per entry).
	var (
		wg      sync.WaitGroup
		stopped atomic.Bool
		sem     = make(chan struct{}, recordParallel)
	)
	for _, m := range live {
		var out outcome
		landedAs := ""
		switch {
		case m.closed:
			continue // Cancel records it
		case m.out != nil:
			out = *m.out
		case m.already:
			// Its work is on the target (as of the base it was built on).
			on := result.base
			if on == "" {
				on = base
			}
			out = outcome{state: store.MergeLanded, commit: on, detail: "already on " + target}
			landedAs = on
		case err != nil:
			out = outcome{state: store.MergeParked, detail: err.Error()}
		case m.deferred || m.badBuild || result.requeue != "":
			why := "it conflicts with an entry landed before it in the same batch; it is tried again on the new tip"
			if result.requeue != "" {
				why = result.requeue
			}
			q.requeue(m.e, why)
			continue
		case result.waiting != nil:
			out = *result.waiting
			out.quiet = m.retry && out.detail == m.waitedFor
			goOn = false
		case m.inChain() && result.landed:
			out = outcome{state: store.MergeLanded, commit: m.commit}
			landedAs = m.commit
		default:
			q.requeue(m.e, "the batch it was in did not land")
			continue
		}
		out.batched = true
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if landedAs != "" {
				if err := q.wt.MarkLanded(rctx, m.e.TaskID, landedAs, m.tip); err != nil {
					q.log.Error("recording a landing", "task_id", m.e.TaskID, "err", err)
				}
			}
			if !q.record(rctx, m.e, out, m.start) {
				stopped.Store(true)
			}
		})
	}
	wg.Wait()
	if stopped.Load() {
		goOn = false
	}
	if result.landed && q.landed != nil {
		q.landed(repo, target, result.tip)
	}
	if result.landed {
		q.log.Info("batch landed", "target", target, "entries", result.count, "commit", result.tip, "landed", batchDetail(result.chain))
	}
	return true, goOn
}

// recordParallel bounds the batch members whose outcomes are recorded at
// once.
const recordParallel = 16

// prepareParallel bounds the entries prepared at once: each runs git in
// its own worktree.
const prepareParallel = 8

// prepareAll prepares entries, a few at a time, and reads each one's
// commits not on base. It returns at once a member per entry, whose ready
// is closed once it is prepared (bad: it cannot go in a batch), and wait,
// which joins the work.
func (q *Queue) prepareAll(ctx context.Context, repo, base string, entries []store.MergeEntry) ([]*member, func()) {
	ms := make([]*member, len(entries))
	for i, e := range entries {
		ms[i] = &member{e: e, ready: make(chan struct{})}
	}
	sem := make(chan struct{}, prepareParallel)
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, m := range ms {
			sem <- struct{}{} // in order: the chain is built in order
			wg.Go(func() {
				defer func() { <-sem }()
				defer close(m.ready)
				if !q.prepare(ctx, m) {
					m.bad = true
					return
				}
				if cs, err := git.RangeCommits(ctx, repo, base, m.tip); err == nil {
					m.cs, m.csBase = cs, base
				}
			})
		}
	})
	return ms, wg.Wait
}

// prepare reads an entry's task and worktree and commits work left
// uncommitted there, as the one-at-a-time path does; false leaves the
// entry to that path (its task is not in a state to land, its worktree is
// not there).
func (q *Queue) prepare(ctx context.Context, m *member) bool {
	e := m.e
	if e.Step != "" {
		return false
	}
	t, err := q.st.GetTask(ctx, e.TaskID)
	if err != nil {
		return false
	}
	switch t.Status {
	case task.Merging, task.Completed, task.Failed:
	default:
		return false
	}
	w, err := q.wt.Get(ctx, e.TaskID)
	if err != nil || w.State != store.WorktreeActive {
		return false
	}
	// Asked again although the task's completion committed its work (a
	// second status): the worktree is the user's too, and between the
	// completion and the landing (a queue behind other entries, a gate, a
	// retry, an entry enqueued by hand long after) the user, or a process
	// the agent left running, may have changed it; that work lands with it.
	tip, _, err := q.wt.Commit(ctx, e.TaskID, commitMessage(e.TaskID, "uncommitted work found at merge time"))
	if err != nil {
		return false
	}
	m.t, m.env, m.tip, m.start = t, q.wt.Env(w), tip, q.now()
	m.retry, m.waitedFor = e.State == store.MergeWaiting, e.Detail
	return true
}

// startMembers moves the members' entries to running, as process does for
// one, and makes each cancellable.
func (q *Queue) startMembers(ctx context.Context, ms []*member) {
	target, _ := git.RevParse(ctx, ms[0].e.Repo, "refs/heads/"+ms[0].e.Target)
	_ = eachMember(ms, func(m *member) error {
		mctx, cancel := context.WithCancelCause(ctx)
		m.ctx, m.fl = mctx, &inflight{cancel: cancel, done: make(chan struct{})}
		q.mu.Lock()
		q.running[m.e.ID] = m.fl
		q.mu.Unlock()
		e, _, err := q.st.UpdateMerge(ctx, m.e.ID, func(x *store.MergeEntry) ([]event.Event, error) {
			if !x.State.Open() {
				return nil, errClosed
			}
			now := q.now().UTC()
			x.State, x.Attempts, x.StartedAt = store.MergeRunning, x.Attempts+1, &now
			if m.retry {
				return nil, nil
			}
			return []event.Event{event.New(now, x.TaskID, event.MergeStarted{Entry: x.ID, Target: x.Target, TargetCommit: target, Attempt: x.Attempts})}, nil
		})
		if err != nil {
			if !errors.Is(err, errClosed) {
				q.log.Error("starting a merge", "entry", m.e.ID, "err", err)
			}
			m.closed = true
			return nil
		}
		m.e = e
		q.log.Info("merge started", "task_id", e.TaskID, "entry", e.ID, "target", e.Target, "batch", len(ms))
		return nil
	})
}

// eachMember runs fn for every member, up to recordParallel at once (each
// member is its own entry, task and worktree), and returns the first
// error once all have returned.
func eachMember(ms []*member, fn func(m *member) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		sem   = make(chan struct{}, recordParallel)
	)
	for _, m := range ms {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(m); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// finishMember ends a member's processing (Cancel waits for it).
func (q *Queue) finishMember(m *member) {
	if m.fl == nil {
		return
	}
	m.fl.cancel(nil)
	q.mu.Lock()
	if q.running[m.e.ID] == m.fl {
		delete(q.running, m.e.ID)
	}
	q.mu.Unlock()
	close(m.fl.done)
	m.fl = nil
}

func (q *Queue) requeueAll(ms []*member) {
	for _, m := range ms {
		if !m.closed {
			q.requeue(m.e, "the daemon stopped while it was being merged")
		}
	}
}

// chainResult is how landing a chain ended.
type chainResult struct {
	base, tip string
	landed    bool
	count     int // entries landed
	chain     []*member
	waiting   *outcome // the user's checkout holds the landing up
	requeue   string   // why every entry in the chain goes back to queued
}

// landChain gates and lands the chain of ms (built already on builtBase,
// ending at built), building it again from the target's new commit when
// the target moved meanwhile, and without a member Cancel stopped.
func (q *Queue) landChain(ctx context.Context, repo, target string, ms []*member, env []string, builtBase, built string) (chainResult, error) {
	for range casRetries {
		base, err := git.RevParse(ctx, repo, "refs/heads/"+target)
		if err != nil {
			return chainResult{}, fmt.Errorf("the target branch %s: %w", target, err)
		}
		tip := ""
		if base == builtBase {
			tip = built
		}
		builtBase = ""
		for {
			if q.dropCancelled(ctx, ms) {
				tip = ""
			}
			if tip == "" {
				if tip, err = q.build(ctx, repo, base, base, ms, env); err != nil {
					return chainResult{}, err
				}
			}
			if q.cfg.Gate != "" {
				// A member cancelled meanwhile stops the gate: the chain
				// without it is built and gated again, and its Cancel
				// does not wait for the gate.
				gctx, stop := cancelOnAny(ctx, ms)
				tip, err = q.bisect(gctx, repo, base, base, ms, env, tip)
				interrupted := gctx.Err() != nil
				stop()
				if ctx.Err() != nil {
					return chainResult{}, ctx.Err()
				}
				if interrupted {
					for _, m := range ms {
						if m.out != nil && m.out.gate != nil {
							m.out = nil // not known: the gate was stopped
						}
					}
					tip = ""
					continue
				}
				if err != nil {
					return chainResult{}, err
				}
			}
			if !q.dropCancelled(ctx, ms) {
				break
			}
			tip = ""
		}
		res := chainResult{base: base, tip: tip}
		for _, m := range ms {
			if m.inChain() {
				res.chain = append(res.chain, m)
			}
		}
		if len(res.chain) == 0 {
			return res, nil
		}
		// Every member's step is recorded before the target moves; side
		// by side, so that the store commits them together.
		if err := eachMember(res.chain, func(m *member) error { return q.beginBatchStep(ctx, m) }); err != nil {
			return res, err
		}
		out, err := q.advance(ctx, res.chain[0].e, base, tip, fmt.Sprintf("neuraphage: land %d branches", len(res.chain)))
		if errors.Is(err, errMoved) {
			continue
		}
		if err != nil {
			return res, err
		}
		switch out.state {
		case store.MergeLanded:
			res.landed, res.count = true, len(res.chain)
		case store.MergeWaiting:
			res.waiting = &out
		}
		return res, nil
	}
	return chainResult{requeue: fmt.Sprintf("%s kept moving while this was gated; tried %d times", target, casRetries)}, nil
}

// dropCancelled takes the members Cancel stopped (not those stopped with
// the queue) out of the batch and lets their Cancel go on; it reports
// whether one of them was in the chain.
func (q *Queue) dropCancelled(ctx context.Context, ms []*member) bool {
	if ctx.Err() != nil {
		return false
	}
	dropped := false
	for _, m := range ms {
		if !m.closed && m.ctx != nil && m.ctx.Err() != nil {
			dropped = dropped || m.inChain()
			m.closed = true
			q.finishMember(m)
		}
	}
	return dropped
}

// cancelOnAny returns a context of ctx's that ends when a member's does.
func cancelOnAny(ctx context.Context, ms []*member) (context.Context, func()) {
	gctx, cancel := context.WithCancel(ctx)
	stops := []func() bool{}
	for _, m := range ms {
		if m.ctx != nil && !m.closed {
			stops = append(stops, context.AfterFunc(m.ctx, cancel))
		}
	}
	return gctx, func() {
		for _, s := range stops {
			s()
		}
		cancel()
	}
}

// beginBatchStep records, before the target moves, the commit m lands as.
func (q *Queue) beginBatchStep(ctx context.Context, m *member) error {
	_, _, err := q.st.UpdateMerge(context.WithoutCancel(ctx), m.e.ID, func(x *store.MergeEntry) ([]event.Event, error) {
		x.Step, x.StepTip, x.Commit = stepBatch, m.tip, m.commit
		return nil, nil
	})
	if err != nil {
		return fmt.Errorf("recording the batch about to land: %w", err)
	}
	return nil
}

var errHalfWay = errors.New("a commit conflicts half way through the rebase")

// batchDetail names the entries of a chain for a log line.
func batchDetail(ms []*member) string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, string(m.e.TaskID)+"@"+words.ShortCommit(m.commit))
	}
	return strings.Join(ids, ", ")
}
