package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A shell command that rewrites a file with the bytes it holds is seen as a
// change by git status (a new mtime), and its sum says it is the same
// content; other content gets another sum, and a return to the first
// content its sum again.
func TestSumChangesOfShellRewrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gitIn(t, dir, "-c", "init.defaultBranch=main", "init", "-q")
	writeTestFile(t, dir, "gen.go", "package gen\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "initial")
	env := &Env{Dir: dir}
	sums := func(cmd string) []string {
		t.Helper()
		res := call(t, bashTool{}, env, map[string]any{"command": cmd})
		wantResult(t, res, false, "[exit code 0]")
		if len(res.Changed) != 1 || res.Changed[0].Path != "gen.go" {
			t.Fatalf("%s: Changed = %+v, want gen.go", cmd, res.Changed)
		}
		return SumChanges(dir, res.Changed)
	}
	a := sums("printf 'package gen\\n\\nvar A = 1\\n' > gen.go")
	again := sums("sleep 0.01; printf 'package gen\\n\\nvar A = 1\\n' > gen.go.tmp && mv gen.go.tmp gen.go")
	b := sums("printf 'package gen\\n\\nvar A = 2\\n' > gen.go")
	back := sums("printf 'package gen\\n\\nvar A = 1\\n' > gen.go")
	if a[0] == "" || !strings.HasPrefix(a[0], "23:") {
		t.Fatalf("sum = %q, want the size (23) and a hash", a[0])
	}
	if again[0] != a[0] || back[0] != a[0] || b[0] == a[0] {
		t.Errorf("sums: first %q, same bytes rewritten %q, other content %q, back %q", a[0], again[0], b[0], back[0])
	}
}

// Only regular files of at most MaxSumSize inside dir are summed, at most
// MaxSummed of them; a deleted file has no sum.
func TestSumChangesLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTestFile(t, dir, "small.txt", "x")
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, MaxSumSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink(t, "small.txt", filepath.Join(dir, "link.txt"))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	cs := []Change{{Path: "small.txt", Op: Modified}, {Path: "big.bin", Op: Created}, {Path: "link.txt", Op: Created},
		{Path: "sub", Op: Created}, {Path: "gone.txt", Op: Deleted}, {Path: "../small.txt", Op: Modified}}
	got := SumChanges(dir, cs)
	if len(got) != len(cs) || got[0] == "" {
		t.Fatalf("sums = %q", got)
	}
	for i, s := range got[1:] {
		if s != "" {
			t.Errorf("%s: sum %q, want none", cs[i+1].Path, s)
		}
	}
	many := make([]Change, MaxSummed+3)
	for i := range many {
		many[i] = Change{Path: "small.txt", Op: Modified}
	}
	got = SumChanges(dir, many)
	if got[MaxSummed-1] == "" || got[MaxSummed] != "" {
		t.Errorf("sums past the %dth: %q, %q", MaxSummed, got[MaxSummed-1], got[MaxSummed])
	}
}
