package merge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// casRetries bounds how often one entry starts over because the target
// moved while it was being gated.
const casRetries = 3

// outcome is how processing an entry ended.
type outcome struct {
	state  store.MergeState
	detail string
	files  []string
	base   string // the target's commit a conflict was found against
	commit string
	pr     string
	// conflict or gate failure, to send back or park.
	conflict bool
	gate     *gateFailure
	// quiet: still waiting for the same reason; no new event.
	quiet bool
	// batched: landed with a batch, which tells the main-branch watcher
	// once for all its entries.
	batched bool
}

type gateFailure struct {
	exit   int
	output string
}

// process takes one entry through the queue. It reports whether the
// queue may go on to the next entry (false: the entry waits, or the queue
// stops).
func (q *Queue) process(ctx context.Context, e store.MergeEntry) bool {
	start := q.now()
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fl := &inflight{cancel: cancel, done: make(chan struct{})}
	q.mu.Lock()
	q.running[e.ID] = fl
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		delete(q.running, e.ID)
		q.mu.Unlock()
		close(fl.done)
	}()

	// A waiting entry tried again says so only when something changes:
	// no event per retry while the user's checkout stays dirty.
	retry := e.State == store.MergeWaiting
	waitedFor := e.Detail
	target, _ := git.RevParse(ctx, e.Repo, "refs/heads/"+e.Target)
	e, _, err := q.st.UpdateMerge(ctx, e.ID, func(m *store.MergeEntry) ([]event.Event, error) {
		if !m.State.Open() {
			return nil, errClosed
		}
		now := q.now().UTC()
		m.State, m.Attempts, m.StartedAt = store.MergeRunning, m.Attempts+1, &now
		if retry {
			return nil, nil
		}
		return []event.Event{event.New(now, m.TaskID, event.MergeStarted{Entry: m.ID, Target: m.Target, TargetCommit: target, Attempt: m.Attempts})}, nil
	})
	if errors.Is(err, errClosed) {
		return true
	}
	if err != nil {
		q.log.Error("starting a merge", "entry", e.ID, "err", err)
		return false
	}
	q.log.Info("merge started", "task_id", e.TaskID, "entry", e.ID, "target", e.Target)

	out, err := q.land(pctx, e)
	// Work that reached the target is recorded whatever happened meanwhile
	// (git commands that write are never killed half way).
	if landed := err == nil && (out.state == store.MergeLanded || out.state == store.MergePR); !landed {
		if ctx.Err() != nil {
			// The daemon is stopping: the entry goes back to queued and
			// the next start takes it up again from the beginning.
			q.requeue(e, "the daemon stopped while it was being merged")
			return false
		}
		if pctx.Err() != nil {
			return true // cancelled: Cancel records it once this returns
		}
	}
	if err != nil {
		out = outcome{state: store.MergeParked, detail: err.Error()}
	}
	out.quiet = retry && out.state == store.MergeWaiting && out.detail == waitedFor
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer rcancel()
	return q.record(rctx, e, out, start) && ctx.Err() == nil
}

// inflight is an entry being processed.
type inflight struct {
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when its processing returned
}

var errClosed = errors.New("entry closed")

// requeue puts an interrupted entry back to queued.
func (q *Queue) requeue(e store.MergeEntry, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := q.st.UpdateMerge(ctx, e.ID, func(m *store.MergeEntry) ([]event.Event, error) {
		if m.State != store.MergeRunning {
			return nil, errClosed
		}
		m.State, m.Detail = store.MergeQueued, why
		if m.Step == stepBatch {
			// Requeued only when the batch did not move the target.
			m.Step, m.StepTip, m.Commit = "", "", ""
		}
		return nil, nil
	}); err != nil && !errors.Is(err, errClosed) {
		q.log.Error("requeueing an interrupted merge", "entry", e.ID, "err", err)
	}
}

