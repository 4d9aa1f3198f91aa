package git_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// A commit through the runner in a repository due for its automatic
// maintenance (more packs than gc.autoPackLimit allows) does not start it:
// the packs are left as they were. The user's own git still does (checked
// too, so the test shows the repository really was due).
func TestNoAutomaticGCFromOurCommands(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	mustGit(t, dir, "config", "gc.autoPackLimit", "1")
	mustGit(t, dir, "config", "gc.autoDetach", "false")
	packs := func() int {
		t.Helper()
		m, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
		if err != nil {
			t.Fatal(err)
		}
		return len(m)
	}
	for i, f := range []string{"b.txt", "c.txt"} {
		write(t, dir, f, f+"\n")
		mustGit(t, dir, "add", f)
		mustGit(t, dir, "commit", "-q", "-m", f)
		mustGit(t, dir, "repack", "-q")
		if n := packs(); n != i+1 {
			t.Fatalf("after repack %d: %d packs", i+1, n)
		}
	}
	write(t, dir, "d.txt", "d\n")
	mustGit(t, dir, "add", "d.txt")
	mustGit(t, dir, "commit", "-q", "-m", "d")
	if n := packs(); n != 2 {
		t.Fatalf("our commit started the automatic gc: %d packs, want the 2 there were", n)
	}
	write(t, dir, "e.txt", "e\n")
	user := exec.Command("git", "-C", dir, "commit", "-q", "-a", "--allow-empty", "-m", "the user's")
	if out, err := user.CombinedOutput(); err != nil {
		t.Fatalf("the user's commit: %v: %s", err, out)
	}
	if n := packs(); n != 1 {
		t.Fatalf("the user's commit left %d packs: the repository was not due for its maintenance, so the first check showed nothing", n)
	}
}
