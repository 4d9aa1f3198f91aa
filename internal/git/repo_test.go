package git_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// The helpers of this file are prefixed "rt" so that they do not collide
// with helpers of other test files of the package.

var rtHexOID = regexp.MustCompile(`^[0-9a-f]{40}$`)

// rtRepoOn makes a repository whose first branch is branch, with files
// committed (one empty commit when files is nil).
func rtRepoOn(t *testing.T, branch string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	mustGit(t, dir, "-c", "init.defaultBranch="+branch, "init", "-q")
	for path, content := range files {
		write(t, dir, path, content)
	}
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "commit", "-q", "--allow-empty", "-m", "initial")
	return dir
}

// rtCommit writes files and commits them all, returning the new commit.
func rtCommit(t *testing.T, dir, msg string, files map[string]string) string {
	t.Helper()
	for path, content := range files {
		write(t, dir, path, content)
	}
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return rtHead(t, dir)
}

// rtHead returns the commit HEAD names in dir.
func rtHead(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
}

// rtReal resolves symbolic links in p (git reports physical paths).
func rtReal(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(r)
}

// rtGitFails runs git and fails the test unless git fails.
func rtGitFails(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := git.Run(context.Background(), dir, args...); err == nil {
		t.Fatalf("git %s succeeded (%q), want a failure", strings.Join(args, " "), out)
	}
}

func rtInspect(t *testing.T, dir string) git.Repo {
	t.Helper()
	r, err := git.Inspect(context.Background(), dir)
	if err != nil {
		t.Fatalf("Inspect(%s): %v", dir, err)
	}
	return r
}

func TestInspect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("normal repository", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, map[string]string{"a.txt": "a\n"})
		top := rtReal(t, dir)
		want := git.Repo{
			Top:       top,
			Main:      top,
			CommonDir: filepath.Join(top, ".git"),
			GitDir:    filepath.Join(top, ".git"),
			Branch:    "main",
			Head:      rtHead(t, dir),
		}
		if got := rtInspect(t, dir); got != want {
			t.Errorf("Inspect =\n%+v, want\n%+v", got, want)
		}
		if !rtHexOID.MatchString(want.Head) {
			t.Errorf("Head %q is not a commit id", want.Head)
		}
	})

	t.Run("subdirectory", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, map[string]string{"sub/deeper/f.txt": "f\n"})
		top := rtReal(t, dir)
		got := rtInspect(t, filepath.Join(dir, "sub", "deeper"))
		want := git.Repo{
			Top:       top,
			Main:      top,
			CommonDir: filepath.Join(top, ".git"),
			GitDir:    filepath.Join(top, ".git"),
			Branch:    "main",
			Head:      rtHead(t, dir),
		}
		if got != want {
			t.Errorf("Inspect(subdir) =\n%+v, want\n%+v", got, want)
		}
	})

	t.Run("linked worktree", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, map[string]string{"a.txt": "a\n"})
		wt := filepath.Join(t.TempDir(), "wt")
		mustGit(t, dir, "worktree", "add", "-q", "-b", "feature", wt)
		write(t, wt, "sub/b.txt", "b\n")
		featHead := rtCommit(t, wt, "on feature", nil)
		main := rtReal(t, dir)
		wtTop := rtReal(t, wt)

		for _, d := range []string{wt, filepath.Join(wt, "sub")} {
			got := rtInspect(t, d)
			want := git.Repo{
				Top:       wtTop,
				Main:      main,
				CommonDir: filepath.Join(main, ".git"),
				GitDir:    filepath.Join(main, ".git", "worktrees", "wt"),
				Branch:    "feature",
				Head:      featHead,
			}
			if got != want {
				t.Errorf("Inspect(%s) =\n%+v, want\n%+v", d, got, want)
			}
		}
		// The main work tree, seen from itself, shares the common dir.
		m := rtInspect(t, dir)
		if m.CommonDir != filepath.Join(main, ".git") || m.Top != main || m.Main != main || m.Branch != "main" {
			t.Errorf("Inspect(main) = %+v", m)
		}
		if m.Head == featHead {
			t.Errorf("main Head %s is the feature commit", m.Head)
		}
	})

	t.Run("linked worktree of a repository with a separate git dir", func(t *testing.T) {
		t.Parallel()
		base := rtReal(t, t.TempDir())
		main, gitDir, wt := filepath.Join(base, "main"), filepath.Join(base, "gitdir"), filepath.Join(base, "wt")
		mustGit(t, base, "-c", "init.defaultBranch=main", "init", "-q", "--separate-git-dir="+gitDir, main)
		mustGit(t, main, "commit", "-q", "--allow-empty", "-m", "initial")
		mustGit(t, main, "worktree", "add", "-q", "-b", "feature", wt)

		m := rtInspect(t, main)
		if m.Top != main || m.Main != main || m.CommonDir != gitDir || m.GitDir != gitDir {
			t.Errorf("Inspect(main) = %+v", m)
		}
		w := rtInspect(t, wt)
		if w.Top != wt || w.CommonDir != gitDir || w.GitDir != filepath.Join(gitDir, "worktrees", "wt") || w.Branch != "feature" {
			t.Errorf("Inspect(wt) = %+v", w)
		}
		if w.Main != main {
			if w.Main == wt {
				t.Skipf("BUG: Inspect of a linked worktree of a repository whose git dir is not named .git (git init --separate-git-dir; also submodules) gives Main = the linked worktree %s, want the main work tree %s", w.Main, main)
			}
			t.Errorf("Inspect(wt).Main = %s, want %s", w.Main, main)
		}
	})

	t.Run("detached HEAD", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, nil)
		c2 := rtCommit(t, dir, "second", map[string]string{"b.txt": "b\n"})
		mustGit(t, dir, "checkout", "-q", "--detach", "HEAD~1")
		got := rtInspect(t, dir)
		if got.Branch != "" {
			t.Errorf("Branch = %q, want \"\" for a detached HEAD", got.Branch)
		}
		if got.Head == "" || got.Head == c2 || got.Head != rtHead(t, dir) {
			t.Errorf("Head = %q, want the detached commit %s", got.Head, rtHead(t, dir))
		}
	})

	t.Run("empty repository", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		mustGit(t, dir, "-c", "init.defaultBranch=main", "init", "-q")
		got := rtInspect(t, dir)
		top := rtReal(t, dir)
		if got.Head != "" {
			t.Errorf("Head = %q, want \"\" in an empty repository", got.Head)
		}
		if got.Top != top || got.Main != top || got.CommonDir != filepath.Join(top, ".git") {
			t.Errorf("Inspect = %+v, want Top and Main %s", got, top)
		}
		// Repo.Branch is documented as "" when HEAD is detached or unborn.
		if got.Branch != "" {
			if got.Branch == "main" {
				t.Skipf("BUG: Inspect of an empty repository (unborn HEAD) gives Branch %q; Repo.Branch is documented as \"\" when HEAD is unborn", got.Branch)
			}
			t.Errorf("Branch = %q, want \"\" (HEAD is unborn)", got.Branch)
		}
	})

	t.Run("bare repository", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		mustGit(t, dir, "init", "-q", "--bare")
		_, err := git.Inspect(ctx, dir)
		if !errors.Is(err, git.ErrBare) {
			t.Errorf("got %v, want ErrBare", err)
		}
		if errors.Is(err, git.ErrNotRepo) {
			t.Errorf("got %v, which is also ErrNotRepo", err)
		}
	})

	t.Run("plain directory", func(t *testing.T) {
		t.Parallel()
		_, err := git.Inspect(ctx, t.TempDir())
		if !errors.Is(err, git.ErrNotRepo) {
			t.Errorf("got %v, want ErrNotRepo", err)
		}
	})

	t.Run("inside .git", func(t *testing.T) {
		t.Parallel()
		_, err := git.Inspect(ctx, filepath.Join(repo(t, nil), ".git"))
		if !errors.Is(err, git.ErrNotRepo) {
			t.Errorf("got %v, want ErrNotRepo", err)
		}
	})

	t.Run("missing directory", func(t *testing.T) {
		t.Parallel()
		_, err := git.Inspect(ctx, filepath.Join(t.TempDir(), "missing"))
		if err == nil || errors.Is(err, git.ErrNotRepo) || errors.Is(err, git.ErrBare) {
			t.Errorf("got %v, want an error other than ErrNotRepo/ErrBare", err)
		}
	})
}

