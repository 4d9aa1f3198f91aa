package worktree_test

// Rebase's refusals and the edge cases of what a worktree may hold (ignored
// files, empty directories, index states git stash cannot carry); the
// helpers are in rebase_test.go.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

func TestRebaseRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// prepare puts the worktree in the state refused, after main moved
		// to main.
		prepare func(t *testing.T, e *wtEnv, w store.Worktree, main string)
		onto    string   // "": main
		want    []string // in the error
		bug     string
	}{
		{
			name: "detached HEAD",
			prepare: func(t *testing.T, e *wtEnv, w store.Worktree, main string) {
				wtGit(t, w.Path, "checkout", "-q", "--detach")
			},
			want: []string{"detached HEAD", "not on its branch"},
		},
		{
			name: "another branch",
			prepare: func(t *testing.T, e *wtEnv, w store.Worktree, main string) {
				wtGit(t, w.Path, "switch", "-q", "-c", "elsewhere")
			},
			want: []string{"refs/heads/elsewhere", "not on its branch"},
		},
		{
			name: "rebase in progress",
			prepare: func(t *testing.T, e *wtEnv, w store.Worktree, main string) {
				e.commitWork(w.TaskID, "task side", map[string]string{"f.txt": "task\n"})
				if _, err := git.Run(context.Background(), w.Path, "rebase", main); err == nil {
					t.Fatal("the rebase by hand did not stop on a conflict")
				}
			},
			want: []string{"rebase in progress", "finish or abort it"},
		},
		{
			name: "merge in progress",
			prepare: func(t *testing.T, e *wtEnv, w store.Worktree, main string) {
				e.commitWork(w.TaskID, "task side", map[string]string{"f.txt": "task\n"})
				if _, err := git.Run(context.Background(), w.Path, "merge", main); err == nil {
					t.Fatal("the merge by hand did not stop on a conflict")
				}
			},
			want: []string{"merge in progress", "finish or abort it"},
		},
		{
			name:    "not a commit",
			prepare: func(t *testing.T, e *wtEnv, w store.Worktree, main string) {},
			onto:    "no-such-commit",
			want:    []string{"no-such-commit"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, repo, tk, w := rbSetup(t, map[string]string{"f.txt": "base\n", "g.txt": "g\n"})
			main := wtCommit(t, repo, "main moves", map[string]string{"f.txt": "main\n"})
			tt.prepare(t, e, w, main)
			wtWrite(t, w.Path, "g.txt", "g, edited\n")
			wtWrite(t, w.Path, "u.txt", "untracked\n")
			before := rbTake(t, w.Path)
			onto := main
			if tt.onto != "" {
				onto = tt.onto
			}
			if tt.bug != "" {
				t.Skip("BUG: " + tt.bug)
			}
			res, err := e.m.Rebase(context.Background(), tk.ID, onto)
			if err == nil {
				t.Fatalf("Rebase = %+v, want an error", res)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			rbSame(t, before, w.Path)
			rbNoBackups(t, repo)
		})
	}
}

func TestRebaseWithoutWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, repo, tk, w := rbSetup(t, nil)
	main := wtCommit(t, repo, "main moves", map[string]string{"m.txt": "m\n"})

	other := e.task(repo)
	if _, err := e.m.Rebase(ctx, other.ID, main); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Rebase of a task without a worktree: %v, want ErrNotFound", err)
	}

	if err := os.RemoveAll(w.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Rebase(ctx, tk.ID, main); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Rebase of a missing directory: %v", err)
	}
	if wtExists(w.Path) {
		t.Error("Rebase made the missing directory again")
	}

	e.provision(tk)
	if _, err := e.m.Remove(ctx, tk.ID, "test", false); err != nil {
		t.Fatal(err)
	}
	refs := wtGit(t, repo, "for-each-ref")
	if _, err := e.m.Rebase(ctx, tk.ID, main); err == nil || !strings.Contains(err.Error(), "removed") {
		t.Errorf("Rebase of a removed worktree: %v", err)
	}
	if wtExists(w.Path) || e.record(tk.ID).State != store.WorktreeRemoved || wtGit(t, repo, "for-each-ref") != refs {
		t.Error("Rebase of a removed worktree changed something")
	}
}

