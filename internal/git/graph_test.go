package git_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/neuraphage/neuraphage-go/internal/git"
)

// The helpers of this file are prefixed "gt" so that they do not collide
// with helpers of other test files of the package.

func gtLoad(t *testing.T, dir string, heads ...string) *git.Graph {
	t.Helper()
	g, err := git.LoadGraph(context.Background(), dir, heads)
	if err != nil {
		t.Fatalf("LoadGraph(%q): %v", heads, err)
	}
	return g
}

// gtRevList returns the commits of git rev-list args, newest first.
func gtRevList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	return strings.Fields(mustGit(t, dir, append([]string{"rev-list", "--topo-order"}, args...)...))
}

// gtFiles returns the sorted files changed by the non-merge commits of
// git log args, as git reports them.
func gtFiles(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	out := mustGit(t, dir, append([]string{"log", "-z", "--no-renames", "--name-only", "--format="}, args...)...)
	var files []string
	for f := range strings.FieldsFuncSeq(out, func(r rune) bool { return r == 0 || r == '\n' }) {
		if !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	return files
}

// gtCompare compares branch with main in g and cross-checks the result
// with git: the counts with rev-list --count, the commits with rev-list,
// the files with log, and the order (every commit before its parents).
func gtCompare(t *testing.T, dir string, g *git.Graph, main, branch string) git.Divergence {
	t.Helper()
	d := g.Compare(main, branch)
	for _, c := range []struct {
		name, from, to string
		got, files     []string
	}{
		{"Behind", branch, main, d.Behind, d.MainFiles},
		{"Ahead", main, branch, d.Ahead, d.BranchFiles},
	} {
		n, err := strconv.Atoi(strings.TrimSpace(mustGit(t, dir, "rev-list", "--count", c.from+".."+c.to)))
		if err != nil {
			t.Fatal(err)
		}
		if len(c.got) != n {
			t.Errorf("Compare(%.7s, %.7s): %d commits %s, git rev-list --count %.7s..%.7s says %d",
				main, branch, len(c.got), c.name, c.from, c.to, n)
		}
		want := gtRevList(t, dir, c.to, "^"+c.from)
		if !cmp.Equal(slices.Sorted(slices.Values(c.got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("Compare(%.7s, %.7s).%s = %.7s, git rev-list says %.7s", main, branch, c.name, c.got, want)
		}
		if diff := cmp.Diff(gtFiles(t, dir, c.to, "^"+c.from), c.files); diff != "" {
			t.Errorf("Compare(%.7s, %.7s): files of %s (-git log +got):\n%s", main, branch, c.name, diff)
		}
		// Newest first: no commit comes after one of its parents.
		for i, id := range c.got {
			for _, p := range g.Commits[id].Parents {
				if j := slices.Index(c.got, p); j >= 0 && j < i {
					t.Errorf("%s: %.7s comes after its parent %.7s", c.name, id, p)
				}
			}
		}
	}
	return d
}

func TestLoadGraphLinear(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"base.txt": "base\n"})
	c0 := rtHead(t, dir)
	m1 := rtCommit(t, dir, "m1", map[string]string{"a.txt": "1\n"})
	m2 := rtCommit(t, dir, "m2", map[string]string{"b.txt": "2\n"})
	m3 := rtCommit(t, dir, "m3", map[string]string{"a.txt": "3\n", "c.txt": "3\n"})

	g := gtLoad(t, dir, m3, c0, m1)
	if g.Base != c0 {
		t.Errorf("Base = %.7s, want %.7s", g.Base, c0)
	}
	if diff := cmp.Diff([]string{m3, m2, m1}, g.Order); diff != "" {
		t.Errorf("Order (-want +got):\n%s", diff)
	}
	if _, ok := g.Commits[c0]; ok {
		t.Errorf("the base %.7s is in the graph", c0)
	}
	if c := g.Commits[m2]; c == nil || c.Subject != "m2" || !slices.Equal(c.Parents, []string{m1}) || !slices.Equal(c.Files, []string{"b.txt"}) {
		t.Errorf("Commits[m2] = %+v", c)
	}
	tests := []struct {
		name         string
		main, branch string
		want         git.Divergence
	}{
		{"branch at the base", m3, c0, git.Divergence{Behind: []string{m3, m2, m1}, MainFiles: []string{"a.txt", "b.txt", "c.txt"}}},
		{"branch half way", m3, m1, git.Divergence{Behind: []string{m3, m2}, MainFiles: []string{"a.txt", "b.txt", "c.txt"}}},
		{"main behind the branch", m1, m3, git.Divergence{Ahead: []string{m3, m2}, BranchFiles: []string{"a.txt", "b.txt", "c.txt"}}},
		{"same commit", m3, m3, git.Divergence{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, gtCompare(t, dir, g, tt.main, tt.branch)); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadGraphBranchWithOwnCommits(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"shared.txt": "base\n"})
	mustGit(t, dir, "branch", "other")
	m1 := rtCommit(t, dir, "m1", map[string]string{"main1.txt": "1\n"})
	mustGit(t, dir, "switch", "-q", "-c", "task")
	t1 := rtCommit(t, dir, "t1", map[string]string{"task.txt": "1\n"})
	t2 := rtCommit(t, dir, "t2", map[string]string{"task.txt": "2\n", "shared.txt": "task\n"})
	mustGit(t, dir, "switch", "-q", "other")
	o1 := rtCommit(t, dir, "o1", map[string]string{"other.txt": "1\n"})
	mustGit(t, dir, "switch", "-q", "main")
	m2 := rtCommit(t, dir, "m2", map[string]string{"main2.txt": "2\n"})
	m3 := rtCommit(t, dir, "m3", map[string]string{"shared.txt": "main\n"})

	g := gtLoad(t, dir, m3, t2, o1)
	tests := []struct {
		name         string
		main, branch string
		want         git.Divergence
	}{
		{"forked after m1", m3, t2, git.Divergence{
			Behind: []string{m3, m2}, Ahead: []string{t2, t1},
			MainFiles: []string{"main2.txt", "shared.txt"}, BranchFiles: []string{"shared.txt", "task.txt"},
		}},
		{"forked at the base", m3, o1, git.Divergence{
			Behind: []string{m3, m2, m1}, Ahead: []string{o1},
			MainFiles: []string{"main1.txt", "main2.txt", "shared.txt"}, BranchFiles: []string{"other.txt"},
		}},
		{"two branches", t2, o1, git.Divergence{
			Behind: []string{t2, t1, m1}, Ahead: []string{o1},
			MainFiles: []string{"main1.txt", "shared.txt", "task.txt"}, BranchFiles: []string{"other.txt"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, gtCompare(t, dir, g, tt.main, tt.branch)); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
		})
	}
	if c := g.Commits[t2]; c == nil || c.Subject != "t2" || !slices.Equal(c.Files, []string{"shared.txt", "task.txt"}) {
		t.Errorf("Commits[t2] = %+v", c)
	}
}

func TestLoadGraphMerges(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"base.txt": "base\n"})
	m1 := rtCommit(t, dir, "m1", map[string]string{"m1.txt": "1\n"})
	mustGit(t, dir, "branch", "task", m1)
	mustGit(t, dir, "branch", "task2", m1)
	mustGit(t, dir, "switch", "-q", "-c", "side")
	s1 := rtCommit(t, dir, "s1", map[string]string{"s1.txt": "1\n"})
	s2 := rtCommit(t, dir, "s2", map[string]string{"s2.txt": "2\n"})
	mustGit(t, dir, "switch", "-q", "main")
	m2 := rtCommit(t, dir, "m2", map[string]string{"m2.txt": "2\n"})
	mustGit(t, dir, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	merge := rtHead(t, dir)
	mustGit(t, dir, "switch", "-q", "task")
	t1 := rtCommit(t, dir, "t1", map[string]string{"t1.txt": "1\n"})
	// task2 merged main after the side branch landed.
	mustGit(t, dir, "switch", "-q", "task2")
	u1 := rtCommit(t, dir, "u1", map[string]string{"u1.txt": "1\n"})
	mustGit(t, dir, "merge", "-q", "--no-ff", "-m", "merge main", "main")
	u2 := rtHead(t, dir)
	mustGit(t, dir, "switch", "-q", "main")
	m3 := rtCommit(t, dir, "m3", map[string]string{"m3.txt": "3\n"})

	g := gtLoad(t, dir, m3, t1, u2)
	for _, id := range []string{merge, u2} {
		c := g.Commits[id]
		if c == nil || len(c.Parents) != 2 || len(c.Files) != 0 {
			t.Errorf("merge commit %.7s: %+v, want two parents and no files", id, c)
		}
	}
	if p := g.Commits[merge].Parents; !slices.Equal(p, []string{m2, s2}) {
		t.Errorf("merge parents %.7s, want %.7s", p, []string{m2, s2})
	}

	d := gtCompare(t, dir, g, m3, t1)
	// The side branch's commits came in through the merge's second
	// parent: the task lacks them too.
	if !slices.Equal(d.Ahead, []string{t1}) || len(d.Behind) != 5 || d.Behind[0] != m3 || d.Behind[1] != merge {
		t.Errorf("Compare(main, task) = %+v, want Behind m3, merge and {m2, s1, s2}, Ahead t1", d)
	}
	for _, id := range []string{m2, s1, s2} {
		if !slices.Contains(d.Behind, id) {
			t.Errorf("Behind lacks %.7s", id)
		}
	}
	if want := []string{"m2.txt", "m3.txt", "s1.txt", "s2.txt"}; !slices.Equal(d.MainFiles, want) {
		t.Errorf("MainFiles = %q, want %q", d.MainFiles, want)
	}

	// A branch that merged main is behind only what main did since.
	want := git.Divergence{
		Behind: []string{m3}, Ahead: []string{u2, u1},
		MainFiles: []string{"m3.txt"}, BranchFiles: []string{"u1.txt"},
	}
	if diff := cmp.Diff(want, gtCompare(t, dir, g, m3, u2)); diff != "" {
		t.Errorf("Compare(main, task2) (-want +got):\n%s", diff)
	}
	gtCompare(t, dir, g, t1, u2)
}

func TestLoadGraphUnrelatedHistories(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"base.txt": "base\n"})
	c0 := rtHead(t, dir)
	m1 := rtCommit(t, dir, "m1", map[string]string{"m1.txt": "1\n"})
	mustGit(t, dir, "switch", "-q", "--orphan", "orphan")
	o1 := rtCommit(t, dir, "o1", map[string]string{"o1.txt": "1\n"})
	o2 := rtCommit(t, dir, "o2", map[string]string{"o2.txt": "2\n"})
	mustGit(t, dir, "switch", "-q", "main")

	g := gtLoad(t, dir, m1, o2)
	if g.Base != "" {
		t.Errorf("Base = %.7s, want none", g.Base)
	}
	if len(g.Commits) != 4 || len(g.Order) != 4 {
		t.Errorf("graph of %d commits (order %d), want all 4", len(g.Commits), len(g.Order))
	}
	want := git.Divergence{
		Behind: []string{m1, c0}, Ahead: []string{o2, o1},
		MainFiles: []string{"base.txt", "m1.txt"}, BranchFiles: []string{"o1.txt", "o2.txt"},
	}
	if diff := cmp.Diff(want, gtCompare(t, dir, g, m1, o2)); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
}