func TestRevParse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	c1 := rtHead(t, dir)
	c2 := rtCommit(t, dir, "second", map[string]string{"b.txt": "b\n"})
	mustGit(t, dir, "tag", "-a", "-m", "annotated", "v1", c1)

	for _, tc := range []struct{ rev, want string }{
		{"HEAD", c2},
		{"main", c2},
		{"refs/heads/main", c2},
		{"HEAD~1", c1},
		{c1, c1},
		{c1[:10], c1},
		{"v1", c1}, // an annotated tag is peeled to its commit
	} {
		got, err := git.RevParse(ctx, dir, tc.rev)
		if err != nil || got != tc.want {
			t.Errorf("RevParse(%q) = %q, %v; want %q", tc.rev, got, err, tc.want)
		}
	}

	tree := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD^{tree}"))
	for _, rev := range []string{"no-such-branch", "refs/heads/nope", "HEAD~5", tree, "--all", "-h"} {
		got, err := git.RevParse(ctx, dir, rev)
		if !errors.Is(err, git.ErrNoRef) {
			t.Errorf("RevParse(%q) = %q, %v; want ErrNoRef", rev, got, err)
		}
		if got != "" {
			t.Errorf("RevParse(%q) = %q, want \"\"", rev, got)
		}
	}

	// Outside a repository is an error, but not "no such ref".
	if _, err := git.RevParse(ctx, t.TempDir(), "HEAD"); err == nil || errors.Is(err, git.ErrNoRef) {
		t.Errorf("RevParse outside a repository: got %v, want an error other than ErrNoRef", err)
	}
}