// land does the work: check, bring up to date, gate, land (or open a PR).
func (q *Queue) land(ctx context.Context, e store.MergeEntry) (outcome, error) {
	t, err := q.st.GetTask(ctx, e.TaskID)
	if err != nil {
		return outcome{}, err
	}
	switch {
	case t.Status == task.Cancelled && t.FinishedAt != nil && t.FinishedAt.After(e.EnqueuedAt):
		return outcome{state: store.MergeCancelled, detail: "its task was cancelled"}, nil
	case t.Status == task.Paused:
		// Paused after it was enqueued (enqueueing a paused task makes it
		// merging): the user holds it; `merge enqueue` queues it again.
		return outcome{state: store.MergeCancelled, detail: "its task was paused"}, nil
	case t.Status == task.Queued || t.Status == task.Running || t.Status == task.Waiting:
		return outcome{state: store.MergeCancelled, detail: "its task is at work again; it is enqueued when it completes"}, nil
	}
	w, err := q.wt.Provision(ctx, t)
	if err != nil {
		return outcome{}, fmt.Errorf("its worktree is not available: %w", err)
	}
	// Work left uncommitted in the worktree (a user's edit, say) goes with it.
	// Commit names the worktree's HEAD: the first round starts from it;
	// a later one (the target moved after the branch was brought up to
	// it) reads it again.
	head, _, err := q.wt.Commit(ctx, e.TaskID, commitMessage(e.TaskID, "uncommitted work found at merge time"))
	if err != nil {
		return outcome{}, err
	}
	for round := range casRetries {
		base, err := git.RevParse(ctx, e.Repo, "refs/heads/"+e.Target)
		if err != nil {
			return outcome{}, fmt.Errorf("the target branch %s: %w", e.Target, err)
		}
		tip := head
		if round > 0 {
			if tip, err = git.RevParse(ctx, w.Path, "HEAD"); err != nil {
				return outcome{}, err
			}
		}
		if done, err := git.IsAncestor(ctx, e.Repo, tip, base); err != nil {
			return outcome{}, err
		} else if done {
			// Recorded like any landing, so that a cleanup a kill
			// interrupts is finished at the next start.
			if err := q.wt.MarkLanded(ctx, e.TaskID, base, tip); err != nil {
				q.log.Error("recording a landing", "task_id", e.TaskID, "err", err)
			}
			return outcome{state: store.MergeLanded, commit: base, detail: "already on " + e.Target}, nil
		}
		pred, err := git.MergeTree(ctx, e.Repo, base, tip)
		if err != nil {
			return outcome{}, err
		}
		if !pred.Clean {
			return outcome{conflict: true, files: pred.Conflicts, base: base, detail: conflictDetail(e.Target, base, pred.Conflicts)}, nil
		}
		tip, files, err := q.update(ctx, e.ID, w.Path, base)
		if err != nil {
			return outcome{}, err
		}
		if files != nil {
			return outcome{conflict: true, files: files, base: base, detail: conflictDetail(e.Target, base, files)}, nil
		}
		if q.cfg.Gate != "" {
			if g, err := q.gate(ctx, w.Path, q.wt.Env(w)); err != nil {
				return outcome{}, err
			} else if g != nil {
				return outcome{gate: g, detail: fmt.Sprintf("the gate `%s` failed (exit %d): %s", q.cfg.Gate, g.exit, lastLines(g.output, 3))}, nil
			}
		}
		if q.cfg.PR {
			return q.openPR(ctx, e, t)
		}
		commit, err := q.commitFor(ctx, w.Path, e, t, base, tip)
		if err != nil {
			return outcome{}, err
		}
		out, err := q.advance(ctx, e, base, commit, "neuraphage: land "+e.Branch)
		if errors.Is(err, errMoved) {
			continue // the target moved meanwhile: start over from the new one
		}
		if err != nil {
			return outcome{}, err
		}
		if out.state == store.MergeLanded {
			if err := q.wt.MarkLanded(ctx, e.TaskID, commit, tip); err != nil {
				q.log.Error("recording a landing", "task_id", e.TaskID, "err", err)
			}
		}
		return out, nil
	}
	return outcome{state: store.MergeQueued, detail: fmt.Sprintf("%s kept moving while this was gated; tried %d times", e.Target, casRetries)}, nil
}

func conflictDetail(target, base string, files []string) string {
	return fmt.Sprintf("conflicts with %s (at %s) in %s", target, words.ShortCommit(base), strings.Join(files, ", "))
}

