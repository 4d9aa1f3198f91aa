package worktree_test

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// The helpers of this file are prefixed "rb" so that they do not collide
// with helpers of other test files of the package.

// rbState is everything of a worktree a rebase that did not go through
// must leave as it was.
type rbState struct {
	// Files are the worktree's files (ignored ones too) and directories,
	// outside .git: path → mode and content (a symbolic link's target).
	Files map[string]string
	// Status is git status --porcelain=v1 -z --untracked-files=all.
	Status string
	// Cached is git diff --cached: what is staged.
	Cached string
	// Head is the commit HEAD names, Symbolic the ref it is on.
	Head, Symbolic string
	// Stash is the repository's stash list: commit, position, message.
	Stash string
	// Refs are all the repository's refs.
	Refs string
	// InProgress is an operation left half done.
	InProgress string
}

func rbTake(t *testing.T, dir string) rbState {
	t.Helper()
	s := rbState{
		Files:    map[string]string{},
		Status:   rbStatus(t, dir),
		Cached:   wtGit(t, dir, "diff", "--cached", "--binary"),
		Head:     wtGit(t, dir, "rev-parse", "HEAD"),
		Stash:    wtGit(t, dir, "stash", "list", "--format=%H %gd %gs"),
		Refs:     wtGit(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"),
		Symbolic: rbSymbolic(t, dir),
	}
	st, err := git.WorkStatus(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	s.InProgress = st.InProgress
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a linked worktree's .git file
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			s.Files[rel+"/"] = info.Mode().String()
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			s.Files[rel] = info.Mode().String() + " -> " + l
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s.Files[rel] = info.Mode().String() + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rbStatus returns git status --porcelain=v1 -z --untracked-files=all,
// untrimmed.
func rbStatus(t *testing.T, dir string) string {
	t.Helper()
	out, err := git.Run(context.Background(), dir, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rbSymbolic returns the ref HEAD is on in dir, "" when it is detached.
func rbSymbolic(t *testing.T, dir string) string {
	t.Helper()
	out, err := git.Run(context.Background(), dir, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// rbSame checks that the worktree at dir is as before.
func rbSame(t *testing.T, before rbState, dir string) {
	t.Helper()
	if diff := cmp.Diff(before, rbTake(t, dir)); diff != "" {
		t.Errorf("the worktree changed (-before +after):\n%s", diff)
	}
}

// rbSetup makes a repository on main with files committed, and a task
// with its worktree.
func rbSetup(t *testing.T, files map[string]string) (*wtEnv, string, task.Task, store.Worktree) {
	t.Helper()
	e := wtNewEnv(t, worktree.Config{})
	repo := wtRepo(t, "main", files)
	tk := e.task(repo)
	return e, repo, tk, e.provision(tk)
}

// rbUserStash leaves an entry of the user's own in the repository's stash
// list, made in its main checkout, and returns its commit.
func rbUserStash(t *testing.T, repo, file string) string {
	t.Helper()
	wtWrite(t, repo, file, "the user's own stashed edit\n")
	wtGit(t, repo, "stash", "push", "-q", "-m", "the user's own stash")
	return wtGit(t, repo, "rev-parse", "refs/stash")
}

// rbNoBackups checks that no rebase backup ref is left in repo.
func rbNoBackups(t *testing.T, repo string) {
	t.Helper()
	if refs := wtGit(t, repo, "for-each-ref", worktree.BackupPrefix); refs != "" {
		t.Errorf("backup refs left: %s", refs)
	}
}

func rbRebase(t *testing.T, e *wtEnv, id task.ID, onto string) worktree.RebaseResult {
	t.Helper()
	res, err := e.m.Rebase(context.Background(), id, onto)
	if err != nil {
		t.Fatalf("Rebase(%s, %.7s): %v", id, onto, err)
	}
	return res
}

// rbChmod sets the mode of dir/rel.
func rbChmod(t *testing.T, dir, rel string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(dir, filepath.FromSlash(rel)), mode); err != nil {
		t.Fatal(err)
	}
}

func TestRebaseCleanBranch(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{"README.md": "hello\n", "a.txt": "a\n"})
	old := wtRev(t, w.Path, "HEAD")
	main := wtCommit(t, repo, "main moves", map[string]string{"a.txt": "a on main\n", "new/b.txt": "b\n"})
	events := len(e.events(tk.ID, ""))
	e.mu.Lock()
	published := len(e.published)
	e.mu.Unlock()

	res := rbRebase(t, e, tk.ID, main)
	want := worktree.RebaseResult{Outcome: worktree.Rebased, PreviousHead: old, NewHead: main, Onto: main}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Rebase (-want +got):\n%s", diff)
	}
	if h := wtRev(t, w.Path, "HEAD"); h != main {
		t.Errorf("HEAD %.7s, want main %.7s", h, main)
	}
	if b := wtRev(t, repo, "refs/heads/"+w.Branch); b != main {
		t.Errorf("branch %s at %.7s, want %.7s", w.Branch, b, main)
	}
	if s := rbSymbolic(t, w.Path); s != "refs/heads/"+w.Branch {
		t.Errorf("HEAD on %q, want the branch", s)
	}
	if st, err := git.WorkStatus(context.Background(), w.Path); err != nil || !st.Clean() {
		t.Errorf("status after %+v, %v", st, err)
	}
	if got := wtRead(t, w.Path, "a.txt") + wtRead(t, w.Path, "new/b.txt"); got != "a on main\nb\n" {
		t.Errorf("files after: %q", got)
	}
	if n := len(e.events(tk.ID, "")); n != events {
		t.Errorf("Rebase logged %d events, want none (the caller reports)", n-events)
	}
	e.mu.Lock()
	if n := len(e.published); n != published {
		t.Errorf("Rebase published %d events, want none", n-published)
	}
	e.mu.Unlock()
	rbNoBackups(t, repo)
	if s := wtGit(t, repo, "stash", "list"); s != "" {
		t.Errorf("stash list %q", s)
	}
}

func TestRebaseCarriesUncommittedWork(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{
		".gitignore":  "*.log\n",
		"README.md":   "hello\n",
		"edited.txt":  "edited\n",
		"staged.txt":  "staged\n",
		"partly.txt":  "partly\n",
		"exec.sh":     "#!/bin/sh\n",
		"deleted.txt": "deleted\n",
		"on-main.txt": "on main\n",
	})
	stash := rbUserStash(t, repo, "README.md")
	dir := w.Path
	wtWrite(t, dir, "edited.txt", "edited, not staged\n")
	wtWrite(t, dir, "staged.txt", "staged, staged\n")
	wtGit(t, dir, "add", "staged.txt")
	wtWrite(t, dir, "partly.txt", "partly, staged\n")
	wtGit(t, dir, "add", "partly.txt")
	wtWrite(t, dir, "partly.txt", "partly, staged, then edited\n")
	rbChmod(t, dir, "exec.sh", 0o755)
	if err := os.Remove(filepath.Join(dir, "deleted.txt")); err != nil {
		t.Fatal(err)
	}
	wtWrite(t, dir, "untracked.txt", "untracked\n")
	wtWrite(t, dir, "newdir/deep/file.txt", "in a new directory\n")
	if err := os.Symlink("untracked.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	wtWrite(t, dir, "debug.log", "ignored\n")
	old := wtRev(t, dir, "HEAD")
	main := wtCommit(t, repo, "main moves", map[string]string{"on-main.txt": "changed on main\n", "main-new.txt": "new on main\n"})
	before := rbTake(t, dir)

	res := rbRebase(t, e, tk.ID, main)
	want := worktree.RebaseResult{Outcome: worktree.Rebased, PreviousHead: old, NewHead: main, Onto: main, Carried: true}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Rebase (-want +got):\n%s", diff)
	}
	after := rbTake(t, dir)
	if after.Head != main || after.Symbolic != "refs/heads/"+w.Branch || wtRev(t, repo, "refs/heads/"+w.Branch) != main {
		t.Errorf("HEAD %.7s on %q, want main %.7s on the branch", after.Head, after.Symbolic, main)
	}
	// Every file as it was, but for main's own changes.
	wantFiles := maps.Clone(before.Files)
	wantFiles["on-main.txt"] = "-rw-r--r-- changed on main\n"
	wantFiles["main-new.txt"] = "-rw-r--r-- new on main\n"
	if diff := cmp.Diff(wantFiles, after.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if got := wtGit(t, dir, "diff", "--cached", "--name-only"); got != "partly.txt\nstaged.txt" {
		t.Errorf("staged %q, want partly.txt and staged.txt", got)
	}
	wantStatus := []string{" D deleted.txt", " M edited.txt", " M exec.sh", "?? link", "?? newdir/deep/file.txt", "MM partly.txt", "M  staged.txt", "?? untracked.txt"}
	if diff := cmp.Diff(wantStatus, rbStatusLines(after.Status)); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if after.Stash != before.Stash || !strings.HasPrefix(after.Stash, stash+" stash@{0} ") {
		t.Errorf("stash list %q, was %q", after.Stash, before.Stash)
	}
	rbNoBackups(t, repo)
}

// rbStatusLines splits a git status --porcelain=v1 -z output, sorted by
// path.
func rbStatusLines(status string) []string {
	var lines []string
	for f := range strings.SplitSeq(status, "\x00") {
		if f != "" {
			lines = append(lines, f)
		}
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[3:], b[3:]) })
	return lines
}

func TestRebasePredictedConflict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		dirty func(t *testing.T, dir string) // the uncommitted work that conflicts
		main  map[string]string              // main's commit
		files []string
	}{
		{
			name:  "both changed a file",
			dirty: func(t *testing.T, dir string) { wtWrite(t, dir, "f.txt", "task\n") },
			main:  map[string]string{"f.txt": "main\n"},
			files: []string{"f.txt"},
		},
		{
			name: "deleted here, changed on main",
			dirty: func(t *testing.T, dir string) {
				if err := os.Remove(filepath.Join(dir, "f.txt")); err != nil {
					t.Fatal(err)
				}
			},
			main:  map[string]string{"f.txt": "main\n"},
			files: []string{"f.txt"},
		},
		{
			name:  "untracked here, added on main",
			dirty: func(t *testing.T, dir string) { wtWrite(t, dir, "new/n.txt", "task's\n") },
			main:  map[string]string{"new/n.txt": "main's\n"},
			files: []string{"new/n.txt"},
		},
		{
			name: "staged here, changed on main",
			dirty: func(t *testing.T, dir string) {
				wtWrite(t, dir, "f.txt", "task\n")
				wtGit(t, dir, "add", "f.txt")
			},
			main:  map[string]string{"f.txt": "main\n"},
			files: []string{"f.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, repo, tk, w := rbSetup(t, map[string]string{".gitignore": "*.log\nbuild/\n", "f.txt": "base\n", "other.txt": "other\n"})
			rbUserStash(t, repo, "other.txt")
			dir := w.Path
			// Other work around the conflict, and ignored files.
			wtWrite(t, dir, "other.txt", "other, staged\n")
			wtGit(t, dir, "add", "other.txt")
			wtWrite(t, dir, "untracked.txt", "untracked\n")
			wtWrite(t, dir, "x.log", "ignored\n")
			wtWrite(t, dir, "build/out.bin", "ignored too\n")
			if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
			tt.dirty(t, dir)
			old := wtRev(t, dir, "HEAD")
			main := wtCommit(t, repo, "main moves", tt.main)
			before := rbTake(t, dir)

			res := rbRebase(t, e, tk.ID, main)
			if res.Outcome != worktree.Conflicted || !res.Predicted || res.Carried ||
				res.PreviousHead != old || res.NewHead != old || res.Onto != main {
				t.Errorf("Rebase = %+v, want a predicted conflict", res)
			}
			if !slices.Equal(res.Files, tt.files) {
				t.Errorf("Files = %q, want %q", res.Files, tt.files)
			}
			for _, f := range tt.files {
				if !strings.Contains(res.Details, f) {
					t.Errorf("Details %q do not name %s", res.Details, f)
				}
			}
			rbSame(t, before, dir)
			rbNoBackups(t, repo)
		})
	}
}

