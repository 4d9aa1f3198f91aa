package worktree_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// TestLandedRemovalGitProcesses: removing a landed task's clean worktree
// asks git four things: its status (which names the branch tip), its
// ignored files (once), git's own check right before deleting, and one
// ref transaction that archives the tip and deletes the branch. Before, it
// took nine: the ignored files were listed three times, the tip read with
// for-each-ref and its commits counted against the base, the archive and
// the deletion were two update-refs. Not parallel: it counts the git
// processes this test binary starts.
func TestLandedRemovalGitProcesses(t *testing.T) {
	ctx := context.Background()
	repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n"})
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	tip := e.commitWork(tk.ID, "work", map[string]string{"a.txt": "a\n"})
	if err := e.m.MarkLanded(ctx, tk.ID, tip, tip); err != nil {
		t.Fatal(err)
	}
	before := git.Started()
	removed, err := e.m.Remove(ctx, tk.ID, "its work landed", true)
	if err != nil {
		t.Fatal(err)
	}
	n := git.Started() - before
	t.Logf("%d git processes", n)
	if n > 4 {
		t.Errorf("removing a landed worktree started %d git processes, want at most 4", n)
	}
	if removed.State != store.WorktreeRemoved || wtExists(w.Path) {
		t.Errorf("Remove = %+v; the worktree is left", removed)
	}
	if b := wtRev(t, repo, "refs/heads/"+w.Branch); b != "" {
		t.Errorf("landed branch kept at %s", b)
	}
	if a := wtRev(t, repo, worktree.ArchiveRef(tk.ID)); a != tip {
		t.Errorf("archive at %q, want %s", a, tip)
	}
	if ev := e.removedEvent(tk.ID); !ev.BranchDeleted || ev.Archive != worktree.ArchiveRef(tk.ID) {
		t.Errorf("removal event %+v", ev)
	}
}

// TestRemovalKeepsMovedBranch: a branch that moved after the removal read
// its tip is not deleted (the transaction's compare fails), and the tip
// read is archived all the same.
func TestRemovalKeepsMovedBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtIgnoredRepo(t)
	e := wtNewEnv(t, wtCopyEnv())
	tk := e.task(repo)
	w := e.provision(tk)
	tip := e.commitWork(tk.ID, "work", map[string]string{"a.txt": "a\n"})
	wtWrite(t, w.Path, "dev.env", "SECRET=1\n") // so that a round of copies runs
	// The same tree on top: the worktree stays clean for git's check.
	moved := strings.TrimSpace(wtGit(t, repo, "commit-tree", tip+"^{tree}", "-p", tip, "-m", "moved by someone else"))
	e.m.AfterKeptRound(func(round int) {
		if round == 0 {
			wtGit(t, repo, "update-ref", "refs/heads/"+w.Branch, moved, tip)
		}
	})
	if _, err := e.m.Remove(ctx, tk.ID, "cancelled", false); err != nil {
		t.Fatal(err)
	}
	if wtExists(w.Path) {
		t.Error("the worktree is left")
	}
	if b := wtRev(t, repo, "refs/heads/"+w.Branch); b != moved {
		t.Errorf("moved branch at %q, want it kept at %s", b, moved)
	}
	if a := wtRev(t, repo, worktree.ArchiveRef(tk.ID)); a != tip {
		t.Errorf("archive at %q, want %s", a, tip)
	}
	if ev := e.removedEvent(tk.ID); ev.BranchDeleted || ev.Archive != worktree.ArchiveRef(tk.ID) {
		t.Errorf("removal event %+v; want the branch kept, the tip archived", ev)
	}
}

// TestProvisionsAtOnceAskOnce: the first tasks of a repository provisioned
// at once (released together) ask git once for what does not change in a
// task's life (the repository, its base branch, its config, its hooks
// directory), not once each: each worktree then costs its branch and its
// checkout. Before, every provision that started before the first had its
// answer asked again (2 to 4 more git processes each). Not parallel: it
// counts the git processes this test binary starts.
func TestProvisionsAtOnceAskOnce(t *testing.T) {
	ctx := context.Background()
	repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n"})
	const n = 8
	e := wtNewEnv(t, worktree.Config{Parallel: n})
	tasks := make([]task.Task, n)
	for i := range tasks {
		tasks[i] = e.task(repo)
	}
	before := git.Started()
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i, tk := range tasks {
		wg.Go(func() {
			<-start
			_, errs[i] = e.m.Provision(ctx, tk)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Provision(%s): %v", tasks[i].ID, err)
		}
	}
	// 2 per worktree (its branch, its checkout) and at most 8 for the
	// repository (where its git directories are, its top, HEAD, the base
	// branch, the config, the hooks directory, ...).
	n64 := git.Started() - before
	t.Logf("%d git processes for %d worktrees made at once", n64, n)
	if n64 > 2*n+8 {
		t.Errorf("%d git processes for %d worktrees made at once, want at most %d", n64, n, 2*n+8)
	}
}
