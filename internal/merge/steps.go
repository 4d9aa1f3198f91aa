package merge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// A merge step is a git operation the queue runs in a task's worktree that
// leaves state behind when it is killed half way: the rebase (or merge) that
// brings the branch up to its target. The queue records the step in the
// entry before it starts it and clears it once git returned, so a daemon
// started after a crash knows a half-done operation of that kind as its own
// and rolls it back (rollBack); one it did not record is the user's or the
// agent's, and is left alone.

// beginStep records that the queue is about to run step in entry id's
// worktree, whose branch is at tip.
func (q *Queue) beginStep(ctx context.Context, id int64, step, tip string) error {
	_, _, err := q.st.UpdateMerge(context.WithoutCancel(ctx), id, func(m *store.MergeEntry) ([]event.Event, error) {
		m.Step, m.StepTip = step, tip
		return nil, nil
	})
	if err != nil {
		return fmt.Errorf("recording the %s about to start: %w", step, err)
	}
	return nil
}

// endStep clears the step once git returned (a failure here is harmless:
// the next start finds no operation in progress and clears it then).
func (q *Queue) endStep(ctx context.Context, id int64) {
	_, _, err := q.st.UpdateMerge(context.WithoutCancel(ctx), id, func(m *store.MergeEntry) ([]event.Event, error) {
		m.Step, m.StepTip = "", ""
		return nil, nil
	})
	if err != nil {
		q.log.Warn("clearing a finished merge step", "entry", id, "err", err)
	}
}

// stepOrigin returns the commit the operation in progress in dir started
// from: the original tip a rebase keeps in its state directory, HEAD for a
// merge (which moves it only when it commits).
func stepOrigin(ctx context.Context, dir, step string) (string, error) {
	if step == "merge" {
		return git.RevParse(ctx, dir, "HEAD")
	}
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		p, err := git.Run(ctx, dir, "rev-parse", "--path-format=absolute", "--git-path", d+"/orig-head")
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(strings.TrimSpace(p))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", nil
}

