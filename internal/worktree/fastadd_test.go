package worktree_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// userGit runs the user's own git in dir (not through the daemon's
// runner, no lock of ours held).
func userGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := userGitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func userGitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// porcelain returns the record of path in `git worktree list --porcelain`
// (its lines after "worktree <path>"), "" when it is not listed.
func porcelain(t *testing.T, repo, path string) string {
	t.Helper()
	for rec := range strings.SplitSeq(userGit(t, repo, "worktree", "list", "--porcelain"), "\n\n") {
		if first, rest, _ := strings.Cut(rec, "\n"); first == "worktree "+path {
			return rest
		}
	}
	return ""
}

// TestFastWorktreeIsGits: a task's worktree made without `git worktree
// add` has the files git's add writes, with the same contents, and the
// user's git lists, locks, unlocks, moves, repairs, prunes and removes
// it as one of its own.
func TestFastWorktreeIsGits(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n", "src/a.go": "package a\n"})
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	base := wtRev(t, repo, "main")

	// What git's own add writes, side by side.
	theirs := filepath.Join(filepath.Dir(repo), "theirs")
	userGit(t, repo, "worktree", "add", "-q", "-b", "theirs", theirs, base)
	gitAdmin := filepath.Join(repo, ".git", "worktrees", "theirs")
	admin := filepath.Join(repo, ".git", "worktrees", string(tk.ID))
	for _, f := range []struct{ name, ours, theirs string }{
		{"commondir", "../..\n", "../..\n"},
		{"gitdir", w.Path + "/.git\n", theirs + "/.git\n"},
		{"HEAD", "ref: refs/heads/" + w.Branch + "\n", "ref: refs/heads/theirs\n"},
	} {
		if got := wtRead(t, admin, f.name); got != f.ours {
			t.Errorf("%s = %q, want %q", f.name, got, f.ours)
		}
		if got := wtRead(t, gitAdmin, f.name); got != f.theirs {
			t.Errorf("git's own %s = %q, want %q: the test's idea of git's files is wrong", f.name, got, f.theirs)
		}
	}
	if got, want := wtRead(t, w.Path, ".git"), "gitdir: "+admin+"\n"; got != want {
		t.Errorf(".git = %q, want %q", got, want)
	}
	if got, want := wtRead(t, theirs, ".git"), "gitdir: "+gitAdmin+"\n"; got != want {
		t.Errorf("git's own .git = %q, want %q", got, want)
	}
	if wtExists(filepath.Join(admin, "locked")) {
		t.Error("the worktree is left locked")
	}
	if log := userGit(t, repo, "reflog", "show", "--format=%gs", w.Branch); log != "branch: Created from "+base {
		t.Errorf("branch reflog = %q", log)
	}

	want := "HEAD " + base + "\nbranch refs/heads/" + w.Branch
	if got := porcelain(t, repo, w.Path); got != want {
		t.Errorf("worktree list --porcelain: %q, want %q", got, want)
	}
	if st := userGit(t, w.Path, "status", "--porcelain", "--untracked-files=all", "--ignored"); st != "" {
		t.Errorf("status = %q", st)
	}
	userGit(t, repo, "worktree", "lock", "--reason", "by hand", w.Path)
	if got := porcelain(t, repo, w.Path); got != want+"\nlocked by hand" {
		t.Errorf("locked: %q", got)
	}
	userGit(t, repo, "worktree", "unlock", w.Path)
	moved := filepath.Join(filepath.Dir(repo), "moved")
	userGit(t, repo, "worktree", "move", w.Path, moved)
	if got := porcelain(t, repo, moved); got != want {
		t.Errorf("after move: %q", got)
	}
	userGit(t, repo, "worktree", "move", moved, w.Path)
	if out := userGit(t, repo, "worktree", "repair"); out != "" {
		t.Errorf("worktree repair found something: %q", out)
	}
	userGit(t, repo, "worktree", "prune")
	if got := porcelain(t, repo, w.Path); got != want {
		t.Errorf("after prune: %q", got)
	}
	// The task's own path: committed, then removed by the daemon.
	wtWrite(t, w.Path, "new.txt", "x\n")
	if _, _, err := e.m.Commit(context.Background(), tk.ID, "add new.txt"); err != nil {
		t.Fatal(err)
	}
	userGit(t, repo, "worktree", "remove", w.Path)
	if wtExists(w.Path) || wtExists(admin) {
		t.Errorf("git's remove left %s (%v) or %s (%v)", w.Path, wtExists(w.Path), admin, wtExists(admin))
	}
	if got := porcelain(t, repo, w.Path); got != "" {
		t.Errorf("removed worktree still listed: %q", got)
	}
	// Its directory deleted by hand: prune forgets it.
	tk2 := e.task(repo)
	w2 := e.provision(tk2)
	if err := os.RemoveAll(w2.Path); err != nil {
		t.Fatal(err)
	}
	userGit(t, repo, "worktree", "prune")
	if wtExists(filepath.Join(repo, ".git", "worktrees", string(tk2.ID))) {
		t.Error("git worktree prune left the administrative directory of a deleted worktree")
	}
}