func TestLoadGraphSingleHead(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"base.txt": "base\n"})
	rtCommit(t, dir, "m1", map[string]string{"m1.txt": "1\n"})
	m2 := rtCommit(t, dir, "m2", map[string]string{"m2.txt": "2\n"})
	for name, heads := range map[string][]string{"one": {m2}, "twice the same": {m2, m2}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := gtLoad(t, dir, heads...)
			if diff := cmp.Diff(gtRevList(t, dir, m2), g.Order); diff != "" {
				t.Errorf("Order (-rev-list +got):\n%s", diff)
			}
			if g.Base != "" {
				t.Errorf("Base = %.7s, want none", g.Base)
			}
			if diff := cmp.Diff(git.Divergence{}, gtCompare(t, dir, g, m2, m2)); diff != "" {
				t.Errorf("Compare with itself (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		g := gtLoad(t, dir)
		if len(g.Order) != 0 || len(g.Commits) != 0 || g.Commits == nil {
			t.Errorf("LoadGraph of no heads = %+v, want an empty graph", g)
		}
	})
}

func TestLoadGraphOddFileNames(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"base.txt": "base\n"})
	mustGit(t, dir, "branch", "task")
	mainFiles := []string{
		"dir with space/file name.txt",
		"héllo/naïve ü.txt",
		"tab\there.txt",
		`quote"d.txt`,
		`back\slash.txt`,
		"naïve\ttab.txt",
	}
	files := map[string]string{}
	for _, f := range mainFiles {
		files[f] = f + "\n"
	}
	m1 := rtCommit(t, dir, "odd names", files)
	mustGit(t, dir, "switch", "-q", "task")
	t1 := rtCommit(t, dir, "日本語", map[string]string{"日本語/ファイル.txt": "x\n", " leading space.txt": "y\n"})
	mustGit(t, dir, "switch", "-q", "main")

	g := gtLoad(t, dir, m1, t1)
	want := git.Divergence{
		Behind: []string{m1}, Ahead: []string{t1},
		MainFiles: slices.Sorted(slices.Values(mainFiles)), BranchFiles: []string{" leading space.txt", "日本語/ファイル.txt"},
	}
	if diff := cmp.Diff(want, gtCompare(t, dir, g, m1, t1)); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	if s := g.Commits[t1].Subject; s != "日本語" {
		t.Errorf("subject %q", s)
	}
}

