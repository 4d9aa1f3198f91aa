package worktree_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// TestFastRemoveIsGits: a landed task's worktree removed without `git
// worktree remove` is gone for the user's git as after git's own remove:
// not listed, nothing to prune or repair, its administrative directory and
// work tree deleted, nothing left over.
func TestFastRemoveIsGits(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n"})
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	wtWrite(t, w.Path, "new.txt", "x\n")
	if _, _, err := e.m.Commit(context.Background(), tk.ID, "add new.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Remove(context.Background(), tk.ID, "test", false); err != nil {
		t.Fatal(err)
	}
	if got := porcelain(t, repo, w.Path); got != "" {
		t.Errorf("still listed: %q", got)
	}
	for _, p := range []string{w.Path, filepath.Join(repo, ".git", "worktrees")} {
		if wtExists(p) {
			t.Errorf("%s is left", p)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(repo, ".git", "neuraphage", "removing")); len(ents) != 0 {
		t.Errorf("left in removing/: %v", ents)
	}
	if out := userGit(t, repo, "worktree", "prune", "-v"); out != "" {
		t.Errorf("prune found something: %q", out)
	}
	if out := userGit(t, repo, "worktree", "repair"); out != "" {
		t.Errorf("repair found something: %q", out)
	}
	if got := userGit(t, repo, "log", "-1", "--format=%s", worktree.ArchiveRef(tk.ID)); got != "add new.txt" {
		t.Errorf("archive = %q", got)
	}
}

// TestFastRemoveRefuses: what git's remove refuses is refused, nothing
// deleted: an untracked file (it appeared after the checks Remove makes),
// a changed file, a worktree locked by hand.
func TestFastRemoveRefuses(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n"})
	e := wtNewEnv(t, worktree.Config{})
	for _, c := range []struct {
		name string
		make func(w store.Worktree)
		want string
	}{
		{"untracked", func(w store.Worktree) { wtWrite(t, w.Path, "late.txt", "late\n") }, "contains modified or untracked files"},
		{"changed", func(w store.Worktree) { wtWrite(t, w.Path, "README.md", "changed\n") }, "contains modified or untracked files"},
		{"locked", func(w store.Worktree) { userGit(t, repo, "worktree", "lock", "--reason", "mine", w.Path) }, "locked"},
	} {
		w := e.provision(e.task(repo))
		c.make(w)
		err := e.m.RemoveLinked(context.Background(), w)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: RemoveLinked = %v, want it refused (%q)", c.name, err, c.want)
		}
		if !wtExists(filepath.Join(w.Path, "README.md")) || porcelain(t, repo, w.Path) == "" {
			t.Errorf("%s: the worktree was touched", c.name)
		}
	}
}

// TestFastRemovalsBesideUsersList: many worktrees removed at once while
// the user's `git worktree list` runs over and over: none of the user's
// lists dies on a half-deleted administrative directory (each is renamed
// away whole before it is deleted; git's own remove deletes it in place,
// a window this test is not fast enough to hit reliably). One failure is
// git's own and is allowed: a list that read the directory's name just
// before the directory went away dies with "Invalid path
// '…/worktrees/<name>'" (git resolves each name it listed and dies when
// one has vanished; `git worktree remove` opens the same window). The
// list run again right after succeeds.
func TestFastRemovalsBesideUsersList(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})
	e := wtNewEnv(t, worktree.Config{})
	const n = 32
	ids := make([]task.ID, n)
	for i := range ids {
		tk := e.task(repo)
		e.provision(tk)
		ids[i] = tk.ID
	}
	var done atomic.Bool
	var lists int
	var listErrs []error
	var lw sync.WaitGroup
	lw.Go(func() {
		for !done.Load() || lists == 0 {
			if _, err := userGitErr(repo, "worktree", "list", "--porcelain"); err != nil && !vanishedAdminDir(repo, err) {
				listErrs = append(listErrs, err)
			}
			lists++
		}
	})
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, id := range ids {
		wg.Go(func() { _, errs[i] = e.m.Remove(context.Background(), id, "test", false) })
	}
	wg.Wait()
	done.Store(true)
	lw.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Remove(%s): %v", ids[i], err)
		}
	}
	for _, err := range listErrs {
		t.Errorf("the user's git worktree list failed: %v", err)
	}
	if out := userGit(t, repo, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", out)
	}
	t.Logf("%d lists beside the removals", lists)
}

// vanishedAdminDir reports whether err is git's "Invalid path" for a
// directory under the repository's .git/worktrees that a removal took away
// between git listing it and resolving it.
func vanishedAdminDir(repo string, err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "fatal: Invalid path '"+filepath.Join(repo, ".git", "worktrees")+"/") &&
		strings.Contains(msg, "No such file or directory")
}