func TestBranchExists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := repo(t, nil)
	mustGit(t, dir, "branch", "feature")
	mustGit(t, dir, "tag", "v1")
	for name, want := range map[string]bool{
		"main":    true,
		"feature": true,
		"v1":      false, // a tag, not a branch
		"nope":    false,
		"HEAD":    false,
	} {
		got, err := git.BranchExists(ctx, dir, name)
		if err != nil || got != want {
			t.Errorf("BranchExists(%q) = %v, %v; want %v", name, got, err, want)
		}
	}

	empty := t.TempDir()
	mustGit(t, empty, "-c", "init.defaultBranch=main", "init", "-q")
	if got, err := git.BranchExists(ctx, empty, "main"); err != nil || got {
		t.Errorf("BranchExists(main) in an empty repository = %v, %v; want false", got, err)
	}

	if _, err := git.BranchExists(ctx, t.TempDir(), "main"); err == nil {
		t.Error("BranchExists outside a repository: no error")
	}
}

func TestDefaultBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	check := func(t *testing.T, dir, want string) {
		t.Helper()
		got, err := git.DefaultBranch(ctx, rtInspect(t, dir))
		if err != nil || got != want {
			t.Errorf("DefaultBranch = %q, %v; want %q", got, err, want)
		}
	}

	t.Run("main", func(t *testing.T) {
		t.Parallel()
		check(t, repo(t, nil), "main")
	})

	t.Run("main wins over master and the checked-out branch", func(t *testing.T) {
		t.Parallel()
		dir := rtRepoOn(t, "master", nil)
		mustGit(t, dir, "branch", "main")
		mustGit(t, dir, "checkout", "-q", "-b", "other")
		check(t, dir, "main")
	})

	t.Run("only master", func(t *testing.T) {
		t.Parallel()
		check(t, rtRepoOn(t, "master", nil), "master")
	})

	t.Run("master wins over the checked-out branch", func(t *testing.T) {
		t.Parallel()
		dir := rtRepoOn(t, "master", nil)
		mustGit(t, dir, "checkout", "-q", "-b", "topic")
		check(t, dir, "master")
	})

	t.Run("only trunk", func(t *testing.T) {
		t.Parallel()
		check(t, rtRepoOn(t, "trunk", nil), "trunk")
	})

	t.Run("from a linked worktree, the main work tree's branch", func(t *testing.T) {
		t.Parallel()
		dir := rtRepoOn(t, "trunk", nil)
		wt := filepath.Join(t.TempDir(), "wt")
		mustGit(t, dir, "worktree", "add", "-q", "-b", "feature", wt)
		check(t, wt, "trunk")
	})

	t.Run("origin/HEAD", func(t *testing.T) {
		t.Parallel()
		src := rtRepoOn(t, "develop", nil)
		mustGit(t, src, "branch", "master")
		dst := filepath.Join(t.TempDir(), "clone")
		mustGit(t, filepath.Dir(dst), "clone", "-q", src, dst)
		mustGit(t, dst, "branch", "master", "origin/master")
		// origin/HEAD → develop comes before master.
		check(t, dst, "develop")

		// origin/HEAD naming a branch that does not exist locally is
		// passed over.
		mustGit(t, dst, "checkout", "-q", "--detach")
		mustGit(t, dst, "branch", "-D", "develop")
		check(t, dst, "master")
	})

	t.Run("detached HEAD without main or master", func(t *testing.T) {
		t.Parallel()
		dir := rtRepoOn(t, "trunk", nil)
		mustGit(t, dir, "checkout", "-q", "--detach")
		got, err := git.DefaultBranch(ctx, rtInspect(t, dir))
		if err == nil {
			t.Fatalf("DefaultBranch = %q, want an error", got)
		}
		if !strings.Contains(err.Error(), "worktree.base") {
			t.Errorf("error %q does not mention worktree.base", err)
		}
	})

	t.Run("empty repository", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		mustGit(t, dir, "-c", "init.defaultBranch=trunk", "init", "-q")
		got, err := git.DefaultBranch(ctx, git.Repo{Top: dir, Main: dir})
		if err == nil {
			t.Errorf("DefaultBranch of an empty repository = %q, want an error", got)
		}
	})
}

func TestIsAncestorAndCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := repo(t, nil)
	c1 := rtHead(t, dir)
	c2 := rtCommit(t, dir, "2", map[string]string{"a": "2"})
	c3 := rtCommit(t, dir, "3", map[string]string{"a": "3"})
	mustGit(t, dir, "checkout", "-q", "-b", "side", c1)
	s1 := rtCommit(t, dir, "s1", map[string]string{"s": "1"})
	s2 := rtCommit(t, dir, "s2", map[string]string{"s": "2"})

	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{c1, c3, true},
		{c2, c3, true},
		{c3, c3, true}, // equal counts
		{c3, c1, false},
		{c3, s2, false}, // diverged
		{s2, c3, false},
		{c1, s2, true},
		{"main", "side", false},
		{"main~2", "side", true},
	} {
		got, err := git.IsAncestor(ctx, dir, tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("IsAncestor(%.7s, %.7s) = %v, %v; want %v", tc.a, tc.b, got, err, tc.want)
		}
	}
	if got, err := git.IsAncestor(ctx, dir, "no-such-rev", c1); err == nil {
		t.Errorf("IsAncestor(no-such-rev) = %v, nil; want an error", got)
	}

	for _, tc := range []struct {
		a, b string
		want int
	}{
		{c1, c3, 2},
		{c2, c3, 1},
		{c3, c3, 0},
		{c3, c1, 0},
		{c3, s2, 2}, // s1, s2
		{s2, c3, 2}, // c2, c3
		{s1, s2, 1},
		{"main", "side", 2},
	} {
		got, err := git.Count(ctx, dir, tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("Count(%.7s..%.7s) = %d, %v; want %d", tc.a, tc.b, got, err, tc.want)
		}
	}
	if got, err := git.Count(ctx, dir, c1, "no-such-rev"); err == nil {
		t.Errorf("Count(..no-such-rev) = %d, nil; want an error", got)
	}
}