// The root commit's files do not depend on the user's log.showRoot.
func TestLoadGraphRootFilesWithShowRootOff(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"base.txt": "base\n"})
	c0 := rtHead(t, dir)
	mustGit(t, dir, "config", "log.showRoot", "false")
	g := gtLoad(t, dir, c0)
	if c := g.Commits[c0]; c == nil || !slices.Equal(c.Files, []string{"base.txt"}) {
		t.Errorf("root commit %+v, want the files it created", c)
	}
}

func TestRefTips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := repo(t, map[string]string{"base.txt": "base\n"})
	c0 := rtHead(t, dir)
	c1 := rtCommit(t, dir, "c1", nil)
	mustGit(t, dir, "branch", "neuraphage/a", c0)
	mustGit(t, dir, "branch", "neuraphage/sub/c", c1)
	mustGit(t, dir, "branch", "neuraphage-x", c1)
	mustGit(t, dir, "branch", "other", c1)
	mustGit(t, dir, "tag", "neuraphage/t", c1)
	mustGit(t, dir, "update-ref", "refs/neuraphage/archive/z", c1)
	mustGit(t, dir, "pack-refs", "--all")
	mustGit(t, dir, "branch", "neuraphage/b", c1) // loose, next to packed ones
	wt := filepath.Join(t.TempDir(), "wt")
	mustGit(t, dir, "worktree", "add", "-q", wt, "neuraphage/a")

	want := map[string]string{
		"refs/heads/neuraphage/a":     c0,
		"refs/heads/neuraphage/b":     c1,
		"refs/heads/neuraphage/sub/c": c1,
	}
	for name, d := range map[string]string{"main checkout": dir, "linked worktree": wt} {
		tips, err := git.RefTips(ctx, d, "refs/heads/neuraphage/")
		if err != nil {
			t.Fatalf("%s: RefTips: %v", name, err)
		}
		if diff := cmp.Diff(want, tips); diff != "" {
			t.Errorf("%s: RefTips (-want +got):\n%s", name, diff)
		}
	}
	if tips, err := git.RefTips(ctx, dir, "refs/heads/nothing/"); err != nil || tips == nil || len(tips) != 0 {
		t.Errorf("RefTips of no refs = %v, %v; want an empty map", tips, err)
	}
	if tips, err := git.RefTips(ctx, t.TempDir(), "refs/heads/"); err == nil {
		t.Errorf("RefTips outside a repository = %v, want an error", tips)
	}
}

func TestTipsAndAheadBehind(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	base := rtHead(t, dir)
	mustGit(t, dir, "checkout", "-q", "-b", "side")
	c1 := rtCommit(t, dir, "one", nil)
	c2 := rtCommit(t, dir, "two", nil)
	mustGit(t, dir, "checkout", "-q", "main")
	m1 := rtCommit(t, dir, "on main", nil)
	ctx := context.Background()
	tips, err := git.Tips(ctx, dir, "refs/heads/side", "refs/heads/gone", "refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tips, []string{c2, "", m1}) {
		t.Errorf("Tips = %q; want %q", tips, []string{c2, "", m1})
	}
	ahead, behind, err := git.AheadBehind(ctx, dir, "refs/heads/main", "refs/heads/side")
	if err != nil || ahead != 2 || behind != 1 {
		t.Errorf("AheadBehind(main, side) = %d, %d, %v; want 2, 1", ahead, behind, err)
	}
	if ahead, behind, err := git.AheadBehind(ctx, dir, base, c1); err != nil || ahead != 1 || behind != 0 {
		t.Errorf("AheadBehind(base, c1) = %d, %d, %v; want 1, 0", ahead, behind, err)
	}
}
