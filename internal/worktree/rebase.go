package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// RebaseOutcome is how a Rebase ended.
type RebaseOutcome string

// Rebase outcomes.
const (
	// Rebased: the branch is on the new main; the uncommitted work was
	// carried over.
	Rebased RebaseOutcome = "rebased"
	// UpToDate: the branch already had main; nothing was done.
	UpToDate RebaseOutcome = "up_to_date"
	// Conflicted: the rebase would conflict, or did and was undone; the
	// worktree, its index and the stash list are as they were.
	Conflicted RebaseOutcome = "conflict"
)

// RebaseResult is what Rebase did.
type RebaseResult struct {
	Outcome               RebaseOutcome
	PreviousHead, NewHead string
	Onto                  string
	// Files are the conflicting files; Details git's account of them.
	Files   []string
	Details string
	// Predicted says the conflict was found before anything was touched.
	Predicted bool
	// Carried says there was uncommitted work, stashed and re-applied.
	Carried bool
}

// BackupPrefix starts the refs that hold a task's uncommitted work (as a
// commit whose tree is the work tree, untracked files included) while a
// rebase moves it; Rebase deletes its ref when the work is safely back.
const BackupPrefix = "refs/neuraphage/rebase-backup/"

// AsideError is a rebase that stopped with the task's uncommitted work
// set aside (in the stash and under the backup ref) rather than back in
// its work tree: the user must look. Every other error from Rebase left
// the worktree as it was.
type AsideError struct{ Err error }

func (e *AsideError) Error() string { return e.Err.Error() }
func (e *AsideError) Unwrap() error { return e.Err }

// rebaseTimeout bounds a whole rebase; once begun it is not abandoned when
// the caller's context ends (that would leave the work in the stash).
const rebaseTimeout = 5 * time.Minute

// Rebase brings the task's branch onto onto (a commit) in its worktree,
// carrying the uncommitted work across: it predicts the result read-only
// first (git merge-tree of onto with a commit of the whole work tree) and
// touches nothing when that conflicts; otherwise it stashes the work
// (untracked files too), rebases, and re-applies the stash with its index.
// Should the rebase or the re-apply conflict anyway, everything is put
// back as it was before: the branch at its old tip, the files, the index
// and the stash list, and the work tree is checked against its photograph.
//
// The caller must make sure nothing else works in the worktree meanwhile
// (the executor calls it at a task's turn boundary). A rebase holds its
// worktree (git.Locked) and the repository's stash stack (git.Serialized):
// rebases in one repository run one at a time, beside other git work.
func (m *Manager) Rebase(ctx context.Context, id task.ID, onto string) (RebaseResult, error) {
	defer m.lockTask(id)()
	w, err := m.st.GetWorktree(ctx, id)
	if err != nil {
		return RebaseResult{}, err
	}
	if w.State != store.WorktreeActive {
		return RebaseResult{}, fmt.Errorf("%s's worktree was removed; nothing to rebase", id)
	}
	if ok, err := m.present(ctx, w); err != nil {
		return RebaseResult{}, err
	} else if !ok {
		return RebaseResult{}, fmt.Errorf("%s's worktree %s is missing; it is made again when the task runs", id, w.Path)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rebaseTimeout)
	defer cancel()
	var res RebaseResult
	err = git.Locked(ctx, w.Path, func(ctx context.Context) error {
		// The stash stack is the repository's, not the worktree's: a
		// rebase carrying work through it must not interleave with
		// another's.
		return git.Serialized(ctx, w.Repo, "stash", func(ctx context.Context) error {
			var err error
			res, err = m.rebase(ctx, w, onto)
			return err
		})
	})
	return res, err
}