// The prediction compares the tips; the real rebase replays commit by
// commit, and may conflict where the tips do not: everything is put back.
func TestRebaseConflictDuringRebase(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{
		".gitignore": "*.log\n", "f.txt": "a\n", "g.txt": "g\n", "h.txt": "h\n", "i.txt": "i\n",
	})
	rbUserStash(t, repo, "g.txt")
	dir := w.Path
	wtCommit(t, dir, "C1: a to b", map[string]string{"f.txt": "b\n"})
	tip := wtCommit(t, dir, "C2: b back to a", map[string]string{"f.txt": "a\n"})
	main := wtCommit(t, repo, "main: a to c", map[string]string{"f.txt": "c\n", "main.txt": "main\n"})
	// Uncommitted work elsewhere.
	wtWrite(t, dir, "g.txt", "g, edited\n")
	wtWrite(t, dir, "h.txt", "h, staged\n")
	wtGit(t, dir, "add", "h.txt")
	wtWrite(t, dir, "h.txt", "h, staged, then edited\n")
	rbChmod(t, dir, "i.txt", 0o755)
	wtWrite(t, dir, "untracked.txt", "untracked\n")
	wtWrite(t, dir, "newdir/deep/u.txt", "untracked, deep\n")
	wtWrite(t, dir, "x.log", "ignored\n")
	before := rbTake(t, dir)

	res := rbRebase(t, e, tk.ID, main)
	if res.Outcome != worktree.Conflicted || res.Predicted || !res.Carried ||
		res.PreviousHead != tip || res.NewHead != tip || res.Onto != main {
		t.Errorf("Rebase = %+v, want a conflict found by the rebase itself", res)
	}
	if !slices.Equal(res.Files, []string{"f.txt"}) {
		t.Errorf("Files = %q, want f.txt", res.Files)
	}
	if res.Details == "" {
		t.Error("no Details")
	}
	rbSame(t, before, dir)
	rbNoBackups(t, repo)
}

