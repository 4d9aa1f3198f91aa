package worktree_test

// Regression tests of bugs found in the package (all fixed).

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// A worktree root reached through a symbolic link (a configured Root that
// is a link, or <repo>/../.neuraphage-worktrees linked to a bigger disk):
// the record keeps the path with the link while git reports the physical
// one, so present() sees a foreign directory.
func TestBugSymlinkedRoot(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"configured root", "default root"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo := wtRepo(t, "main", nil)
			elsewhere := filepath.Join(wtReal(t, t.TempDir()), "big-disk")
			if err := os.Mkdir(elsewhere, 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := worktree.Config{}
			if name == "configured root" {
				cfg.Root = filepath.Join(filepath.Dir(repo), "trees-link")
				if err := os.Symlink(elsewhere, cfg.Root); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Symlink(elsewhere, filepath.Join(filepath.Dir(repo), ".neuraphage-worktrees")); err != nil {
				t.Fatal(err)
			}
			e := wtNewEnv(t, cfg)
			tk := e.task(repo)
			w := e.provision(tk)
			if _, err := e.m.Provision(ctx, tk); err != nil {
				t.Errorf("second Provision: %v", err)
			}
			list, err := e.m.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range list {
				if in.Stray {
					t.Errorf("List reports the task's own worktree as stray: %+v (record path %s)", in, w.Path)
				}
			}
			rep, err := e.manager(cfg).Reconcile(ctx)
			if err != nil || len(rep.Problems) != 0 || len(rep.Strays) != 0 {
				t.Errorf("Reconcile = %+v, %v; want no problems, no strays", rep, err)
			}
		})
	}
}

// copyTree makes the parent directory of a regular file it copies but not
// of a symbolic link: a link inside an ignored directory cannot be copied.
func TestBugBootstrapCopySymlinkInIgnoredDirectory(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{".gitignore": ".config/\n"})
	wtWrite(t, repo, ".config/real.json", "{}\n")
	if err := os.Symlink("real.json", filepath.Join(repo, ".config", "creds.json")); err != nil {
		t.Fatal(err)
	}
	e := wtNewEnv(t, worktree.Config{Bootstrap: func(string) worktree.Bootstrap {
		return worktree.Bootstrap{Copy: []string{".config/creds.json"}}
	}})
	tk := e.task(repo)
	w, err := e.m.Provision(context.Background(), tk)
	if err != nil {
		t.Fatalf("Provision: %v", err)
	}
	if link, err := os.Readlink(filepath.Join(w.Path, ".config", "creds.json")); err != nil || link != "real.json" {
		t.Errorf("link in the worktree: %q, %v", link, err)
	}
}

// A bootstrap copy that fails leaves the worktree without a note, so the
// next Provision returns it as ready: the copy is not retried and the setup
// command never runs. (The same happens when the daemon dies during setup.)
func TestBugBootstrapCopyFailureNotRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{Bootstrap: func(string) worktree.Bootstrap {
		// A pattern filepath.Glob rejects stands for any copy error (the
		// symlink of TestBugBootstrapCopySymlinkInIgnoredDirectory, an I/O
		// error).
		return worktree.Bootstrap{Copy: []string{"["}, Setup: "echo ran > .setup-ran"}
	}})
	tk := e.task(repo)
	if _, err := e.m.Provision(ctx, tk); err == nil || !strings.Contains(err.Error(), "copying bootstrap files") {
		t.Fatalf("first Provision: %v, want the copy error", err)
	}
	w, err := e.m.Provision(ctx, tk)
	if err == nil && !wtExists(filepath.Join(w.Path, ".setup-ran")) {
		t.Errorf("second Provision succeeded, but setup never ran (note %q)", e.record(tk.ID).Note)
	}
}

// create writes the record before `git worktree add`, "so that a daemon
// killed half way finds it and finishes the job". But when the add does not
// happen (a kill, or an error such as the root not being creatable), the
// next Provision tries to recreate from a branch that was never made and
// refuses for ever: "branch ... is gone and there is no archive".
func TestBugInterruptedCreateNeverFinishes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	tmp := wtReal(t, t.TempDir())
	blocker := filepath.Join(tmp, "blocker")
	wtWrite(t, tmp, "blocker", "a file where the worktree root should be\n")
	e := wtNewEnv(t, worktree.Config{Root: filepath.Join(blocker, "trees")})
	tk := e.task(repo)
	if _, err := e.m.Provision(ctx, tk); err == nil {
		t.Fatal("Provision under a file succeeded")
	}
	// The user clears the way; the task can now get its worktree.
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	w, err := e.m.Provision(ctx, tk)
	if err != nil {
		t.Fatalf("Provision once the root can be made: %v", err)
	}
	if h := wtRev(t, w.Path, "HEAD"); h != w.BaseCommit {
		t.Errorf("worktree at %s, want %s", h, w.BaseCommit)
	}
	if got := e.getTask(tk.ID); got.Worktree != w.Path || got.Branch != w.Branch {
		t.Errorf("task branch %q worktree %q", got.Branch, got.Worktree)
	}
}