func (m *Manager) rebase(ctx context.Context, w store.Worktree, onto string) (RebaseResult, error) {
	dir := w.Path
	st, err := git.WorkStatus(ctx, dir)
	if err != nil {
		return RebaseResult{}, err
	}
	if st.InProgress != "" {
		return RebaseResult{}, fmt.Errorf("the worktree %s has a %s in progress; finish or abort it first", dir, st.InProgress)
	}
	head, err := git.Run(ctx, dir, "symbolic-ref", "-q", "HEAD")
	if head = strings.TrimSpace(head); err != nil || head != "refs/heads/"+w.Branch {
		at := "a detached HEAD"
		if head != "" {
			at = head
		}
		return RebaseResult{}, fmt.Errorf("the worktree %s is on %s, not on its branch %s; check out %s there first", dir, at, w.Branch, w.Branch)
	}
	if err := stashable(ctx, dir); err != nil {
		return RebaseResult{}, err
	}
	oldHead, err := git.RevParse(ctx, dir, "HEAD")
	if err != nil {
		return RebaseResult{}, err
	}
	res := RebaseResult{PreviousHead: oldHead, NewHead: oldHead, Onto: onto}
	if ok, err := git.IsAncestor(ctx, dir, onto, oldHead); err != nil {
		return RebaseResult{}, err
	} else if ok {
		res.Outcome = UpToDate
		return res, nil
	}
	dirty := len(st.Changed)+len(st.Untracked) > 0
	ident := m.identity(ctx, dir)

	// The photograph: the whole work tree as a commit on HEAD, kept under
	// a backup ref until the work is safely back.
	work, photo := oldHead, ""
	backup := BackupPrefix + string(w.TaskID)
	if dirty {
		if photo, err = git.WorkTreeTree(ctx, dir); err != nil {
			return RebaseResult{}, fmt.Errorf("reading the work tree: %w", err)
		}
		out, err := git.RunEnv(ctx, dir, ident, "commit-tree", photo, "-p", oldHead, "-m", "neuraphage: uncommitted work of "+string(w.TaskID)+" before a rebase")
		if err != nil {
			return RebaseResult{}, err
		}
		work = strings.TrimSpace(out)
		// The ref must not exist: one left by a rebase that could not put
		// the work back holds that work until the user restores it.
		if _, err := git.Run(ctx, dir, "update-ref", "-m", "neuraphage: rebase backup", backup, work, strings.Repeat("0", len(work))); err != nil {
			if _, rerr := git.RevParse(ctx, dir, backup); rerr == nil {
				return RebaseResult{}, fmt.Errorf("an earlier rebase of %s left its work under %s (and in the stash); restore it (docs/worktrees.md) and delete the ref before rebasing again", w.TaskID, backup)
			}
			return RebaseResult{}, err
		}
	}
	dropBackup := func() {
		if dirty {
			m.dropBackup(ctx, w, backup, work)
		}
	}

	// The prediction, read-only.
	pred, err := git.MergeTree(ctx, dir, onto, work)
	if err != nil {
		dropBackup()
		return RebaseResult{}, fmt.Errorf("predicting the rebase: %w", err)
	}
	if !pred.Clean {
		dropBackup()
		res.Outcome, res.Files, res.Predicted = Conflicted, pred.Conflicts, true
		res.Details = "predicted before anything was touched: " + strings.Join(pred.Conflicts, ", ")
		return res, nil
	}
	// Ignored files are in neither the photograph nor the stash: one that
	// main starts tracking would be overwritten, and lost on an abort.
	if clash, err := ignoredClashes(ctx, dir, oldHead, onto); err != nil {
		dropBackup()
		return RebaseResult{}, err
	} else if len(clash) > 0 {
		dropBackup()
		res.Outcome, res.Files, res.Predicted = Conflicted, clash, true
		res.Details = "main adds " + strings.Join(clash, ", ") + ", which the worktree has as ignored files; move them away first"
		return res, nil
	}
	// Empty directories are not git's: stash -u may clean them away.
	empty := emptyDirs(ctx, dir)
	defer func() {
		for _, d := range empty {
			_ = os.MkdirAll(d, 0o755)
		}
	}()

	stash := ""
	if dirty {
		res.Carried = true
		before, _ := stashList(ctx, dir)
		if _, err := git.Run(ctx, dir, "stash", "push", "--include-untracked", "-q", "-m", "neuraphage: rebase of "+string(w.TaskID)); err != nil {
			// A failed push may have stashed nothing or everything: see.
			if after, _ := stashList(ctx, dir); len(after) > len(before) {
				stash = after[0]
				return m.putBack(ctx, w, res, saved{oldHead, stash, photo, backup, work}, nil, "stashing the work failed: "+gitDetail(err))
			}
			dropBackup()
			return RebaseResult{}, fmt.Errorf("stashing the uncommitted work: %w", err)
		}
		out, err := git.RevParse(ctx, dir, "refs/stash")
		if err != nil {
			return RebaseResult{}, &AsideError{Err: fmt.Errorf("the work is in the stash and under %s; reading the stash failed: %w", backup, err)}
		}
		stash = out
	}

	if _, err := git.RunEnv(ctx, dir, ident, "-c", "rebase.autoStash=false", "-c", "rebase.updateRefs=false", "rebase", "-q", onto); err != nil {
		files := conflictedFiles(ctx, dir)
		if _, aerr := git.Run(ctx, dir, "rebase", "--abort"); aerr != nil {
			return RebaseResult{}, &AsideError{Err: fmt.Errorf("the rebase failed (%s) and aborting it failed too (%w); the work is in the stash (%s) and under %s", gitDetail(err), aerr, words.ShortCommit(stash), backup)}
		}
		return m.putBack(ctx, w, res, saved{oldHead, stash, photo, backup, work}, files, gitDetail(err))
	}
	newHead, err := git.RevParse(ctx, dir, "HEAD")
	if err != nil {
		return RebaseResult{}, err
	}
	res.NewHead = newHead
	if dirty {
		if _, err := git.Run(ctx, dir, "stash", "apply", "--index", "-q", stash); err != nil {
			files := conflictedFiles(ctx, dir)
			// Undo the half-applied work (all of it is in the stash), put
			// the branch back, and re-apply the stash where it was made.
			if err := m.clearApplied(ctx, dir, stash); err != nil {
				return RebaseResult{}, &AsideError{Err: fmt.Errorf("re-applying the work conflicted and clearing it failed (%w); the work is in the stash (%s) and under %s", err, words.ShortCommit(stash), backup)}
			}
			res.NewHead = oldHead
			if _, rerr := git.Run(ctx, dir, "reset", "-q", "--hard", oldHead); rerr != nil {
				return RebaseResult{}, &AsideError{Err: fmt.Errorf("re-applying the work conflicted and moving the branch back failed (%w); the work is in the stash (%s) and under %s", rerr, words.ShortCommit(stash), backup)}
			}
			return m.putBack(ctx, w, res, saved{oldHead, stash, photo, backup, work}, files, "your uncommitted changes conflict with the rebased branch: "+gitDetail(err))
		}
		if err := dropStash(ctx, dir, stash); err != nil {
			m.log.Warn("dropping the rebase stash", "task_id", w.TaskID, "stash", stash, "err", err)
		}
		dropBackup()
	}
	res.Outcome = Rebased
	return res, nil
}

