package worktree_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// wtIgnoredRepo is a repository ignoring *.env and the usual build output,
// with a dev .env in its main work tree for bootstrap to copy.
func wtIgnoredRepo(t *testing.T) string {
	t.Helper()
	repo := wtRepo(t, "main", map[string]string{
		"README.md":  "hello\n",
		".gitignore": "*.env\nnode_modules/\ndist/\n__pycache__/\n*.pyc\nlogs/\n",
	})
	wtWrite(t, repo, "base.env", "KEY=user\n")
	return repo
}

// wtCopyEnv is a config whose bootstrap copies base.env.
func wtCopyEnv() worktree.Config {
	return worktree.Config{Bootstrap: func(string) worktree.Bootstrap {
		return worktree.Bootstrap{Copy: []string{"base.env"}}
	}}
}

// removedEvent returns the one worktree.removed event of id.
func (e *wtEnv) removedEvent(id task.ID) event.WorktreeRemoved {
	e.t.Helper()
	evs := e.events(id, "worktree.removed")
	if len(evs) != 1 {
		e.t.Fatalf("worktree.removed events of %s: %d", id, len(evs))
	}
	return evs[0].Payload.(event.WorktreeRemoved)
}

func TestLandedTaskIgnoredFileArchivedAndRestored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtIgnoredRepo(t)
	e := wtNewEnv(t, wtCopyEnv())
	tk := e.task(repo)
	w := e.provision(tk)
	if got := wtRead(t, w.Path, "base.env"); got != "KEY=user\n" {
		t.Fatalf("bootstrap copy: %q", got)
	}
	wtWrite(t, w.Path, "dev.env", "SECRET=1\n")
	wtWrite(t, w.Path, "logs/run.log", "ran\n")
	tip := e.commitWork(tk.ID, "done", map[string]string{"a.txt": "a\n"})

	in := e.inspect(tk.ID)
	if want := []string{"dev.env", "logs/run.log"}; !slices.Equal(in.Ignored, want) {
		t.Errorf("Inspect().Ignored = %q; want %q (the bootstrapped base.env unchanged is not kept)", in.Ignored, want)
	}
	// Landed, as the merge queue does it.
	wtGit(t, repo, "merge", "-q", "--ff-only", w.Branch)
	if err := e.m.MarkLanded(ctx, tk.ID, tip, tip); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Remove(ctx, tk.ID, "its work landed on main", true); err != nil {
		t.Fatal(err)
	}
	if wtExists(w.Path) {
		t.Fatal("worktree still there")
	}
	archive, err := worktree.IgnoredArchive(ctx, repo, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := wtRead(t, archive, "dev.env"); got != "SECRET=1\n" {
		t.Errorf("archived dev.env = %q", got)
	}
	if wtExists(filepath.Join(archive, "base.env")) {
		t.Error("the bootstrapped, unchanged base.env was archived")
	}
	ev := e.removedEvent(tk.ID)
	if ev.KeptIn != archive || !slices.Equal(ev.Kept, []string{"dev.env", "logs/run.log"}) {
		t.Errorf("removal event kept %q in %q; want dev.env, logs/run.log in %q", ev.Kept, ev.KeptIn, archive)
	}

	// Restored by another daemon: the files come back, the archive goes.
	m2 := e.manager(wtCopyEnv())
	rw, err := m2.Restore(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := wtRead(t, rw.Path, "dev.env"); got != "SECRET=1\n" {
		t.Errorf("restored dev.env = %q", got)
	}
	if got := wtRead(t, rw.Path, "logs/run.log"); got != "ran\n" {
		t.Errorf("restored logs/run.log = %q", got)
	}
	if wtExists(archive) {
		t.Error("archive left after a full restore")
	}
	// Still ignored work: removing it again keeps it again.
	if in := e.inspect(tk.ID); !slices.Contains(in.Ignored, "dev.env") {
		t.Errorf("after restore Ignored = %q", in.Ignored)
	}
}

func TestCancelledThenPrunedKeepsIgnored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtIgnoredRepo(t)
	e := wtNewEnv(t, wtCopyEnv())
	tk := e.task(repo)
	w := e.provision(tk)
	wtWrite(t, w.Path, "local.env", "TOKEN=x\n")
	wtWrite(t, w.Path, "base.env", "KEY=changed\n") // bootstrapped, then changed
	e.setStatus(tk.ID, task.Cancelled)

	// The daemon restarts between cancel and prune.
	e.m = e.manager(wtCopyEnv())
	if in := e.inspect(tk.ID); !slices.Equal(in.Ignored, []string{"base.env", "local.env"}) {
		t.Errorf("Inspect().Ignored = %q", in.Ignored)
	}
	res, err := e.m.Prune(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !res[0].Removed || !strings.Contains(res[0].Reason, "local.env") {
		t.Fatalf("Prune = %+v", res)
	}
	archive, _ := worktree.IgnoredArchive(ctx, repo, tk.ID)
	if got := wtRead(t, archive, "local.env"); got != "TOKEN=x\n" {
		t.Errorf("archived local.env = %q", got)
	}
	if got := wtRead(t, archive, "base.env"); got != "KEY=changed\n" {
		t.Errorf("archived base.env = %q", got)
	}
	if !strings.Contains(res[0].Reason, archive) {
		t.Errorf("prune reason %q does not say where", res[0].Reason)
	}
}

func TestBuildOutputNotKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtIgnoredRepo(t)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	wtWrite(t, w.Path, "node_modules/left-pad/index.js", "x\n")
	wtWrite(t, w.Path, "web/node_modules/a/b.js", "x\n")
	wtWrite(t, w.Path, "dist/app.js", "x\n")
	wtWrite(t, w.Path, "pkg/__pycache__/m.cpython.pyc", "x\n")
	wtWrite(t, w.Path, "pkg/m.pyc", "x\n")
	wtWrite(t, w.Path, "pkg/keep.env", "K=1\n")
	if in := e.inspect(tk.ID); !slices.Equal(in.Ignored, []string{"pkg/keep.env"}) {
		t.Errorf("Inspect().Ignored = %q; want only pkg/keep.env", in.Ignored)
	}
	e.setStatus(tk.ID, task.Failed)
	if res, err := e.m.Prune(ctx); err != nil || len(res) != 1 || !res[0].Removed {
		t.Fatalf("Prune = %+v, %v", res, err)
	}
	archive, _ := worktree.IgnoredArchive(ctx, repo, tk.ID)
	var got []string
	filepath.WalkDir(archive, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(archive, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	if !slices.Equal(got, []string{"pkg/keep.env"}) {
		t.Errorf("archived %q; want only pkg/keep.env", got)
	}

	// A configured list replaces the defaults.
	e2 := wtNewEnv(t, worktree.Config{IgnoredSkip: []string{"*.env"}})
	tk2 := e2.task(repo)
	w2 := e2.provision(tk2)
	wtWrite(t, w2.Path, "x.env", "1\n")
	wtWrite(t, w2.Path, "dist/app.js", "x\n")
	if in := e2.inspect(tk2.ID); !slices.Equal(in.Ignored, []string{"dist/app.js"}) {
		t.Errorf("with IgnoredSkip *.env: Ignored = %q", in.Ignored)
	}
}

func TestBootstrappedUnchangedNotKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtIgnoredRepo(t)
	e := wtNewEnv(t, worktree.Config{Bootstrap: func(string) worktree.Bootstrap {
		return worktree.Bootstrap{Copy: []string{"base.env"}, Setup: "echo built > made.env"}
	}})
	tk := e.task(repo)
	w := e.provision(tk)
	if !wtExists(filepath.Join(w.Path, "made.env")) || !wtExists(filepath.Join(w.Path, "base.env")) {
		t.Fatal("bootstrap did not run")
	}
	if in := e.inspect(tk.ID); len(in.Ignored) != 0 {
		t.Errorf("Inspect().Ignored = %q; want none (all from provisioning, unchanged)", in.Ignored)
	}
	e.setStatus(tk.ID, task.Failed)
	if _, err := e.m.Remove(ctx, tk.ID, "test", false); err != nil {
		t.Fatal(err)
	}
	archive, _ := worktree.IgnoredArchive(ctx, repo, tk.ID)
	if wtExists(archive) {
		t.Error("an archive was made for bootstrapped files only")
	}
	if ev := e.removedEvent(tk.ID); len(ev.Kept) != 0 || ev.KeptIn != "" {
		t.Errorf("removal event kept %q in %q", ev.Kept, ev.KeptIn)
	}
}

func TestArchiveFailureKeepsWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtIgnoredRepo(t)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	wtWrite(t, w.Path, "dev.env", "SECRET=1\n")
	// A file where the archive's directory must go: the copy fails.
	archive, _ := worktree.IgnoredArchive(ctx, repo, tk.ID)
	wtWrite(t, filepath.Dir(archive), string(tk.ID), "in the way\n")
	e.setStatus(tk.ID, task.Cancelled)

	_, err := e.m.Remove(ctx, tk.ID, "test", false)
	var re *worktree.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "dev.env") {
		t.Fatalf("Remove = %v; want a refusal naming dev.env", err)
	}
	if got := wtRead(t, w.Path, "dev.env"); got != "SECRET=1\n" {
		t.Errorf("dev.env = %q", got)
	}
	if !wtHasWorktree(t, repo, w.Path) || e.record(tk.ID).State != store.WorktreeActive {
		t.Error("worktree removed although its ignored file could not be kept")
	}
	if wtRev(t, repo, "refs/heads/"+w.Branch) == "" {
		t.Error("branch deleted")
	}
	res, err := e.m.Prune(ctx)
	if err != nil || len(res) != 1 || res[0].Removed || !strings.Contains(res[0].Reason, "dev.env") {
		t.Errorf("Prune = %+v, %v; want kept with the reason", res, err)
	}
}