// A staged change that the work tree reverted predicts clean (the work
// tree has nothing to merge) but cannot be re-applied to the index on
// top of main: the rebase is undone and the work put back.
func TestRebaseConflictReapplyingIndex(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{"f.txt": "base\n", "g.txt": "g\n"})
	rbUserStash(t, repo, "g.txt")
	dir := w.Path
	old := wtRev(t, dir, "HEAD")
	wtWrite(t, dir, "f.txt", "staged\n")
	wtGit(t, dir, "add", "f.txt")
	wtWrite(t, dir, "f.txt", "base\n")
	wtWrite(t, dir, "g.txt", "g, edited\n")
	wtWrite(t, dir, "new/u.txt", "untracked\n")
	main := wtCommit(t, repo, "main moves", map[string]string{"f.txt": "main\n"})
	before := rbTake(t, dir)

	res := rbRebase(t, e, tk.ID, main)
	if res.Outcome != worktree.Conflicted || res.Predicted || !res.Carried || res.NewHead != old {
		t.Errorf("Rebase = %+v, want a conflict re-applying the work", res)
	}
	rbSame(t, before, dir)
	rbNoBackups(t, repo)
}

func TestRebaseReplaysTaskCommits(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{"README.md": "hello\n", "a.txt": "a\n", "b.txt": "b\n"})
	dir := w.Path
	e.commitWork(tk.ID, "task: first", map[string]string{"t1.txt": "1\n", "a.txt": "a, by the task\n"})
	old := e.commitWork(tk.ID, "task: second\n\nWith a body.", map[string]string{"t2.txt": "2\n"})
	wtWrite(t, dir, "a.txt", "a, by the task, uncommitted\n")
	wtWrite(t, dir, "u.txt", "untracked\n")
	wtCommit(t, repo, "main one", map[string]string{"b.txt": "b on main\n"})
	main := wtCommit(t, repo, "main two", map[string]string{"m.txt": "m\n"})

	res := rbRebase(t, e, tk.ID, main)
	if res.Outcome != worktree.Rebased || !res.Carried || res.PreviousHead != old || res.NewHead == old {
		t.Fatalf("Rebase = %+v, want Rebased with the work carried", res)
	}
	if h := wtRev(t, dir, "HEAD"); h != res.NewHead || wtRev(t, repo, "refs/heads/"+w.Branch) != h {
		t.Errorf("HEAD %.7s, branch %.7s, NewHead %.7s", h, wtRev(t, repo, "refs/heads/"+w.Branch), res.NewHead)
	}
	if p := wtGit(t, dir, "rev-parse", "HEAD~2"); p != main {
		t.Errorf("HEAD~2 = %.7s, want main %.7s", p, main)
	}
	if got := wtGit(t, dir, "log", "--format=%B%x00", main+"..HEAD"); got != "task: second\n\nWith a body.\n\x00\ntask: first\n\x00" {
		t.Errorf("the task's commits on main: %q", got)
	}
	for rev, files := range map[string]string{"HEAD": "t2.txt", "HEAD~1": "a.txt\nt1.txt"} {
		if got := wtGit(t, dir, "show", "--format=", "--name-only", rev); got != files {
			t.Errorf("%s changes %q, want %q", rev, got, files)
		}
	}
	for rel, want := range map[string]string{
		"a.txt": "a, by the task, uncommitted\n", "u.txt": "untracked\n", "b.txt": "b on main\n",
		"m.txt": "m\n", "t1.txt": "1\n", "t2.txt": "2\n",
	} {
		if got := wtRead(t, dir, rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if got := rbStatusLines(rbStatus(t, dir)); !slices.Equal(got, []string{" M a.txt", "?? u.txt"}) {
		t.Errorf("status %q", got)
	}
	rbNoBackups(t, repo)
}

func TestRebaseUpToDate(t *testing.T) {
	t.Parallel()
	e, repo, tk, w := rbSetup(t, map[string]string{"a.txt": "a\n"})
	dir := w.Path
	base := wtRev(t, repo, "main")
	// The task's own commit, and uncommitted work.
	tip := e.commitWork(tk.ID, "task", map[string]string{"t.txt": "t\n"})
	wtWrite(t, dir, "a.txt", "a, edited\n")
	wtWrite(t, dir, "u.txt", "u\n")
	before := rbTake(t, dir)
	for name, onto := range map[string]string{"main where it was": base, "the branch's own tip": tip} {
		res := rbRebase(t, e, tk.ID, onto)
		want := worktree.RebaseResult{Outcome: worktree.UpToDate, PreviousHead: tip, NewHead: tip, Onto: onto}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("%s: Rebase (-want +got):\n%s", name, diff)
		}
		rbSame(t, before, dir)
	}
}