// rollBack undoes the step e records as begun and not ended: the daemon
// that began it died before git returned. A rebase or merge of that kind
// still in progress in the task's worktree, started from the recorded tip,
// is aborted (git puts the branch back where it was; nothing committed,
// uncommitted or ignored is touched), and the branch must then be at the
// recorded tip. An operation of another kind, or from another commit, is not
// the queue's: it is left for processing to report (the task pauses with the
// reason). The step is cleared either way; an error means the branch is not
// where it was and the entry must stop for the user.
func (q *Queue) rollBack(ctx context.Context, e store.MergeEntry) error {
	if e.Step == stepBatch {
		return q.finishBatchStep(ctx, e)
	}
	var rolled bool
	w, err := q.wt.Get(ctx, e.TaskID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if fi, serr := os.Stat(w.Path); err == nil && w.State == store.WorktreeActive && serr == nil && fi.IsDir() {
		err := git.Locked(ctx, w.Path, func(ctx context.Context) error {
			st, err := git.WorkStatus(ctx, w.Path)
			if err != nil {
				return err
			}
			if st.InProgress == "" {
				return nil // it ended (or never began) before the daemon died
			}
			from, err := stepOrigin(ctx, w.Path, e.Step)
			if err != nil {
				return err
			}
			if st.InProgress == "rebase" && e.Step == "rebase" && from == "" {
				// Part of the rebase's state without its orig-head: git
				// was killed while it wrote that state (before anything
				// was checked out) or while `rebase --abort` removed it
				// (after the branch was put back), and --abort cannot read
				// where to go back. With HEAD on the branch at the
				// recorded tip and a clean work tree, dropping that state
				// (--quit, which touches no ref, index or file) is the
				// roll-back.
				if ok, err := startedRebase(ctx, w.Path, w.Branch, e.StepTip); err != nil || !ok || len(st.Changed) > 0 || len(st.Untracked) > 0 {
					if err == nil {
						q.log.Warn("a rebase without its orig-head in a merging task's worktree, with HEAD moved or changes; left alone", "task_id", e.TaskID, "step_tip", e.StepTip)
					}
					return err
				}
				if _, err := git.Run(ctx, w.Path, "rebase", "--quit"); err != nil {
					return fmt.Errorf("dropping the interrupted rebase's state in %s: %w", w.Path, err)
				}
				rolled = true
				return nil
			}
			if st.InProgress != e.Step || from != e.StepTip {
				q.log.Warn("a git operation in a merging task's worktree is not the queue's; left alone",
					"task_id", e.TaskID, "in_progress", st.InProgress, "from", from, "step", e.Step, "step_tip", e.StepTip)
				return nil
			}
			if _, err := git.Run(ctx, w.Path, e.Step, "--abort"); err != nil {
				return fmt.Errorf("aborting the interrupted %s in %s: %w", e.Step, w.Path, err)
			}
			rolled = true
			return nil
		})
		if err != nil {
			return err
		}
		tip, err := git.RevParse(ctx, w.Path, "refs/heads/"+w.Branch)
		if err != nil {
			return err
		}
		if rolled && tip != e.StepTip {
			return fmt.Errorf("after rolling back the interrupted %s, branch %s is at %s, not at %s where it was before; "+
				"nothing was deleted: check the branch (`git log %s`) and `neuraphage merge retry %s`",
				e.Step, w.Branch, words.ShortCommit(tip), words.ShortCommit(e.StepTip), e.StepTip, e.TaskID)
		}
		// HEAD back on the branch: a rebase killed before its first checkout
		// has nothing in progress yet HEAD may be detached.
		if rolled {
			if head, _ := git.Run(ctx, w.Path, "symbolic-ref", "-q", "HEAD"); strings.TrimSpace(head) != "refs/heads/"+w.Branch {
				return fmt.Errorf("after rolling back the interrupted %s, %s is not on branch %s", e.Step, w.Path, w.Branch)
			}
		}
	}
	_, _, err = q.st.UpdateMerge(ctx, e.ID, func(m *store.MergeEntry) ([]event.Event, error) {
		m.Step, m.StepTip = "", ""
		if !rolled {
			return nil, nil
		}
		return []event.Event{event.New(q.now(), m.TaskID, event.MergeRolledBack{Entry: m.ID, Step: e.Step, Tip: e.StepTip})}, nil
	})
	if rolled {
		q.log.Info("interrupted merge step rolled back", "task_id", e.TaskID, "entry", e.ID, "step", e.Step, "tip", e.StepTip)
	}
	return err
}

// finishCleanups finishes the cleanup of worktrees whose work landed while
// a daemon died before removing them (merge.cleanup): a landed worktree of a
// finished task that is still active is removed as record would have
// removed it, its ignored files archived first. Removal refuses where
// something could be lost, as it always does; that is logged, and tried
// again at the next start.
func (q *Queue) finishCleanups(ctx context.Context) {
	if !q.cfg.Cleanup || q.cfg.PR {
		return
	}
	ws, err := q.wt.LandedActive(ctx)
	if err != nil {
		q.log.Error("listing landed worktrees", "err", err)
		return
	}
	for _, w := range ws {
		t, err := q.st.GetTask(ctx, w.TaskID)
		if err != nil || !t.Status.Terminal() {
			continue
		}
		if _, err := q.wt.ClearFinishedPick(ctx, w.TaskID); err != nil {
			q.log.Warn("checking a landed worktree for a finished cherry-pick", "task_id", w.TaskID, "err", err)
		}
		if _, err := q.wt.RestoreInterruptedRemoval(ctx, w.TaskID); err != nil {
			q.log.Warn("checking a landed worktree for an interrupted removal", "task_id", w.TaskID, "err", err)
		}
		if _, err := q.wt.RepairBackLink(ctx, w.TaskID); err != nil {
			q.log.Warn("checking a landed worktree's back link", "task_id", w.TaskID, "err", err)
		}
		if _, err := q.wt.Remove(ctx, w.TaskID, "its work landed on "+w.Base+" (cleanup finished at start)", true); err != nil {
			q.log.Info("worktree kept after landing", "task_id", w.TaskID, "reason", err)
			continue
		}
		q.log.Info("landing cleanup finished at start", "task_id", w.TaskID)
	}
}

// finishBatchStep settles an entry a batch was landing when the daemon
// died: the target moved to the batch's commit or not, in one ref update.
// When the commit it lands as is on the target, the landing is recorded (and
// its cleanup is finished with the others'); otherwise the step is cleared
// and the entry lands from the start. Nothing in the task's worktree or
// branch was touched by the batch.
func (q *Queue) finishBatchStep(ctx context.Context, e store.MergeEntry) error {
	landed := false
	if e.Commit != "" {
		ok, err := git.IsAncestor(ctx, e.Repo, e.Commit, "refs/heads/"+e.Target)
		if err != nil {
			return fmt.Errorf("checking whether the batch that was landing %s reached %s: %w", e.Branch, e.Target, err)
		}
		landed = ok
	}
	if landed {
		if err := q.wt.MarkLanded(ctx, e.TaskID, e.Commit, e.StepTip); err != nil {
			return err
		}
		q.log.Info("a batch landing the daemon did not record is recorded", "task_id", e.TaskID, "entry", e.ID, "commit", e.Commit)
		q.record(ctx, e, outcome{state: store.MergeLanded, commit: e.Commit, detail: "landed with a batch before the daemon stopped"}, q.now())
		return nil
	}
	_, _, err := q.st.UpdateMerge(ctx, e.ID, func(m *store.MergeEntry) ([]event.Event, error) {
		m.Step, m.StepTip, m.Commit = "", "", ""
		return nil, nil
	})
	return err
}

// startedRebase reports whether the work tree at dir is on branch at tip.
func startedRebase(ctx context.Context, dir, branch, tip string) (bool, error) {
	head, err := git.Run(ctx, dir, "symbolic-ref", "-q", "HEAD")
	if err != nil || strings.TrimSpace(head) != "refs/heads/"+branch {
		return false, nil
	}
	at, err := git.RevParse(ctx, dir, "HEAD")
	if err != nil {
		return false, err
	}
	return at == tip, nil
}