// TestEqualCommitsAskNoGit: a range or an ancestry between one commit id
// and itself is answered without a git process (not parallel: it counts
// the git processes this test binary starts); a name is still resolved by
// git, so one that does not resolve is an error.
func TestEqualCommitsAskNoGit(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, nil)
	c := rtHead(t, dir)
	before := git.Started()
	if ok, err := git.IsAncestor(ctx, dir, c, c); err != nil || !ok {
		t.Errorf("IsAncestor(c, c) = %v, %v; want true", ok, err)
	}
	if n, err := git.Count(ctx, dir, c, c); err != nil || n != 0 {
		t.Errorf("Count(c..c) = %d, %v; want 0", n, err)
	}
	if cs, err := git.RangeCommits(ctx, dir, c, c); err != nil || len(cs) != 0 {
		t.Errorf("RangeCommits(c..c) = %v, %v; want none", cs, err)
	}
	if n := git.Started() - before; n != 0 {
		t.Errorf("%d git process(es) for questions about one commit and itself, want 0", n)
	}
	if _, err := git.IsAncestor(ctx, dir, "no-such-rev", "no-such-rev"); err == nil {
		t.Error("IsAncestor(no-such-rev, no-such-rev): no error")
	}
	if _, err := git.RangeCommits(ctx, dir, "no-such-rev", "no-such-rev"); err == nil {
		t.Error("RangeCommits(no-such-rev..no-such-rev): no error")
	}
}

func TestWorktrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := repo(t, nil)
	c1 := rtHead(t, dir)
	parent := t.TempDir()
	wt1 := filepath.Join(parent, "wt one")     // a space in the name
	wt2 := filepath.Join(parent, "a b", "wt2") // and in a parent directory
	wt3 := filepath.Join(parent, "gone")
	wt4 := filepath.Join(parent, "locked wt")
	mustGit(t, dir, "worktree", "add", "-q", "-b", "feature-1", wt1)
	c2 := rtCommit(t, wt1, "on feature", nil)
	mustGit(t, dir, "worktree", "add", "-q", "--detach", wt2, c1)
	mustGit(t, dir, "worktree", "add", "-q", "-b", "gone", wt3)
	mustGit(t, dir, "worktree", "add", "-q", "-b", "locked", wt4)
	mustGit(t, dir, "worktree", "lock", "--reason", "on a removable disk", wt4)
	if err := os.RemoveAll(wt3); err != nil {
		t.Fatal(err)
	}
	rp := rtReal(t, parent)

	want := []git.WorktreeInfo{
		{Path: rtReal(t, dir), Head: c1, Branch: "main"},
		{Path: filepath.Join(rp, "wt one"), Head: c2, Branch: "feature-1"},
		{Path: filepath.Join(rp, "a b", "wt2"), Head: c1, Detached: true},
		{Path: filepath.Join(rp, "gone"), Head: c1, Branch: "gone", Prunable: true},
		{Path: filepath.Join(rp, "locked wt"), Head: c1, Branch: "locked", Locked: true},
	}
	// From the main work tree, from a linked one and from a subdirectory:
	// the same list, the main work tree first.
	write(t, wt1, "sub/f", "f")
	for _, from := range []string{dir, wt1, filepath.Join(wt1, "sub"), wt2} {
		got, err := git.Worktrees(ctx, from)
		if err != nil {
			t.Fatalf("Worktrees(%s): %v", from, err)
		}
		if len(got) == 0 || got[0] != want[0] {
			t.Errorf("Worktrees(%s): first = %+v, want the main work tree %+v", from, got, want[0])
		}
		// git lists linked worktrees in the order of its admin directory;
		// compare without depending on it.
		sortByPath := func(l []git.WorktreeInfo) []git.WorktreeInfo {
			l = slices.Clone(l)
			slices.SortFunc(l[1:], func(a, b git.WorktreeInfo) int { return strings.Compare(a.Path, b.Path) })
			return l
		}
		if g, w := sortByPath(got), sortByPath(want); !slices.Equal(g, w) {
			t.Errorf("Worktrees(%s) =\n%+v\nwant\n%+v", from, g, w)
		}
	}

	// After a prune, the deleted one is gone.
	mustGit(t, dir, "worktree", "prune")
	got, err := git.Worktrees(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || slices.ContainsFunc(got, func(w git.WorktreeInfo) bool { return w.Prunable }) {
		t.Errorf("after prune: %+v", got)
	}

	if _, err := git.Worktrees(ctx, t.TempDir()); err == nil {
		t.Error("Worktrees outside a repository: no error")
	}
}

func TestWorktreesBare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := repo(t, nil)
	bare := filepath.Join(t.TempDir(), "bare.git")
	mustGit(t, src, "clone", "-q", "--bare", src, bare)
	wt := filepath.Join(t.TempDir(), "wt")
	mustGit(t, bare, "worktree", "add", "-q", wt, "main")
	got, err := git.Worktrees(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Bare || got[0].Path != rtReal(t, bare) || got[1].Path != rtReal(t, wt) || got[1].Branch != "main" || got[1].Bare {
		t.Errorf("Worktrees = %+v, want the bare repository then the worktree", got)
	}
}