// Tasks of one repository share its stash list: rebased at the same
// time, each gets its own work back, and the list is as it was.
func TestRebaseConcurrentTasks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := wtNewEnv(t, worktree.Config{})
	repo := wtRepo(t, "main", map[string]string{"shared.txt": "shared\n", "main.txt": "main\n"})
	stash := rbUserStash(t, repo, "shared.txt")
	const n = 4
	var tasks []task.Task
	var paths []string
	for i := range n {
		tk := e.task(repo)
		w := e.provision(tk)
		tasks, paths = append(tasks, tk), append(paths, w.Path)
		// The same files in every worktree, with the task's own content.
		wtWrite(t, w.Path, "shared.txt", "edited by "+string(tk.ID)+"\n")
		wtWrite(t, w.Path, "notes/mine.txt", "untracked of "+string(tk.ID)+"\n")
		if i%2 == 0 {
			wtGit(t, w.Path, "add", "shared.txt")
		}
	}
	main := wtCommit(t, repo, "main moves", map[string]string{"main.txt": "main, moved\n"})
	stashes := wtGit(t, repo, "stash", "list", "--format=%H %gd %gs")

	results := make([]worktree.RebaseResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, tk := range tasks {
		wg.Go(func() { results[i], errs[i] = e.m.Rebase(ctx, tk.ID, main) })
	}
	wg.Wait()

	for i, tk := range tasks {
		if errs[i] != nil || results[i].Outcome != worktree.Rebased || !results[i].Carried || results[i].NewHead != main {
			t.Errorf("task %d: Rebase = %+v, %v", i, results[i], errs[i])
		}
		for rel, want := range map[string]string{
			"shared.txt":     "edited by " + string(tk.ID) + "\n",
			"notes/mine.txt": "untracked of " + string(tk.ID) + "\n",
			"main.txt":       "main, moved\n",
		} {
			if got := wtRead(t, paths[i], rel); got != want {
				t.Errorf("task %d: %s = %q, want %q", i, rel, got, want)
			}
		}
		wantStatus := []string{"?? notes/mine.txt", " M shared.txt"}
		if i%2 == 0 {
			wantStatus[1] = "M  shared.txt"
		}
		if got := rbStatusLines(rbStatus(t, paths[i])); !slices.Equal(got, wantStatus) {
			t.Errorf("task %d: status %q, want %q", i, got, wantStatus)
		}
	}
	if got := wtGit(t, repo, "stash", "list", "--format=%H %gd %gs"); got != stashes || !strings.HasPrefix(got, stash+" ") {
		t.Errorf("stash list %q, was %q", got, stashes)
	}
	rbNoBackups(t, repo)
}