// TestFastWorktreesBesideUsersGit: many tasks' worktrees made at once
// while the user's git adds, lists and removes worktrees of its own. No
// git of the user's dies on a half-made worktree of ours (they appear
// whole), none of ours fails, and everything is listed once.
func TestFastWorktreesBesideUsersGit(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})
	e := wtNewEnv(t, worktree.Config{Parallel: 16})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 48
	tasks := make([]task.Task, n)
	for i := range tasks {
		tasks[i] = e.task(repo)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, tk := range tasks {
		wg.Go(func() { _, errs[i] = e.m.Provision(ctx, tk) })
	}
	// The user's git, one command at a time (git's own adds cannot run
	// beside one another), all the while.
	var userErrs []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 8; i++ {
			p := filepath.Join(filepath.Dir(repo), fmt.Sprintf("user%d", i))
			for _, args := range [][]string{
				{"worktree", "add", "-q", "-b", fmt.Sprintf("user%d", i), p, "main"},
				{"worktree", "list", "--porcelain"},
				{"branch", "--list"},
				{"worktree", "remove", p},
				{"worktree", "prune"},
			} {
				if _, err := userGitErr(repo, args...); err != nil {
					userErrs = append(userErrs, fmt.Errorf("git %s: %w", strings.Join(args, " "), err))
				}
			}
		}
	}()
	wg.Wait()
	<-done
	for _, err := range userErrs {
		t.Error(err)
	}
	for i, tk := range tasks {
		if errs[i] != nil {
			t.Errorf("Provision(%s): %v", tk.ID, errs[i])
		}
	}
	list := userGit(t, repo, "worktree", "list", "--porcelain")
	for _, tk := range tasks {
		path := wtDefaultPath(wtReal(t, repo), tk.ID)
		path = filepath.Join(wtReal(t, filepath.Dir(path)), filepath.Base(path))
		if c := strings.Count(list, "worktree "+path+"\n"); c != 1 {
			t.Errorf("%s listed %d times", path, c)
		}
		if got := wtRead(t, path, "d/b.txt"); got != "b\n" {
			t.Errorf("%s: d/b.txt = %q", tk.ID, got)
		}
	}
	if strings.Contains(list, "locked") || strings.Contains(list, "prunable") {
		t.Errorf("worktree list shows locked or prunable worktrees:\n%s", list)
	}
}

// TestFastAddKilledAtEachStep: a daemon killed at each step of a
// worktree's creation leaves nothing the user's `git worktree prune`
// cannot cope with, and the next start makes the worktree: checked out,
// unlocked, listed once, created once, nothing left over.
func TestFastAddKilledAtEachStep(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"branch", "admin", "dotgit", "registered"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n", "src/a.go": "package a\n"})
			e := wtNewEnv(t, worktree.Config{})
			tk := e.task(repo)
			e.m.StopFastAddAt(step)
			if _, err := e.m.Provision(context.Background(), tk); !errors.Is(err, worktree.ErrStopped) {
				t.Fatalf("Provision = %v, want it stopped at %s", err, step)
			}
			userGit(t, repo, "worktree", "prune")
			userGit(t, repo, "worktree", "list", "--porcelain")

			m := e.manager(worktree.Config{})
			rep, err := m.Reconcile(context.Background())
			if err != nil || len(rep.Problems) > 0 {
				t.Fatalf("Reconcile = %+v, %v", rep, err)
			}
			w, err := m.Provision(context.Background(), e.getTask(tk.ID))
			if err != nil {
				t.Fatalf("Provision after the restart: %v", err)
			}
			if w.State != store.WorktreeActive {
				t.Errorf("worktree = %+v", w)
			}
			if got := wtRead(t, w.Path, "src/a.go"); got != "package a\n" {
				t.Errorf("src/a.go = %q", got)
			}
			if st := userGit(t, w.Path, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("status = %q", st)
			}
			if got := porcelain(t, repo, w.Path); got != "HEAD "+wtRev(t, repo, "main")+"\nbranch refs/heads/"+w.Branch {
				t.Errorf("worktree list: %q", got)
			}
			if ents, _ := os.ReadDir(filepath.Join(repo, ".git", "worktrees")); len(ents) != 1 {
				t.Errorf("administrative directories: %v; want one", ents)
			}
			if ents, _ := os.ReadDir(filepath.Join(repo, ".git", "neuraphage", "adding")); len(ents) != 0 {
				t.Errorf("left in adding/: %v", ents)
			}
			if tk := e.getTask(tk.ID); tk.Worktree != w.Path {
				t.Errorf("task records worktree %q", tk.Worktree)
			}
			if n := len(e.events(tk.ID, string(event.KindWorktreeCreated))); n != 1 {
				t.Errorf("%d worktree.created events; want 1", n)
			}
		})
	}
}

