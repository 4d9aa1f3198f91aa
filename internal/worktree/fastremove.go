package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Removing a worktree without `git worktree remove`, which reads every
// other worktree to find the one it removes (at a thousand worktrees,
// 40–180 ms of each removal) and starts a second git for its status. What
// it does to a worktree it finds, the Manager does (builtin/worktree.c,
// remove_worktree): refuse a locked one; `git status --porcelain
// --ignore-submodules=none` in it, refusing on any output (a change or an
// untracked file; ignored files were kept before); delete the work tree;
// delete the administrative directory; delete worktrees/ when it is left
// empty. The administrative directory is first renamed into
// <common>/neuraphage/removing/, so no git ever reads a half-deleted one
// (git's own remove deletes it in place). A kill after the work tree went
// leaves what git's own remove leaves (a prunable record, cleared by the
// next removal); one after the rename leaves a directory in removing/,
// which Reconcile deletes. A worktree whose files do not show it whole
// and unlocked (linkedHere) is left to git's remove.

// errNotClean is a worktree git's remove would refuse as not clean.
var errNotClean = errors.New("it contains modified or untracked files")

// removingDir is where administrative directories go to be deleted.
func removingDir(common string) string { return filepath.Join(common, "neuraphage", "removing") }

// removeLinked removes w's worktree as `git worktree remove` (not forced)
// would; a refusal says why, in git's words where git has them.
func (m *Manager) removeLinked(ctx context.Context, w store.Worktree) error {
	if !linkedHere(w) {
		_, err := git.Run(ctx, w.Repo, "worktree", "remove", w.Path)
		if err != nil {
			return errors.New(git.Stderr(err))
		}
		return nil
	}
	admin := adminOf(w)
	out, err := git.RunEnv(ctx, w.Path, []string{"GIT_OPTIONAL_LOCKS=0"}, "status", "--porcelain", "--ignore-submodules=none")
	if err != nil {
		return fmt.Errorf("git status in %s: %s", w.Path, git.Stderr(err))
	}
	if strings.TrimSpace(out) != "" {
		return fmt.Errorf("'%s' %w, use --force to delete it", w.Path, errNotClean)
	}
	if err := os.RemoveAll(w.Path); err != nil {
		return fmt.Errorf("deleting %s: %w", w.Path, err)
	}
	common := filepath.Dir(filepath.Dir(admin))
	gone := filepath.Join(removingDir(common), filepath.Base(admin))
	if err := os.MkdirAll(removingDir(common), 0o755); err != nil {
		return err
	}
	os.RemoveAll(gone) // a killed removal's
	if err := os.Rename(admin, gone); err != nil {
		return fmt.Errorf("deleting %s: %w", admin, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		m.log.Warn("a removed worktree's administrative files not all deleted; deleted at the next start", "path", gone, "err", err)
	}
	os.Remove(filepath.Dir(admin)) // worktrees/, when empty, as git does
	return nil
}

// adminOf returns the administrative directory w's .git names ("" when it
// names none).
func adminOf(w store.Worktree) string {
	b, err := os.ReadFile(filepath.Join(w.Path, ".git"))
	if err != nil {
		return ""
	}
	admin, _ := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	return admin
}

// clearLeftovers removes what killed creations and removals left in repo's
// adding and removing directories, each entry under its task's lock (its
// name is the task id).
func (m *Manager) clearLeftovers(ctx context.Context, repo string) {
	d, err := git.GitDirs(ctx, repo)
	if err != nil {
		return
	}
	for _, dir := range []string{addingDir(d.Common), removingDir(d.Common)} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			func() {
				defer m.lockTask(task.ID(e.Name()))()
				if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
					m.log.Warn("left over from a worktree's creation or removal not deleted", "path", filepath.Join(dir, e.Name()), "err", err)
				}
			}()
		}
	}
}