// identity returns the environment that signs the queue's commits.
func (q *Queue) identity(ctx context.Context, dir string) []string {
	return git.Identity(ctx, dir, q.cfg.AuthorName, q.cfg.AuthorEmail)
}

// update brings the branch checked out in dir up to base: a rebase onto it
// (rebase strategy) or a merge of it (merge, squash). On a conflict it
// aborts, leaving the branch as it was, and returns the conflicting files.
//
// The step is recorded in entry id before it starts and cleared once git
// returned: a daemon killed meanwhile leaves it for the next start to roll
// back (rollBack).
func (q *Queue) update(ctx context.Context, id int64, dir, base string) (string, []string, error) {
	tip, err := git.RevParse(ctx, dir, "HEAD")
	if err != nil {
		return "", nil, err
	}
	if ok, err := git.IsAncestor(ctx, dir, base, tip); err != nil || ok {
		return tip, nil, err // already on top of base
	}
	env := q.identity(ctx, dir)
	args, abort := []string{"merge", "--no-edit", "--no-ff", base}, []string{"merge", "--abort"}
	if q.cfg.Strategy == Rebase {
		// A branch that already merged the target (how an agent resolves a
		// conflict it was sent back with) is merged again, not rebased: a
		// rebase would drop that merge and meet the same conflict.
		merges, err := git.Run(ctx, dir, "rev-list", "--merges", "--max-count=1", base+".."+tip)
		if err != nil {
			return "", nil, err
		}
		if strings.TrimSpace(merges) == "" {
			args, abort = []string{"rebase", base}, []string{"rebase", "--abort"}
		}
	}
	if err := q.beginStep(ctx, id, args[0], tip); err != nil {
		return "", nil, err
	}
	defer q.endStep(ctx, id)
	var files []string
	err = git.Locked(ctx, dir, func(ctx context.Context) error {
		if _, err := git.RunEnv(ctx, dir, env, args...); err != nil {
			out, derr := git.Run(ctx, dir, "diff", "--name-only", "--diff-filter=U")
			if derr != nil || strings.TrimSpace(out) == "" {
				// Not a conflict: undo whatever was started and report.
				git.Run(context.WithoutCancel(ctx), dir, abort...)
				return err
			}
			files = strings.Fields(out)
			if _, aerr := git.Run(context.WithoutCancel(ctx), dir, abort...); aerr != nil {
				return fmt.Errorf("aborting the %s after a conflict: %w", args[0], aerr)
			}
		}
		return nil
	})
	if err != nil || files != nil {
		return "", files, err
	}
	tip, err = git.RevParse(ctx, dir, "HEAD")
	return tip, nil, err
}