// saved is where a rebase keeps the task's work while it runs.
type saved struct {
	oldHead string // the branch tip before
	stash   string // the stash commit holding the work ("" when clean)
	photo   string // the tree of the whole work tree before ("" when clean)
	backup  string // the backup ref
	work    string // the commit of photo the backup ref points at
}

// putBack puts the work back after a rebase that could not go through:
// the branch is at its old tip and the work tree clean when it is called;
// the stash (if any) is applied and dropped, and the work tree is checked
// against its photograph. The result reports the conflict.
func (m *Manager) putBack(ctx context.Context, w store.Worktree, res RebaseResult, sv saved, files []string, details string) (RebaseResult, error) {
	dir := w.Path
	oldHead, stash, photo, backup, work := sv.oldHead, sv.stash, sv.photo, sv.backup, sv.work
	res.NewHead = oldHead
	if stash != "" {
		if _, err := git.Run(ctx, dir, "stash", "apply", "--index", "-q", stash); err != nil {
			return RebaseResult{}, &AsideError{Err: fmt.Errorf("putting the work back failed (%s); it is in the stash (%s) and under %s", gitDetail(err), words.ShortCommit(stash), backup)}
		}
		if photo != "" {
			now, err := git.WorkTreeTree(ctx, dir)
			if err != nil || now != photo {
				return RebaseResult{}, &AsideError{Err: fmt.Errorf("the work tree after putting the work back differs from before the rebase; the work as it was is kept in the stash (%s) and under %s", words.ShortCommit(stash), backup)}
			}
		}
		if err := dropStash(ctx, dir, stash); err != nil {
			m.log.Warn("dropping the rebase stash", "task_id", w.TaskID, "stash", stash, "err", err)
		}
		m.dropBackup(ctx, w, backup, work)
	}
	res.Outcome, res.Files, res.Details = Conflicted, files, details
	return res, nil
}

