package worktree

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// RepairBackLink writes again the back link git keeps from a worktree's
// administrative directory to its work tree (<git-common-dir>/worktrees/
// <name>/gitdir) when it is missing or empty while the work tree's .git
// file still points there. Without it git no longer knows the worktree
// ("is not a working tree"): every removal fails and the landed worktree
// stays for good (the chaos test, seed 101011450, met one). `git worktree
// repair <path>` writes it from the .git file; nothing else is touched. It
// reports whether it repaired anything.
func (m *Manager) RepairBackLink(ctx context.Context, id task.ID) (bool, error) {
	defer m.lockTask(id)()
	w, err := m.st.GetWorktree(ctx, id)
	if err != nil || w.State != store.WorktreeActive {
		return false, err
	}
	b, err := os.ReadFile(filepath.Join(w.Path, ".git"))
	if err != nil {
		return false, nil
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return false, nil
	}
	if fi, err := os.Stat(admin); err != nil || !fi.IsDir() {
		return false, nil
	}
	if back, err := os.ReadFile(filepath.Join(admin, "gitdir")); err == nil && strings.TrimSpace(string(back)) != "" {
		return false, nil
	}
	// repair takes the repository alone itself.
	if _, err := git.Run(ctx, w.Repo, "worktree", "repair", w.Path); err != nil {
		return false, err
	}
	m.log.Warn("a worktree's missing back link from git's administrative directory written again", "task_id", id, "path", w.Path, "admin", admin)
	return true, nil
}