// gate runs the gate command in dir, with the daemon's environment but
// without its keys, tokens and own variables ([proc.Secret]): the gate runs
// code the task wrote. A failure to run it at all is an
// error; a non-zero exit or a timeout is a *gateFailure.
func (q *Queue) gate(ctx context.Context, dir string, env []string) (*gateFailure, error) {
	timeout := q.cfg.GateTimeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	res, err := proc.Run(ctx, proc.Cmd{Dir: dir, Shell: q.cfg.Gate, Timeout: timeout, MaxOutput: 16 << 10, Env: append(proc.WithoutSecrets(os.Environ()), env...)})
	if err != nil {
		return nil, fmt.Errorf("running the gate %q: %w", q.cfg.Gate, err)
	}
	switch {
	case res.TimedOut:
		return &gateFailure{exit: -1, output: fmt.Sprintf("timed out after %s\n%s", timeout, res.Output)}, nil
	case res.ExitCode != 0:
		return &gateFailure{exit: res.ExitCode, output: res.Output}, nil
	}
	return nil, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// commitFor returns the commit that lands: the rebased tip, a merge commit
// or a squash commit on base, made with commit-tree (no work tree touched).
func (q *Queue) commitFor(ctx context.Context, dir string, e store.MergeEntry, t task.Task, base, tip string) (string, error) {
	if q.cfg.Strategy == Rebase {
		return tip, nil
	}
	summary := summaryOf(t)
	msg := fmt.Sprintf("%s\n\nNeuraphage-Task: %s\n", summary, t.ID)
	parents := []string{"-p", base}
	if q.cfg.Strategy == Merge {
		msg = fmt.Sprintf("Merge branch '%s': %s\n\nNeuraphage-Task: %s\n", e.Branch, summary, t.ID)
		parents = append(parents, "-p", tip)
	}
	args := append([]string{"commit-tree", tip + "^{tree}"}, parents...)
	out, err := git.RunEnv(ctx, dir, q.identity(ctx, dir), append(args, "-m", msg)...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// summaryOf is the first line of what the agent said it did.
func summaryOf(t task.Task) string {
	s := t.CloseReason
	if i := strings.Index(s, " (committed on "); i > 0 {
		s = s[:i]
	}
	s = words.FirstLine(s)
	if s == "" {
		s = words.FirstLine(t.Description)
	}
	if len(s) > 72 {
		s = s[:69] + "..."
	}
	return s
}

var errMoved = errors.New("the target moved")

// advance moves the target from base to commit, which descends from it.
// When the target is checked out in a work tree (the user's, usually), the
// move is a fast-forward there, only when that checkout is clean, and git
// refuses it if it would overwrite an untracked file; otherwise the ref is
// compare-and-swapped. A target that moved is errMoved.
func (q *Queue) advance(ctx context.Context, e store.MergeEntry, base, commit, message string) (outcome, error) {
	var out outcome
	err := git.Locked(ctx, e.Repo, func(ctx context.Context) error {
		now, err := git.RevParse(ctx, e.Repo, "refs/heads/"+e.Target)
		if err != nil {
			return err
		}
		if now != base {
			return errMoved
		}
		list, err := git.Worktrees(ctx, e.Repo)
		if err != nil {
			return err
		}
		for _, wt := range list {
			if wt.Branch != e.Target || wt.Bare {
				continue
			}
			st, err := git.WorkStatus(ctx, wt.Path)
			if err != nil {
				return err
			}
			if st.InProgress == "" && (len(st.Changed) > 0 || len(st.Untracked) > 0) {
				if kept, err := q.mendFastForward(ctx, e.ID, wt.Path, commit); err != nil {
					return err
				} else if kept != "" {
					if st, err = git.WorkStatus(ctx, wt.Path); err != nil {
						return err
					}
				}
			}
			if len(st.Changed) > 0 || st.InProgress != "" {
				st.Untracked = nil // untracked files do not hold a landing up
				out = outcome{state: store.MergeWaiting, detail: fmt.Sprintf("%s is checked out at %s, which holds %s; it lands once that checkout is clean (your changes are not touched)", e.Target, wt.Path, st.Describe())}
				return nil
			}
			if _, err := git.Run(ctx, wt.Path, "merge", "--ff-only", "--no-edit", commit); err != nil {
				// git's whole message: it names the files in the way.
				msg := err.Error()
				var gerr *git.Error
				if errors.As(err, &gerr) && gerr.Stderr != "" {
					msg = words.OneLine(gerr.Stderr)
				}
				out = outcome{state: store.MergeWaiting, detail: fmt.Sprintf("git would not fast-forward the checkout of %s at %s (your files there are not touched): %s", e.Target, wt.Path, words.Tail(msg, 600))}
				return nil
			}
			out = outcome{state: store.MergeLanded, commit: commit}
			return nil
		}
		if _, err := git.Run(ctx, e.Repo, "update-ref", "-m", message, "refs/heads/"+e.Target, commit, base); err != nil {
			if cur, _ := git.RevParse(ctx, e.Repo, "refs/heads/"+e.Target); cur != base {
				return errMoved
			}
			return err
		}
		out = outcome{state: store.MergeLanded, commit: commit}
		return nil
	})
	return out, err
}

// openPR pushes the branch and opens a pull request with gh.
func (q *Queue) openPR(ctx context.Context, e store.MergeEntry, t task.Task) (outcome, error) {
	gh, err := q.lookPath("gh")
	if err != nil {
		return outcome{state: store.MergeParked, detail: "merge.pr is set but gh is not installed (or not in PATH); install gh, or set merge.pr false, then `neuraphage merge retry " + string(t.ID) + "`"}, nil
	}
	w, err := q.wt.Get(ctx, t.ID)
	if err != nil {
		return outcome{}, err
	}
	if _, err := git.Run(ctx, w.Path, "push", "--force-with-lease", "-u", q.cfg.Remote, e.Branch+":"+e.Branch); err != nil {
		return outcome{}, fmt.Errorf("pushing %s to %s: %w", e.Branch, q.cfg.Remote, err)
	}
	body := fmt.Sprintf("%s\n\nTask %s: %s\n\nOpened by Neuraphage.", summaryOf(t), t.ID, t.Description)
	res, err := proc.Run(ctx, proc.Cmd{
		Dir: w.Path, Args: []string{gh, "pr", "create", "--base", e.Target, "--head", e.Branch, "--title", summaryOf(t), "--body", body},
		Timeout: 2 * time.Minute, MaxOutput: 8 << 10,
	})
	if err != nil {
		return outcome{}, fmt.Errorf("running gh: %w", err)
	}
	if res.ExitCode != 0 || res.TimedOut {
		return outcome{}, fmt.Errorf("gh pr create failed (exit %d): %s", res.ExitCode, lastLines(res.Output, 3))
	}
	url := ""
	for _, l := range strings.Split(res.Output, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
			url = l
		}
	}
	return outcome{state: store.MergePR, pr: url, detail: "pull request " + url}, nil
}

// record stores how the entry ended, tells the task, moves it on and
// cleans up. It reports whether the queue may go on.
func (q *Queue) record(ctx context.Context, e store.MergeEntry, out outcome, start time.Time) bool {
	t, err := q.st.GetTask(ctx, e.TaskID)
	if err != nil {
		q.log.Error("reading a merged task", "task_id", e.TaskID, "err", err)
		return false
	}
	if out.conflict {
		if y, ok := q.yieldOf(ctx, e, t, out.files); ok {
			return q.recordYield(ctx, e, out, y)
		}
	}
	w, _ := q.wt.Get(ctx, e.TaskID)
	now := q.now().UTC()
	var evs []event.Event
	var moveTo task.Status
	var moveWhy, message string
	var kind inject.Kind
	switch {
	case out.conflict || out.gate != nil:
		sent, err := q.st.ListMerges(ctx, store.MergeQuery{TaskID: e.TaskID})
		if err != nil {
			q.log.Error("counting send-backs", "task_id", e.TaskID, "err", err)
		}
		sendBacks := 0
		for _, m := range sent {
			if m.State == store.MergeSentBack {
				sendBacks++
			}
		}
		sendBack := t.Status == task.Merging && sendBacks < q.cfg.MaxSendBacks
		out.state = store.MergeParked
		if sendBack {
			out.state = store.MergeSentBack
		}
		if out.conflict {
			kind = inject.Rebase
			message = fmt.Sprintf("Your work could not land on %s: your branch %s conflicts with %s (now at %s) in: %s.\n"+
				"Bring your branch up to date in your working directory: run `git merge %s`, resolve the conflicts so that both your change and the one on %s are kept, commit, check the result, then complete the task again.",
				e.Target, e.Branch, e.Target, words.ShortCommit(out.base), strings.Join(out.files, ", "), e.Target, e.Target)
			evs = append(evs, event.New(now, e.TaskID, event.MergeConflicted{Entry: e.ID, Target: e.Target, Files: out.files, SentBack: sendBack}))
		} else {
			kind = inject.Message
			message = fmt.Sprintf("Your work could not land on %s: the merge gate `%s` failed (exit %d) on your branch brought up to date with %s. Its output ends:\n\n%s\n\nFix the problem, commit, and complete the task again.",
				e.Target, q.cfg.Gate, out.gate.exit, e.Target, words.Tail(out.gate.output, 4000))
			evs = append(evs, event.New(now, e.TaskID, event.MergeGateFailed{Entry: e.ID, Command: q.cfg.Gate, ExitCode: out.gate.exit, Output: words.Tail(out.gate.output, 2000), SentBack: sendBack}))
		}
		switch {
		case sendBack:
			moveTo, moveWhy = task.Queued, "sent back by the merge queue: "+out.detail
		case t.Status == task.Merging:
			moveTo = task.Paused
			moveWhy = fmt.Sprintf("merge parked after %d send-back(s): %s; fix it on branch %s and `neuraphage merge retry %s`, or `neuraphage task resume %s` to let the agent try again", sendBacks, out.detail, e.Branch, e.TaskID, e.TaskID)
			evs = append(evs, event.New(now, e.TaskID, event.MergeParked{Entry: e.ID, Reason: out.detail}))
		default:
			evs = append(evs, event.New(now, e.TaskID, event.MergeParked{Entry: e.ID, Reason: out.detail}))
		}
	case out.state == store.MergeLanded:
		evs = append(evs, event.New(now, e.TaskID, event.MergeLanded{Entry: e.ID, Target: e.Target, Commit: out.commit, Strategy: q.cfg.Strategy, DurationMs: now.Sub(start).Milliseconds()}))
		if t.Status == task.Merging {
			moveTo, moveWhy = task.Completed, fmt.Sprintf("%s (landed on %s as %s)", summaryOf(t), e.Target, words.ShortCommit(out.commit))
		}
	case out.state == store.MergePR:
		evs = append(evs, event.New(now, e.TaskID, event.PROpened{Entry: e.ID, Branch: e.Branch, Target: e.Target, URL: out.pr}))
		if t.Status == task.Merging {
			moveTo, moveWhy = task.Completed, fmt.Sprintf("%s (pull request opened: %s)", summaryOf(t), out.pr)
		}
	case out.state == store.MergeWaiting && !out.quiet:
		evs = append(evs, event.New(now, e.TaskID, event.MergeWaiting{Entry: e.ID, Reason: out.detail}))
	case out.state == store.MergeParked:
		evs = append(evs, event.New(now, e.TaskID, event.MergeParked{Entry: e.ID, Reason: out.detail}))
		if t.Status == task.Merging {
			moveTo, moveWhy = task.Paused, fmt.Sprintf("merge parked: %s; `neuraphage merge retry %s` tries again", out.detail, e.TaskID)
		}
	case out.state == store.MergeCancelled:
		evs = append(evs, event.New(now, e.TaskID, event.MergeCancelled{Entry: e.ID, Reason: out.detail}))
	}
	if _, _, err := q.st.UpdateMerge(ctx, e.ID, func(m *store.MergeEntry) ([]event.Event, error) {
		m.State, m.Detail, m.Files, m.Commit, m.PRURL = out.state, out.detail, out.files, out.commit, out.pr
		if m.Step == stepBatch {
			m.Step, m.StepTip = "", ""
		}
		if !m.State.Open() {
			m.FinishedAt = &now
		}
		return evs, nil
	}); err != nil {
		q.log.Error("recording a merge outcome", "entry", e.ID, "err", err)
		return false
	}
	if !out.state.Open() {
		q.closedOrder(e.ID)
	}
	if !out.quiet {
		q.log.Info("merge ended", "task_id", e.TaskID, "entry", e.ID, "state", out.state, "detail", out.detail)
	}
	if message != "" && q.inject != nil && (moveTo == task.Queued || moveTo == task.Paused) {
		attrs := map[string]string{"target": e.Target}
		if len(out.files) > 0 {
			attrs["files"] = strings.Join(out.files, ",")
		}
		if err := q.inject(ctx, inject.Injection{TaskID: e.TaskID, Kind: kind, Source: inject.FromMergeQueue, Attrs: attrs, Text: message}); err != nil {
			q.log.Error("telling a task about its merge", "task_id", e.TaskID, "err", err)
		}
	}
	if moveTo != "" {
		q.moveTask(ctx, e.TaskID, moveTo, moveWhy)
	}
	if out.state == store.MergeLanded {
		if q.landed != nil && !out.batched {
			q.landed(e.Repo, e.Target, out.commit)
		}
		if q.cfg.Cleanup && w.TaskID != "" {
			q.cleanLater(e.TaskID, e.Target)
		}
	}
	return out.state != store.MergeWaiting && out.state != store.MergeQueued
}