// dropBackup deletes the backup ref, if it still holds work.
func (m *Manager) dropBackup(ctx context.Context, w store.Worktree, backup, work string) {
	if _, err := git.Run(ctx, w.Path, "update-ref", "-d", backup, work); err != nil {
		m.log.Warn("deleting a rebase backup ref", "task_id", w.TaskID, "ref", backup, "err", err)
	}
}

// clearApplied undoes a stash apply that stopped half way: the tracked
// files go back to HEAD (reset --hard; every change is in the stash) and
// the stash's untracked files that the apply wrote are removed.
func (m *Manager) clearApplied(ctx context.Context, dir, stash string) error {
	if _, err := git.Run(ctx, dir, "reset", "-q", "--hard"); err != nil {
		return err
	}
	out, err := git.Run(ctx, dir, "ls-tree", "-r", "-z", "--name-only", stash+"^3")
	if err != nil {
		return nil // no untracked files were stashed
	}
	for name := range strings.SplitSeq(out, "\x00") {
		if name == "" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// stashable refuses index states git stash cannot carry across: a file
// taken out of the index but kept on disk (git rm --cached), and
// intent-to-add entries (git add -N).
func stashable(ctx context.Context, dir string) error {
	out, err := git.Run(ctx, dir, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=no")
	if err != nil {
		return err
	}
	for f := range strings.SplitSeq(out, "\x00") {
		if len(f) < 4 {
			continue
		}
		x, y, name := f[0], f[1], f[3:]
		switch {
		case y == 'A':
			return fmt.Errorf("%s is added with intent to add (git add -N), which git stash cannot carry across a rebase; `git add` or `git reset` it first", name)
		case x == 'D':
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name))); err == nil {
				return fmt.Errorf("%s is removed from the index but kept on disk (git rm --cached), which git stash cannot carry across a rebase; commit that or `git reset -- %s` first", name, name)
			}
		}
	}
	return nil
}

// ignoredClashes returns the files onto has and from lacks that exist in
// the work tree at dir as ignored files.
func ignoredClashes(ctx context.Context, dir, from, onto string) ([]string, error) {
	out, err := git.Run(ctx, dir, "diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", from, onto)
	if err != nil {
		return nil, err
	}
	var clash []string
	for name := range strings.SplitSeq(out, "\x00") {
		if name == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			continue
		}
		if ign, err := git.IsIgnored(ctx, dir, name); err != nil {
			return nil, err
		} else if ign {
			clash = append(clash, name)
		}
	}
	return clash, nil
}

// emptyDirs lists the empty directories git stash -u may clean away: those
// inside untracked, not ignored, directories of the work tree at dir.
func emptyDirs(ctx context.Context, dir string) []string {
	out, err := git.Run(ctx, dir, "ls-files", "-z", "--others", "--exclude-standard", "--directory")
	if err != nil {
		return nil
	}
	var empty []string
	for name := range strings.SplitSeq(out, "\x00") {
		if !strings.HasSuffix(name, "/") {
			continue
		}
		_ = filepath.WalkDir(filepath.Join(dir, filepath.FromSlash(name)), func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if entries, err := os.ReadDir(p); err == nil && len(entries) == 0 {
				empty = append(empty, p)
			}
			return nil
		})
	}
	return empty
}

// stashList returns the stash entries' commits, newest first.
func stashList(ctx context.Context, dir string) ([]string, error) {
	out, err := git.Run(ctx, dir, "stash", "list", "--format=%H")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// dropStash drops the stash entry whose commit is id, wherever it is in
// the list (another worktree of the repository may have stashed since).
func dropStash(ctx context.Context, dir, id string) error {
	list, err := stashList(ctx, dir)
	if err != nil {
		return err
	}
	i := slices.Index(list, id)
	if i < 0 {
		return nil
	}
	_, err = git.Run(ctx, dir, "stash", "drop", "-q", "stash@{"+strconv.Itoa(i)+"}")
	return err
}

// conflictedFiles lists the unmerged files of the work tree at dir.
func conflictedFiles(ctx context.Context, dir string) []string {
	out, err := git.Run(ctx, dir, "diff", "--name-only", "-z", "--diff-filter=U")
	if err != nil {
		return nil
	}
	var files []string
	for f := range strings.SplitSeq(out, "\x00") {
		if f != "" && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	return files
}

// gitDetail is the useful part of a git error: its stderr's last lines.
func gitDetail(err error) string { return words.Tail(git.Stderr(err), 600) }
