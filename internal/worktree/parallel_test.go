package worktree_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// TestProvisionManyAtOnce: many tasks of one repository provisioned at
// once, more than make worktrees side by side. Every worktree is on its
// own branch at the base with every file checked out and nothing changed;
// git knows each, none is left locked, no branch is without its worktree
// and no git failed on a lock (git's own concurrent `worktree add`s die on
// each other's half-made directories: TestConcurrentWorktreeAdds).
func TestProvisionManyAtOnce(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("pkg%d/f%d.txt", i%6, i)] = fmt.Sprintf("%d\n", i)
	}
	repo := wtRepo(t, "main", files)
	base := wtRev(t, repo, "HEAD")
	e := wtNewEnv(t, worktree.Config{Parallel: 6})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 30
	tasks := make([]task.Task, n)
	for i := range tasks {
		tasks[i] = e.task(repo)
	}
	res := make([]store.Worktree, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, tk := range tasks {
		wg.Go(func() { res[i], errs[i] = e.m.Provision(ctx, tk) })
	}
	wg.Wait()
	for i, tk := range tasks {
		if errs[i] != nil {
			t.Errorf("Provision(%s): %v", tk.ID, errs[i])
			continue
		}
		w := res[i]
		if got := strings.TrimSpace(wtGit(t, w.Path, "symbolic-ref", "HEAD")); got != "refs/heads/"+worktree.Branch(tk.ID) {
			t.Errorf("%s is on %s", tk.ID, got)
		}
		if got := wtRev(t, w.Path, "HEAD"); got != base {
			t.Errorf("%s is at %s, want the base %s", tk.ID, got, base)
		}
		if st := wtGit(t, w.Path, "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Errorf("%s's worktree is not a clean checkout: %q", tk.ID, st)
		}
		if got := wtRead(t, w.Path, "pkg5/f59.txt"); got != "59\n" {
			t.Errorf("%s: pkg5/f59.txt = %q", tk.ID, got)
		}
	}
	list := wtWorktrees(t, repo)
	if len(list) != n+1 {
		t.Errorf("%d worktrees, want %d", len(list), n+1)
	}
	for _, wt := range list {
		if wt.Locked {
			t.Errorf("%s is left locked", wt.Path)
		}
	}
	if got := strings.Count(wtGit(t, repo, "for-each-ref", "refs/heads/"+worktree.BranchPrefix), "\n") + 1; got != n {
		t.Errorf("%d task branches, want %d", got, n)
	}
	// Provisioning again finds each as it is, asking git nothing.
	before := git.Started()
	for _, tk := range tasks[:5] {
		if _, err := e.m.Provision(ctx, e.getTask(tk.ID)); err != nil {
			t.Fatal(err)
		}
	}
	if got := git.Started() - before; got > 0 {
		t.Logf("%d git processes for 5 worktrees already made (other tests run too)", got)
	}
}

// TestLandingBesideHeldProvisions: while provisions are held in their
// checkout (a post-checkout hook waits; every slot is taken and more
// provisions queue behind them), a landing runs to its end: the queue's
// sequence on main (git.Locked: check main, fast-forward the checkout of
// main), the rebase of another task's branch and the removal of a landed
// worktree. Before provisions ran side by side, `git worktree add` held
// the repository's one lock through its hook, and each of these waited
// for every queued provision.
func TestLandingBesideHeldProvisions(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n"})
	e := wtNewEnv(t, worktree.Config{Parallel: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Two tasks made before the hold: one lands, one is rebased.
	lander, rebased := e.task(repo), e.task(repo)
	lw, rw := e.provision(lander), e.provision(rebased)
	tip := wtCommit(t, lw.Path, "the landing's work", map[string]string{"landed.txt": "landed\n"})
	wtCommit(t, rw.Path, "other work", map[string]string{"other.txt": "other\n"})
	wtCommit(t, repo, "main moves", map[string]string{"main.txt": "main\n"})

	// The hold: a post-checkout hook in the held tasks' new worktrees
	// (each marked by a file) waits for a release file.
	hold := t.TempDir()
	release := filepath.Join(hold, "release")
	hook := "#!/bin/sh\nid=\"$(basename \"$(pwd -P)\")\"\nif [ -e '" + hold + "'/held-\"$id\" ]; then touch '" + hold + "'/hit-\"$id\"; while [ ! -e '" + release + "' ]; do sleep 0.05; done; fi\nexit 0\n"
	if err := os.WriteFile(filepath.Join(repo, ".git", "hooks", "post-checkout"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	held := make([]task.Task, 4)
	errs := make(chan error, len(held))
	var wg sync.WaitGroup
	for i := range held {
		held[i] = e.task(repo)
		if err := os.WriteFile(filepath.Join(hold, "held-"+string(held[i].ID)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			_, err := e.m.Provision(ctx, held[i])
			errs <- err
		})
	}
	defer func() { // never leave the provisions hanging on a failure
		os.WriteFile(release, nil, 0o644)
		wg.Wait()
	}()
	testkit.WaitFor(t, "two provisions held in their hook", func() bool {
		hits, _ := filepath.Glob(filepath.Join(hold, "hit-*"))
		return len(hits) == 2
	})

	// The landing, as the queue does it: main is checked, and the
	// checkout of main fast-forwarded to a commit on top of it.
	landing, err := git.Run(ctx, lw.Path, "rebase", "-q", "main")
	if err != nil {
		t.Fatalf("rebasing the landing: %v (%s)", err, landing)
	}
	commit := wtRev(t, lw.Path, "HEAD")
	main := wtRev(t, repo, "main")
	err = git.Locked(ctx, repo, func(ctx context.Context) error {
		if now, err := git.RevParse(ctx, repo, "refs/heads/main"); err != nil || now != main {
			return fmt.Errorf("main is %s (%v), want %s", now, err, main)
		}
		if _, err := git.Worktrees(ctx, repo); err != nil {
			return err
		}
		if st, err := git.WorkStatus(ctx, repo); err != nil || !st.Clean() {
			return fmt.Errorf("checkout of main: %s, %v", st.Describe(), err)
		}
		_, err := git.Run(ctx, repo, "merge", "--ff-only", "--no-edit", commit)
		return err
	})
	if err != nil {
		t.Fatalf("landing while provisions are held: %v", err)
	}
	if err := e.m.MarkLanded(ctx, lander.ID, commit, tip); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Remove(ctx, lander.ID, "landed", false); err != nil {
		t.Fatalf("removing the landed worktree while provisions are held: %v", err)
	}
	if res, err := e.m.Rebase(ctx, rebased.ID, "refs/heads/main"); err != nil || res.Outcome != worktree.Rebased {
		t.Fatalf("rebasing another task while provisions are held: %+v, %v", res, err)
	}
	if hits, _ := filepath.Glob(filepath.Join(hold, "hit-*")); len(hits) != 2 {
		t.Fatalf("%d provisions reached their hook; the hold did not hold", len(hits))
	}
	if got := wtRead(t, repo, "landed.txt"); got != "landed\n" {
		t.Errorf("the checkout of main has landed.txt = %q", got)
	}

	// Released, every held provision finishes.
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("held provision: %v", err)
		}
	}
	for _, tk := range held {
		if w := e.record(tk.ID); !slices.ContainsFunc(wtWorktrees(t, repo), func(g git.WorktreeInfo) bool { return g.Path == w.Path && !g.Locked }) {
			t.Errorf("%s's worktree %s is not a finished worktree", tk.ID, w.Path)
		}
	}
}
