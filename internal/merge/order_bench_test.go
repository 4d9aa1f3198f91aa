package merge

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/store"
)

// orderRig is a repository with n branches off main, each changing a file
// of its own, and their ready entries.
func orderRig(b *testing.B, n int) (string, []store.MergeEntry) {
	repo := b.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	run("add", ".")
	run("commit", "-q", "-m", "base")
	var es []store.MergeEntry
	for i := range n {
		br := fmt.Sprintf("neuraphage/t-%05d/work", i)
		run("checkout", "-q", "-b", br, "main")
		if err := os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%d.txt", i)), []byte("change\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		run("add", ".")
		run("commit", "-q", "-m", "work")
		es = append(es, store.MergeEntry{ID: int64(i + 1), Branch: br, Target: "main"})
	}
	run("checkout", "-q", "main")
	return repo, es
}

// BenchmarkOrder64 is what ordering costs a round of the queue with 64
// ready entries: warm, every branch's change read already (one git
// for-each-ref); cold, each read anew (one git diff --numstat each, what a
// new branch tip costs once).
func BenchmarkOrder64(b *testing.B) {
	repo, es := orderRig(b, 64)
	for _, cold := range []bool{false, true} {
		b.Run(map[bool]string{false: "warm", true: "cold"}[cold], func(b *testing.B) {
			q := New(Options{})
			q.order(context.Background(), repo, "main", es)
			for b.Loop() {
				if cold {
					clear(q.changes)
				}
				if out := q.order(context.Background(), repo, "main", es); len(out) != len(es) {
					b.Fatal(len(out))
				}
			}
		})
	}
}