// rtRepoState is what MergeTree must leave alone.
type rtRepoState struct {
	status, head, refs string
	index              []byte
}

func rtState(t *testing.T, dir string) rtRepoState {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return rtRepoState{
		status: mustGit(t, dir, "status", "--porcelain", "--untracked-files=all"),
		head:   mustGit(t, dir, "rev-parse", "HEAD"),
		refs:   mustGit(t, dir, "for-each-ref"),
		index:  index,
	}
}

func (s rtRepoState) equal(o rtRepoState) bool {
	return s.status == o.status && s.head == o.head && s.refs == o.refs && bytes.Equal(s.index, o.index)
}

func TestMergeTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// base: a, b, c; ours changes a, b and deletes c; theirs (a branch)
	// changes a, b, c differently and adds d; clean edits go to other files.
	dir := repo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "dir/e.txt": "e\n"})
	base := rtHead(t, dir)
	mustGit(t, dir, "branch", "theirs")
	mustGit(t, dir, "branch", "clean")
	mustGit(t, dir, "rm", "-q", "c.txt")
	ours := rtCommit(t, dir, "ours", map[string]string{"a.txt": "ours\n", "b.txt": "ours\n"})
	mustGit(t, dir, "checkout", "-q", "theirs")
	theirs := rtCommit(t, dir, "theirs", map[string]string{"a.txt": "theirs\n", "b.txt": "theirs\n", "c.txt": "theirs\n", "d.txt": "d\n"})
	mustGit(t, dir, "checkout", "-q", "clean")
	clean := rtCommit(t, dir, "clean", map[string]string{"dir/e.txt": "e2\n", "f.txt": "f\n"})
	mustGit(t, dir, "checkout", "-q", "--orphan", "unrelated")
	mustGit(t, dir, "rm", "-q", "-r", "-f", ".")
	unrelated := rtCommit(t, dir, "unrelated", map[string]string{"z.txt": "z\n"})
	mustGit(t, dir, "checkout", "-q", "main")

	// A dirty work tree and index, to see they are left alone.
	write(t, dir, "a.txt", "dirty\n")
	write(t, dir, "staged.txt", "s\n")
	mustGit(t, dir, "add", "staged.txt")
	write(t, dir, "untracked/u.txt", "u\n")
	before := rtState(t, dir)

	t.Run("clean", func(t *testing.T) {
		r, err := git.MergeTree(ctx, dir, ours, clean)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Clean || len(r.Conflicts) != 0 || !rtHexOID.MatchString(r.Tree) {
			t.Fatalf("MergeTree = %+v, want a clean merge with a tree", r)
		}
		for path, want := range map[string]string{"a.txt": "ours\n", "dir/e.txt": "e2\n", "f.txt": "f\n"} {
			if got := mustGit(t, dir, "cat-file", "blob", r.Tree+":"+path); got != want {
				t.Errorf("%s in the merged tree = %q, want %q", path, got, want)
			}
		}
		if _, err := git.Run(ctx, dir, "cat-file", "-e", r.Tree+":c.txt"); err == nil {
			t.Error("c.txt, deleted by ours, is in the merged tree")
		}
		// By branch name too, and merging a commit with its ancestor.
		r2, err := git.MergeTree(ctx, dir, "main", "clean")
		if err != nil || r2.Tree != r.Tree || !r2.Clean || len(r2.Conflicts) != 0 {
			t.Errorf("MergeTree(main, clean) = %+v, %v; want %+v", r2, err, r)
		}
		r3, err := git.MergeTree(ctx, dir, ours, base)
		ourTree := strings.TrimSpace(mustGit(t, dir, "rev-parse", ours+"^{tree}"))
		if err != nil || !r3.Clean || r3.Tree != ourTree {
			t.Errorf("MergeTree(ours, base) = %+v, %v; want clean with tree %s", r3, err, ourTree)
		}
	})

	t.Run("conflict", func(t *testing.T) {
		r, err := git.MergeTree(ctx, dir, ours, theirs)
		if err != nil {
			t.Fatal(err)
		}
		if r.Clean {
			t.Errorf("MergeTree = %+v, want a conflict", r)
		}
		if !rtHexOID.MatchString(r.Tree) {
			t.Errorf("Tree = %q, want a tree id", r.Tree)
		}
		want := []string{"a.txt", "b.txt", "c.txt"}
		got := slices.Clone(r.Conflicts)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("Conflicts = %q, want %q, each once", r.Conflicts, want)
		}
		if a := mustGit(t, dir, "cat-file", "blob", r.Tree+":a.txt"); !strings.Contains(a, "<<<<<<<") {
			t.Errorf("a.txt in the merged tree has no conflict markers: %q", a)
		}
	})

	t.Run("unrelated histories", func(t *testing.T) {
		if r, err := git.MergeTree(ctx, dir, ours, unrelated); err == nil {
			t.Errorf("MergeTree(unrelated) = %+v, nil; want an error", r)
		}
	})

	t.Run("outside a repository", func(t *testing.T) {
		if r, err := git.MergeTree(ctx, t.TempDir(), "a", "b"); err == nil {
			t.Errorf("MergeTree outside a repository = %+v, nil; want an error", r)
		}
	})

	t.Run("missing revision", func(t *testing.T) {
		for _, args := range [][2]string{{ours, "no-such-branch"}, {"no-such-branch", theirs}} {
			r, err := git.MergeTree(ctx, dir, args[0], args[1])
			if err != nil {
				continue
			}
			if r.Tree == "" && !r.Clean && len(r.Conflicts) == 0 {
				// git merge-tree exits 1 (as for a conflict) on "not
				// something we can merge".
				t.Skipf("BUG: MergeTree(%q, %q) with a revision that does not exist = %+v, nil error (a \"conflict\" with no tree and no files); want an error", args[0], args[1], r)
			}
			t.Errorf("MergeTree(%q, %q) = %+v, nil; want an error", args[0], args[1], r)
		}
	})

	if after := rtState(t, dir); !after.equal(before) {
		t.Errorf("MergeTree changed the repository:\nbefore %+v\nafter  %+v", before, after)
	}
	if got := mustGit(t, dir, "cat-file", "blob", ":a.txt"); got != "ours\n" {
		t.Errorf("index a.txt = %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "dirty\n" {
		t.Errorf("work tree a.txt = %q", b)
	}
	for _, f := range []string{"MERGE_HEAD", "AUTO_MERGE", "ORIG_HEAD"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", f)); err == nil {
			t.Errorf(".git/%s exists after MergeTree", f)
		}
	}
}

