package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Restore brings back a removed worktree: its branch from the archive when
// the branch was deleted, then the worktree on it. A restore the state on
// disk refuses is a *RestoreRefusedError.
func (m *Manager) Restore(ctx context.Context, id task.ID) (store.Worktree, error) {
	defer m.lockTask(id)()
	w, err := m.st.GetWorktree(ctx, id)
	if err != nil {
		return w, err
	}
	var out store.Worktree
	if w.State == store.WorktreeActive {
		ok, perr := m.present(ctx, w)
		if perr != nil || ok {
			return w, perr
		}
		out, err = m.recreate(ctx, w, "restored by the user")
	} else {
		out, err = m.restore(ctx, w, "restored by the user")
	}
	if err != nil {
		return out, m.restoreRefusal(ctx, w, err)
	}
	return out, nil
}

// RestoreRefusedError is a restore the state on disk refuses, with the reason for
// the user: the worktree's directory is taken, its branch is gone with no
// archive, or the branch is checked out elsewhere.
type RestoreRefusedError struct{ Err error }

func (e *RestoreRefusedError) Error() string { return e.Err.Error() }
func (e *RestoreRefusedError) Unwrap() error { return e.Err }

// restoreRefusal marks err, a failed restore of w, as a refusal when the
// state on disk refuses it: something else occupies the worktree's
// directory, the branch is gone with no archive of it, or the branch is
// checked out elsewhere. Anything else is a failure.
func (m *Manager) restoreRefusal(ctx context.Context, w store.Worktree, err error) error {
	if ctx.Err() != nil || errors.Is(err, store.ErrClosed) || errors.Is(err, store.ErrNotFound) {
		return err
	}
	if _, serr := os.Lstat(w.Path); serr == nil {
		if ok, _ := worktreeAt(ctx, w); !ok {
			return &RestoreRefusedError{Err: err}
		}
	}
	branch, berr := git.BranchExists(ctx, w.Repo, w.Branch)
	if berr != nil {
		return err
	}
	if !branch {
		if _, aerr := git.RevParse(ctx, w.Repo, ArchiveRef(w.TaskID)); errors.Is(aerr, git.ErrNoRef) {
			return &RestoreRefusedError{Err: err}
		}
		return err
	}
	list, lerr := git.Worktrees(ctx, w.Repo)
	if lerr != nil {
		return err
	}
	for _, wt := range list {
		if wt.Branch == w.Branch && wt.Path != w.Path {
			return &RestoreRefusedError{Err: err}
		}
	}
	return err
}

// worktreeAt reports whether w's directory is a work tree of its own branch.
func worktreeAt(ctx context.Context, w store.Worktree) (bool, error) {
	list, err := git.Worktrees(ctx, w.Repo)
	if err != nil {
		return false, err
	}
	for _, wt := range list {
		if wt.Path == w.Path && wt.Branch == w.Branch && !wt.Prunable {
			return true, nil
		}
	}
	return false, nil
}

func (m *Manager) restore(ctx context.Context, w store.Worktree, reason string) (store.Worktree, error) {
	if _, err := os.Lstat(w.Path); err == nil {
		return w, fmt.Errorf("%s already exists; move it away to restore %s's worktree there", w.Path, w.TaskID)
	}
	w.Landed, w.LandedTip = "", ""
	w, err := m.recreate(ctx, w, reason)
	if err != nil {
		return w, err
	}
	back, err := m.restoreIgnored(ctx, w)
	if err != nil {
		m.setNote(ctx, &w, err.Error())
		m.log.Warn("ignored files not all brought back", "task_id", w.TaskID, "err", err)
	} else if len(back) > 0 {
		m.log.Info("ignored files brought back", "task_id", w.TaskID, "files", back)
	}
	return w, nil
}