// TestFastAddLeftToGit: what git's add does more than write its files
// (copy the per-worktree config) or a name already taken sends the
// creation to git's own add, which does it.
func TestFastAddLeftToGit(t *testing.T) {
	t.Parallel()
	t.Run("worktree config", func(t *testing.T) {
		t.Parallel()
		repo := wtRepo(t, "main", map[string]string{"a.txt": "a\n"})
		userGit(t, repo, "config", "extensions.worktreeConfig", "true")
		userGit(t, repo, "config", "--worktree", "neuraphage.probe", "copied")
		e := wtNewEnv(t, worktree.Config{})
		w := e.provision(e.task(repo))
		if got := userGit(t, w.Path, "config", "--worktree", "neuraphage.probe"); got != "copied" {
			t.Errorf("the per-worktree config was not copied: %q", got)
		}
	})
	t.Run("name taken", func(t *testing.T) {
		t.Parallel()
		repo := wtRepo(t, "main", map[string]string{"a.txt": "a\n"})
		e := wtNewEnv(t, worktree.Config{})
		tk := e.task(repo)
		taken := filepath.Join(repo, ".git", "worktrees", string(tk.ID))
		if err := os.MkdirAll(taken, 0o755); err != nil {
			t.Fatal(err)
		}
		w := e.provision(tk)
		if got := wtRead(t, w.Path, ".git"); got != "gitdir: "+taken+"1\n" {
			t.Errorf(".git = %q; want git's own add's next name", got)
		}
		if !slices.ContainsFunc(wtWorktrees(t, repo), func(x gitWorktree) bool { return x.Path == w.Path && !x.Locked }) {
			t.Error("not listed, or locked")
		}
	})
}

// TestCheckoutIsGitsAdd: a task's worktree holds the same files, modes,
// symbolic links and index entries as a worktree made by git's own add
// of the same commit (line endings converted by the attributes, an
// executable, a link, nested directories), its index carries the files'
// stat data (git sees nothing to refresh), and its HEAD is on the task's
// branch at the base commit.
func TestCheckoutIsGitsAdd(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{
		"README.md":      "hello\n",
		".gitattributes": "*.bat text eol=crlf\n",
		"run.bat":        "echo one\necho two\n",
		"src/deep/a.go":  "package deep\n",
		"tool.sh":        "#!/bin/sh\necho hi\n",
	})
	if err := os.Chmod(filepath.Join(repo, "tool.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/deep/a.go", filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	wtGit(t, repo, "add", "-A")
	wtGit(t, repo, "commit", "-q", "-m", "mode and link")
	base := wtRev(t, repo, "main")

	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	theirs := filepath.Join(filepath.Dir(repo), "theirs")
	userGit(t, repo, "worktree", "add", "-q", "-b", "theirs", theirs, base)

	if got, want := userGit(t, w.Path, "ls-files", "-s"), userGit(t, theirs, "ls-files", "-s"); got != want {
		t.Errorf("index entries:\n%s\nwant (git's add):\n%s", got, want)
	}
	if got, want := treeOf(t, w.Path), treeOf(t, theirs); !slices.Equal(got, want) {
		t.Errorf("files:\n%s\nwant (git's add):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := wtRead(t, w.Path, "run.bat"); got != "echo one\r\necho two\r\n" {
		t.Errorf("run.bat = %q: the attributes' conversion was not applied", got)
	}
	// diff-files compares the index's stat data without refreshing it: a
	// file listed would be one git has to read again.
	if out := userGit(t, w.Path, "diff-files", "--name-only"); out != "" {
		t.Errorf("the index's stat data is stale for %q", out)
	}
	if st := userGit(t, w.Path, "status", "--porcelain", "--untracked-files=all", "--ignored"); st != "" {
		t.Errorf("status = %q", st)
	}
	if got := userGit(t, w.Path, "rev-parse", "--symbolic-full-name", "HEAD"); got != "refs/heads/"+w.Branch {
		t.Errorf("HEAD = %q, want the task's branch", got)
	}
	if got := wtRev(t, w.Path, "HEAD"); got != base {
		t.Errorf("HEAD at %s, want %s", got, base)
	}
}

// treeOf lists a work tree's entries (not .git): path, kind and
// permission bits, and the content or the link's target.
func treeOf(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		entry := fmt.Sprintf("%s %s", rel, fi.Mode())
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			entry += " -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entry += fmt.Sprintf(" %q", b)
		}
		out = append(out, entry)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