func rtStatus(t *testing.T, dir string) git.Status {
	t.Helper()
	s, err := git.WorkStatus(context.Background(), dir)
	if err != nil {
		t.Fatalf("WorkStatus(%s): %v", dir, err)
	}
	return s
}

func rtSorted(l []string) []string {
	l = slices.Clone(l)
	slices.Sort(l)
	return l
}

func TestWorkStatus(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"a.txt":          "a\n",
		"b.txt":          "b\n",
		"old name.txt":   "a file that is renamed, long enough to be recognised\n",
		"sub/c.txt":      "c\n",
		".gitignore":     "*.log\nbuild/\n",
		"keep/.gitkeep":  "",
		"with space.txt": "s\n",
	}

	t.Run("clean", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, files)
		write(t, dir, "x.log", "ignored\n")
		write(t, dir, "build/out/bin", "ignored\n")
		write(t, dir, "sub/y.log", "ignored\n")
		s := rtStatus(t, dir)
		if !s.Clean() || s.Describe() != "clean" || len(s.Changed)+len(s.Untracked) != 0 || s.InProgress != "" {
			t.Errorf("WorkStatus = %+v (%q), want clean; ignored files must not be listed", s, s.Describe())
		}
		if head := rtHead(t, dir); s.Head != head {
			t.Errorf("Head = %q, want %s", s.Head, head)
		}
		if want := strings.TrimSpace(mustGit(t, dir, "symbolic-ref", "--short", "HEAD")); s.Branch != want {
			t.Errorf("Branch = %q, want %q", s.Branch, want)
		}
		mustGit(t, dir, "checkout", "-q", "--detach")
		if s := rtStatus(t, dir); s.Branch != "" || s.Head == "" {
			t.Errorf("detached: Branch = %q, Head = %q; want no branch, a head", s.Branch, s.Head)
		}
		mustGit(t, dir, "checkout", "-q", "-")
		// From a subdirectory, too.
		if s := rtStatus(t, filepath.Join(dir, "sub")); !s.Clean() {
			t.Errorf("WorkStatus(sub) = %+v, want clean", s)
		}
	})

	t.Run("empty repository", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		mustGit(t, dir, "init", "-q")
		if s := rtStatus(t, dir); !s.Clean() || s.Head != "" {
			t.Errorf("WorkStatus = %+v, want clean, no HEAD", s)
		}
		write(t, dir, "new.txt", "n\n")
		if s := rtStatus(t, dir); s.Clean() || !slices.Equal(s.Untracked, []string{"new.txt"}) {
			t.Errorf("WorkStatus = %+v, want new.txt untracked", s)
		}
	})

	t.Run("modified tracked", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, files)
		write(t, dir, "a.txt", "changed\n")
		write(t, dir, "sub/c.txt", "changed\n")
		write(t, dir, "with space.txt", "changed\n")
		if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
			t.Fatal(err)
		}
		s := rtStatus(t, dir)
		want := []string{"a.txt", "b.txt", "sub/c.txt", "with space.txt"}
		if !slices.Equal(rtSorted(s.Changed), want) || len(s.Untracked) != 0 || s.InProgress != "" || s.Clean() {
			t.Errorf("WorkStatus = %+v, want Changed %q", s, want)
		}
		// Paths are relative to the top, from a subdirectory too.
		if s2 := rtStatus(t, filepath.Join(dir, "sub")); !slices.Equal(rtSorted(s2.Changed), want) {
			t.Errorf("WorkStatus(sub) = %+v, want Changed %q", s2, want)
		}
	})

	t.Run("staged", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, files)
		write(t, dir, "a.txt", "staged\n")
		write(t, dir, "new.txt", "new\n")
		mustGit(t, dir, "add", "a.txt", "new.txt")
		mustGit(t, dir, "rm", "-q", "--cached", "b.txt") // staged deletion, b.txt now untracked
		write(t, dir, "a.txt", "staged, then changed again\n")
		s := rtStatus(t, dir)
		if want := []string{"a.txt", "b.txt", "new.txt"}; !slices.Equal(rtSorted(s.Changed), want) {
			t.Errorf("Changed = %q, want %q (each once)", s.Changed, want)
		}
		if want := []string{"b.txt"}; !slices.Equal(s.Untracked, want) {
			t.Errorf("Untracked = %q, want %q", s.Untracked, want)
		}
		if s.Clean() {
			t.Error("Clean() = true")
		}
	})

	t.Run("untracked", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, files)
		write(t, dir, "top.txt", "u\n")
		write(t, dir, "newdir/deeper/one.txt", "u\n")
		write(t, dir, "newdir/deeper/two words.txt", "u\n")
		write(t, dir, "sub/new.txt", "u\n")
		write(t, dir, "newdir/ignored.log", "ignored\n")
		write(t, dir, "build/x", "ignored\n")
		s := rtStatus(t, dir)
		want := []string{"newdir/deeper/one.txt", "newdir/deeper/two words.txt", "sub/new.txt", "top.txt"}
		if !slices.Equal(rtSorted(s.Untracked), want) || len(s.Changed) != 0 || s.Clean() {
			t.Errorf("WorkStatus = %+v, want every untracked file (not directories, not ignored files) %q", s, want)
		}
	})

	t.Run("staged rename", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, files)
		mustGit(t, dir, "mv", "old name.txt", "sub/new name.txt")
		mustGit(t, dir, "mv", "a.txt", "renamed.txt")
		s := rtStatus(t, dir)
		// Renames are not detected: a rename is its deleted and its added
		// path, each once.
		if want := []string{"a.txt", "old name.txt", "renamed.txt", "sub/new name.txt"}; !slices.Equal(rtSorted(s.Changed), want) {
			t.Errorf("Changed = %q, want %q (both paths of a rename, once each)", s.Changed, want)
		}
		if len(s.Untracked) != 0 {
			t.Errorf("Untracked = %q", s.Untracked)
		}
		// A staged rename then modified, plus another change after it.
		write(t, dir, "renamed.txt", "modified after the rename\n")
		write(t, dir, "b.txt", "changed\n")
		s = rtStatus(t, dir)
		if want := []string{"a.txt", "b.txt", "old name.txt", "renamed.txt", "sub/new name.txt"}; !slices.Equal(rtSorted(s.Changed), want) {
			t.Errorf("Changed = %q, want %q", s.Changed, want)
		}
	})

	t.Run("rename in the work tree (intent to add)", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, files)
		if err := os.Rename(filepath.Join(dir, "old name.txt"), filepath.Join(dir, "new name.txt")); err != nil {
			t.Fatal(err)
		}
		mustGit(t, dir, "add", "-N", "new name.txt")
		// git status -z lists this as " R new name.txt\0old name.txt\0".
		s := rtStatus(t, dir)
		want := []string{"new name.txt"}
		got := rtSorted(s.Changed)
		if slices.Equal(got, []string{" name.txt", "new name.txt"}) {
			t.Skipf("BUG: WorkStatus skips the source path of a rename only when the index column is R/C; a work-tree rename (\" R\", after git add -N) makes it parse the source path %q as an entry: Changed = %q, want %q", "old name.txt", s.Changed, want)
		}
		if !slices.Equal(got, want) && !slices.Equal(got, []string{"new name.txt", "old name.txt"}) {
			t.Errorf("Changed = %q, want %q", s.Changed, want)
		}
	})

	t.Run("merge in progress", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, files)
		mustGit(t, dir, "checkout", "-q", "-b", "other")
		rtCommit(t, dir, "other", map[string]string{"a.txt": "other\n"})
		mustGit(t, dir, "checkout", "-q", "main")
		rtCommit(t, dir, "main", map[string]string{"a.txt": "main\n", "b.txt": "main\n"})
		rtGitFails(t, dir, "merge", "-q", "--no-edit", "other")
		s := rtStatus(t, dir)
		if s.InProgress != "merge" || !slices.Equal(s.Changed, []string{"a.txt"}) || s.Clean() {
			t.Errorf("WorkStatus = %+v, want a merge in progress with a.txt changed", s)
		}
		if got, want := s.Describe(), "1 changed file(s) (a.txt), a merge in progress"; got != want {
			t.Errorf("Describe() = %q, want %q", got, want)
		}
		// Resolved and staged, the merge is still in progress.
		write(t, dir, "a.txt", "resolved\n")
		mustGit(t, dir, "add", "a.txt")
		if s := rtStatus(t, dir); s.InProgress != "merge" || s.Clean() {
			t.Errorf("after resolving: %+v, want a merge in progress", s)
		}
		mustGit(t, dir, "commit", "-q", "--no-edit")
		if s := rtStatus(t, dir); !s.Clean() {
			t.Errorf("after committing the merge: %+v, want clean", s)
		}
	})

	// A conflict left by rebase, cherry-pick and revert; and a merge in a
	// linked worktree (its own git dir).
	conflicting := func(t *testing.T) (dir, other string) {
		dir = repo(t, files)
		mustGit(t, dir, "checkout", "-q", "-b", "other")
		other = rtCommit(t, dir, "other", map[string]string{"a.txt": "other\n"})
		mustGit(t, dir, "checkout", "-q", "main")
		rtCommit(t, dir, "main", map[string]string{"a.txt": "main\n"})
		return dir, other
	}
	for _, tc := range []struct {
		op  string
		run func(t *testing.T, dir, other string) string // returns the dir to inspect
	}{
		{"rebase", func(t *testing.T, dir, other string) string {
			mustGit(t, dir, "checkout", "-q", "other")
			rtGitFails(t, dir, "rebase", "main")
			return dir
		}},
		{"rebase", func(t *testing.T, dir, other string) string {
			mustGit(t, dir, "checkout", "-q", "other")
			rtGitFails(t, dir, "rebase", "--apply", "main")
			return dir
		}},
		{"cherry-pick", func(t *testing.T, dir, other string) string {
			rtGitFails(t, dir, "cherry-pick", other)
			return dir
		}},
		{"revert", func(t *testing.T, dir, other string) string {
			c := rtCommit(t, dir, "x", map[string]string{"a.txt": "main x\n"})
			rtCommit(t, dir, "y", map[string]string{"a.txt": "main y\n"})
			rtGitFails(t, dir, "revert", "--no-edit", c)
			return dir
		}},
		{"merge", func(t *testing.T, dir, other string) string {
			wt := filepath.Join(t.TempDir(), "wt")
			mustGit(t, dir, "worktree", "add", "-q", "-b", "wtb", wt, "main")
			rtGitFails(t, wt, "merge", "-q", "--no-edit", other)
			// The main work tree has no merge in progress.
			if s := rtStatus(t, dir); !s.Clean() {
				t.Errorf("main work tree: %+v, want clean", s)
			}
			return wt
		}},
	} {
		t.Run(tc.op+" in progress", func(t *testing.T) {
			t.Parallel()
			dir, other := conflicting(t)
			at := tc.run(t, dir, other)
			s := rtStatus(t, at)
			if s.InProgress != tc.op || s.Clean() {
				t.Errorf("WorkStatus = %+v, want a %s in progress", s, tc.op)
			}
			if !strings.HasSuffix(s.Describe(), "a "+tc.op+" in progress") {
				t.Errorf("Describe() = %q", s.Describe())
			}
		})
	}

	t.Run("not a repository", func(t *testing.T) {
		t.Parallel()
		if s, err := git.WorkStatus(context.Background(), t.TempDir()); err == nil {
			t.Errorf("WorkStatus = %+v, nil; want an error", s)
		}
	})
}