// rbMainTracks commits files on main in repo, even those .gitignore
// ignores, and returns the commit.
func rbMainTracks(t *testing.T, repo string, files map[string]string) string {
	t.Helper()
	for rel, content := range files {
		wtWrite(t, repo, rel, content)
	}
	wtGit(t, repo, "add", "-f", "--", ".")
	wtGit(t, repo, "commit", "-q", "-m", "main moves")
	return wtRev(t, repo, "HEAD")
}

// An ignored file is not the task's work to carry, but it is the user's:
// when main starts tracking the same path, the rebase must not destroy it.
func TestRebaseIgnoredFileMainStartsTracking(t *testing.T) {
	t.Parallel()
	for _, conflict := range []bool{false, true} {
		name := "otherwise clean"
		if conflict {
			name = "conflict during the rebase"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, repo, tk, w := rbSetup(t, map[string]string{".gitignore": "*.cfg\n", "f.txt": "a\n", "g.txt": "g\n"})
			dir := w.Path
			if conflict {
				wtCommit(t, dir, "C1", map[string]string{"f.txt": "b\n"})
				wtCommit(t, dir, "C2", map[string]string{"f.txt": "a\n"})
			}
			main := rbMainTracks(t, repo, map[string]string{"f.txt": "c\n", "local.cfg": "main's\n"})
			wtWrite(t, dir, "local.cfg", "the user's own settings\n")
			wtWrite(t, dir, "g.txt", "g, edited\n")
			before := rbTake(t, dir)
			res := rbRebase(t, e, tk.ID, main)
			if res.Outcome != worktree.Conflicted {
				t.Errorf("Rebase = %+v, want a conflict on local.cfg", res)
			}
			rbSame(t, before, dir)
			rbNoBackups(t, repo)
		})
	}
}

// An empty directory is the user's too: stash -u cleans it away and
// nothing brings it back.
func TestRebaseEmptyDirectory(t *testing.T) {
	t.Parallel()
	for _, conflict := range []bool{false, true} {
		name := "rebased"
		if conflict {
			name = "conflicted"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, repo, tk, w := rbSetup(t, map[string]string{"f.txt": "a\n", "g.txt": "g\n"})
			dir := w.Path
			if conflict {
				wtCommit(t, dir, "C1", map[string]string{"f.txt": "b\n"})
				wtCommit(t, dir, "C2", map[string]string{"f.txt": "a\n"})
			}
			main := wtCommit(t, repo, "main moves", map[string]string{"f.txt": "c\n"})
			wtWrite(t, dir, "g.txt", "g, edited\n")
			if err := os.MkdirAll(filepath.Join(dir, "out", "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
			before := rbTake(t, dir)
			res := rbRebase(t, e, tk.ID, main)
			if conflict {
				if res.Outcome != worktree.Conflicted {
					t.Fatalf("Rebase = %+v, want Conflicted", res)
				}
				rbSame(t, before, dir)
				return
			}
			if res.Outcome != worktree.Rebased {
				t.Fatalf("Rebase = %+v, want Rebased", res)
			}
			if !wtExists(filepath.Join(dir, "out", "empty")) {
				t.Error("out/empty is gone")
			}
		})
	}
}

// A file taken out of the index but kept on disk (git rm --cached) is a
// staged deletion plus an untracked file of the same name: git stash
// cannot re-apply that, on main or where it was made.
func TestRebaseUntrackedKeptFile(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{"f.txt": "a\n", "g.txt": "g\n"})
	dir := w.Path
	main := wtCommit(t, repo, "main moves", map[string]string{"m.txt": "m\n"})
	wtGit(t, dir, "rm", "-q", "--cached", "g.txt")
	wtWrite(t, dir, "f.txt", "a, edited\n")
	before := rbTake(t, dir)
	res, err := e.m.Rebase(context.Background(), tk.ID, main)
	if err == nil || !strings.Contains(err.Error(), "git rm --cached") || !strings.Contains(err.Error(), "g.txt") {
		t.Fatalf("Rebase = %+v, %v; want a refusal naming g.txt and git rm --cached", res, err)
	}
	rbSame(t, before, dir)
	if s := wtGit(t, repo, "stash", "list"); s != "" {
		t.Errorf("stash list %q", s)
	}
	rbNoBackups(t, repo)
}