func TestStatusDescribe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s     git.Status
		want  string
		clean bool
	}{
		{git.Status{}, "clean", true},
		{git.Status{Changed: []string{"a"}}, "1 changed file(s) (a)", false},
		{git.Status{Untracked: []string{"x", "y"}}, "2 untracked file(s) (x, y)", false},
		{git.Status{Changed: []string{"a", "b", "c"}}, "3 changed file(s) (a, b, c)", false},
		{git.Status{Changed: []string{"a", "b", "c", "d"}}, "4 changed file(s) (a, b, c, …)", false},
		{git.Status{InProgress: "rebase"}, "a rebase in progress", false},
		{
			git.Status{Changed: []string{"a"}, Untracked: []string{"u1", "u2", "u3", "u4", "u5"}, InProgress: "merge"},
			"1 changed file(s) (a), 5 untracked file(s) (u1, u2, u3, …), a merge in progress",
			false,
		},
	} {
		if got := tc.s.Describe(); got != tc.want {
			t.Errorf("%+v.Describe() = %q, want %q", tc.s, got, tc.want)
		}
		if got := tc.s.Clean(); got != tc.clean {
			t.Errorf("%+v.Clean() = %v, want %v", tc.s, got, tc.clean)
		}
	}

	// From a real work tree.
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, "a.txt", "changed\n")
	write(t, dir, "d/u.txt", "u\n")
	if got, want := rtStatus(t, dir).Describe(), "1 changed file(s) (a.txt), 1 untracked file(s) (d/u.txt)"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

// TestGitDirsOfALinkedWorktree: the directories read from a linked
// worktree's files are the ones git reports.
func TestGitDirsOfALinkedWorktree(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	wt := filepath.Join(t.TempDir(), "wt")
	mustGit(t, dir, "worktree", "add", "-q", "-b", "wtb", wt)
	ctx := context.Background()
	got, err := git.GitDirs(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(mustGit(t, wt, "rev-parse", "--path-format=absolute", "--git-common-dir", "--git-dir"))
	if got.Common != want[0] || got.Own != want[1] {
		t.Errorf("GitDirs = %+v; git says %q", got, want)
	}
	main, err := git.GitDirs(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if main.Common != got.Common || main.Own != got.Common {
		t.Errorf("GitDirs of the main work tree = %+v; want both %s", main, got.Common)
	}
	if _, err := git.GitDirs(ctx, t.TempDir()); !errors.Is(err, git.ErrNotRepo) {
		t.Errorf("GitDirs outside a repository: %v", err)
	}
}