// git stash refuses intent-to-add entries: Rebase refuses them up front
// with what to do, having changed nothing.
func TestRebaseIntentToAdd(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{"f.txt": "a\n"})
	dir := w.Path
	main := wtCommit(t, repo, "main moves", map[string]string{"m.txt": "m\n"})
	wtWrite(t, dir, "ita.txt", "intent to add\n")
	wtGit(t, dir, "add", "-N", "ita.txt")
	wtWrite(t, dir, "f.txt", "a, edited\n")
	before := rbTake(t, dir)
	res, err := e.m.Rebase(context.Background(), tk.ID, main)
	if err == nil || !strings.Contains(err.Error(), "git add -N") || !strings.Contains(err.Error(), "ita.txt") {
		t.Fatalf("Rebase = %+v, %v; want a refusal naming ita.txt and git add -N", res, err)
	}
	rbSame(t, before, dir)
	rbNoBackups(t, repo)
}

// An untracked file main adds with the same content predicts clean, but
// git stash will not restore an untracked file over a tracked one: the
// rebase is undone, nothing lost.
func TestRebaseUntrackedFileMainAddsToo(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{"f.txt": "a\n"})
	dir := w.Path
	main := wtCommit(t, repo, "main moves", map[string]string{"same.txt": "same\n"})
	wtWrite(t, dir, "same.txt", "same\n")
	wtWrite(t, dir, "f.txt", "a, edited\n")
	before := rbTake(t, dir)
	res := rbRebase(t, e, tk.ID, main)
	switch res.Outcome {
	case worktree.Conflicted:
		rbSame(t, before, dir)
		if !strings.Contains(res.Details, "same.txt") {
			t.Errorf("Details %q do not name same.txt", res.Details)
		}
	case worktree.Rebased:
		if got := wtRead(t, dir, "same.txt") + wtRead(t, dir, "f.txt"); got != "same\na, edited\n" {
			t.Errorf("work after the rebase: %q", got)
		}
	default:
		t.Errorf("Rebase = %+v", res)
	}
	rbNoBackups(t, repo)
	if s := wtGit(t, repo, "stash", "list"); s != "" {
		t.Errorf("stash list %q", s)
	}
}

// A backup ref left by a rebase that could not put the work back holds
// that work: a later rebase refuses rather than overwrite it, and changes
// nothing.
func TestRebaseKeepsLeftBackup(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{"f.txt": "a\n", "g.txt": "g\n"})
	dir := w.Path
	main := wtCommit(t, repo, "main moves", map[string]string{"m.txt": "m\n"})
	old := wtRev(t, dir, "HEAD")
	wtGit(t, repo, "update-ref", worktree.BackupPrefix+string(tk.ID), old)
	wtWrite(t, dir, "f.txt", "a, edited\n")
	before := rbTake(t, dir)
	res, err := e.m.Rebase(context.Background(), tk.ID, main)
	if err == nil || !strings.Contains(err.Error(), "earlier rebase") {
		t.Fatalf("Rebase = %+v, %v; want a refusal naming the earlier rebase's backup", res, err)
	}
	var aside *worktree.AsideError
	if errors.As(err, &aside) {
		t.Errorf("a refusal that touched nothing is an AsideError: %v", err)
	}
	rbSame(t, before, dir)
	if got := wtRev(t, repo, worktree.BackupPrefix+string(tk.ID)); got != old {
		t.Errorf("the backup ref moved to %s", got)
	}
}
