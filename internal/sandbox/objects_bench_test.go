package sandbox_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

// looseObjects writes n distinct blobs of about size bytes as loose objects
// in the object directory dir.
func looseObjects(b *testing.B, dir string, n, size int) {
	b.Helper()
	body := bytes.Repeat([]byte("x"), size)
	for i := range n {
		payload := fmt.Appendf(nil, "%s %d %s", dir, i, body) // distinct in each directory
		content := append(fmt.Appendf(nil, "blob %d\x00", len(payload)), payload...)
		sum := sha1.Sum(content)
		name := hex.EncodeToString(sum[:])
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write(content)
		w.Close()
		p := filepath.Join(dir, name[:2], name[2:])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, z.Bytes(), 0o444); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMigrateObject measures moving one loose object of a task's
// object directory into the shared store (checked against its name, hard
// linked, synced, its directory synced): b.N objects of 1 KiB and of
// 64 KiB, on the file system of the test's temporary directory, and copied
// across file systems (/dev/shm to it) where a link cannot be made.
func BenchmarkMigrateObject(b *testing.B) {
	for _, tc := range []struct {
		name   string
		size   int
		from   string
		synced bool // the task's objects on disk already (git does not sync loose objects by default)
	}{
		{"link-1KiB", 1 << 10, "", false},
		{"link-1KiB-synced", 1 << 10, "", true},
		{"link-64KiB", 64 << 10, "", false},
		{"copy-1KiB", 1 << 10, "/dev/shm", false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			root := b.TempDir()
			from := filepath.Join(root, "task")
			if tc.from != "" {
				if _, err := os.Stat(tc.from); err != nil {
					b.Skipf("%s: %v", tc.from, err)
				}
				d, err := os.MkdirTemp(tc.from, "task")
				if err != nil {
					b.Skip(err)
				}
				b.Cleanup(func() { os.RemoveAll(d) })
				from = d
			}
			to := filepath.Join(root, "objects")
			looseObjects(b, from, b.N, tc.size)
			if tc.synced {
				syscall.Sync()
			}
			b.ResetTimer()
			m, err := sandbox.MigrateObjects(from, to)
			b.StopTimer()
			if err != nil || m.Objects != b.N {
				b.Fatalf("moved %+v of %d: %v", m, b.N, err)
			}
		})
	}
}

// BenchmarkGitWithAlternates measures git commands in a checkout whose
// shared store lists 0, 200 and 1000 task object directories (each with a
// few loose objects), as with that many tasks' commands running at once
// (and as with that many live tasks before idle ones were unlisted).
func BenchmarkGitWithAlternates(b *testing.B) {
	root := b.TempDir()
	repo := filepath.Join(root, "repo")
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + root, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=B", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=B", "GIT_COMMITTER_EMAIL=b@example.com"}
	run := func(b *testing.B, args ...string) {
		b.Helper()
		res, err := proc.Run(context.Background(), proc.Cmd{Dir: repo, Args: append([]string{"git"}, args...), Env: env})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("git %v: %v %s", args, err, res.Output)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	run(b, "init", "-q", "-b", "main")
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat("line\n", i+1)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run(b, "add", ".")
	run(b, "commit", "-q", "-m", "first")
	run(b, "gc", "-q")
	common := filepath.Join(repo, ".git")
	made := 0
	// The first task's directory is provided and listed as the daemon
	// does for a running command; the others are made alike, their lines
	// written at once.
	alt := filepath.Join(common, "objects", "info", "alternates")
	for _, n := range []int{0, 200, 1000} {
		var lines strings.Builder
		for ; made < n; made++ {
			id := fmt.Sprintf("t-%04d", made)
			dir := sandbox.ObjectDir(common, id)
			if made == 0 {
				if _, err := sandbox.ProvideObjects(common, id); err != nil {
					b.Fatal(err)
				}
				if err := sandbox.BeginObjects(dir); err != nil {
					b.Fatal(err)
				}
			} else {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				lines.WriteString("../neuraphage/objects/" + id + "\n")
			}
			looseObjects(b, dir, 3, 100)
		}
		f, err := os.OpenFile(alt, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		f.WriteString(lines.String())
		f.Close()
		if have, _ := os.ReadFile(alt); strings.Count(string(have), "\n") != n {
			b.Fatalf("alternates hold %d lines, want %d", strings.Count(string(have), "\n"), n)
		}
		for _, cmd := range [][]string{
			{"rev-parse", "HEAD"},
			{"status", "--porcelain"},
			{"log", "--format=%H", "-1"},
			{"commit", "-q", "--allow-empty", "-m", "c"},
			{"cat-file", "-e", "0000000000000000000000000000000000000001"}, // missing: every store is looked in
		} {
			b.Run(fmt.Sprintf("tasks=%d/%s", n, cmd[0]), func(b *testing.B) {
				for b.Loop() {
					res, err := proc.Run(context.Background(), proc.Cmd{Dir: repo, Args: append([]string{"git"}, cmd...), Env: env})
					if err != nil || (res.ExitCode != 0) != (cmd[0] == "cat-file") {
						b.Fatalf("git %v: %v %d %s", cmd, err, res.ExitCode, res.Output)
					}
				}
			})
		}
	}
}

// BenchmarkProvideObjects measures making one task's object directory and
// listing it in the shared alternates (rewritten whole and synced under the
// lock), the alternates growing by one line per op, and releasing it again.
func BenchmarkProvideObjects(b *testing.B) {
	common := filepath.Join(b.TempDir(), ".git")
	if err := os.MkdirAll(filepath.Join(common, "objects"), 0o755); err != nil {
		b.Fatal(err)
	}
	i := 0
	b.Run("provide", func(b *testing.B) {
		for b.Loop() {
			if _, err := sandbox.ProvideObjects(common, fmt.Sprintf("t-%06d", i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("release", func(b *testing.B) {
		for b.Loop() {
			i--
			if i < 0 {
				b.Skip("nothing left to release")
			}
			if _, err := sandbox.ReleaseObjects(common, fmt.Sprintf("t-%06d", i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkProvideObjectsParallel: provisions running at once (as the
// daemon's parallel provisioning runs them) share each rewrite of the
// alternates.
func BenchmarkProvideObjectsParallel(b *testing.B) {
	common := filepath.Join(b.TempDir(), ".git")
	if err := os.MkdirAll(filepath.Join(common, "objects"), 0o755); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := sandbox.ProvideObjects(common, fmt.Sprintf("t-%06d", n.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// fanOut makes the 256 loose-object directories of the object directory
// dir, as each launch of a task's command does.
func fanOut(b *testing.B, dir string) {
	b.Helper()
	for i := range 256 {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("%02x", i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGitIdleTasks measures git commands in a checkout with 0, 200
// and 1000 idle live tasks: each has its object directory and has run a
// command that wrote objects (listed while it ran, its objects moved into
// the shared store at its end). Compare BenchmarkGitWithAlternates, where
// every task stays listed.
func BenchmarkGitIdleTasks(b *testing.B) {
	root := b.TempDir()
	repo := filepath.Join(root, "repo")
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + root, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=B", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=B", "GIT_COMMITTER_EMAIL=b@example.com"}
	run := func(b *testing.B, args ...string) {
		b.Helper()
		res, err := proc.Run(context.Background(), proc.Cmd{Dir: repo, Args: append([]string{"git"}, args...), Env: env})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("git %v: %v %s", args, err, res.Output)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	run(b, "init", "-q", "-b", "main")
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat("line\n", i+1)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run(b, "add", ".")
	run(b, "commit", "-q", "-m", "first")
	run(b, "gc", "-q")
	common := filepath.Join(repo, ".git")
	made := 0
	for _, n := range []int{0, 200, 1000} {
		for ; made < n; made++ {
			dir, err := sandbox.ProvideObjects(common, fmt.Sprintf("t-%04d", made))
			if err != nil {
				b.Fatal(err)
			}
			fanOut(b, dir)
			if err := sandbox.BeginObjects(dir); err != nil {
				b.Fatal(err)
			}
			looseObjects(b, dir, 3, 100)
			if _, err := sandbox.EndObjects(dir); err != nil {
				b.Fatal(err)
			}
		}
		if have, _ := os.ReadFile(filepath.Join(common, "objects", "info", "alternates")); len(bytes.TrimSpace(have)) > 0 {
			b.Fatalf("idle tasks are listed: %q", have)
		}
		for _, cmd := range [][]string{
			{"status", "--porcelain"},
			{"log", "--format=%H", "-1"},
			{"cat-file", "-e", "0000000000000000000000000000000000000001"},
		} {
			b.Run(fmt.Sprintf("tasks=%d/%s", n, cmd[0]), func(b *testing.B) {
				for b.Loop() {
					res, err := proc.Run(context.Background(), proc.Cmd{Dir: repo, Args: append([]string{"git"}, cmd...), Env: env})
					if err != nil || (res.ExitCode != 0) != (cmd[0] == "cat-file") {
						b.Fatalf("git %v: %v %d %s", cmd, err, res.ExitCode, res.Output)
					}
				}
			})
		}
	}
}

// BenchmarkCommandObjects measures what a task's command adds for its
// objects, start and end (BeginObjects, EndObjects): listing its directory
// (an unsynced rewrite of the alternates), then moving its new objects
// into the shared store and unlisting it. "none" is a command that wrote
// no object (256 empty loose directories read, nothing synced); "commit"
// one that committed one file (three objects: copied, checked, one
// syncfs); "settle" the empty directory's reading alone (a turn's end).
func BenchmarkCommandObjects(b *testing.B) {
	for _, tc := range []struct {
		name    string
		objects int
	}{{"settle", 0}, {"none", 0}, {"commit", 3}} {
		b.Run(tc.name, func(b *testing.B) {
			common := filepath.Join(b.TempDir(), ".git")
			if err := os.MkdirAll(filepath.Join(common, "objects"), 0o755); err != nil {
				b.Fatal(err)
			}
			dir, err := sandbox.ProvideObjects(common, "t-1")
			if err != nil {
				b.Fatal(err)
			}
			fanOut(b, dir)
			// A task's directories were made at its first command, not a
			// second ago: what SettleObjects trusts unread.
			time.Sleep(1100 * time.Millisecond)
			if _, err := sandbox.SettleObjects(dir); err != nil {
				b.Fatal(err)
			}
			stage := filepath.Join(filepath.Dir(common), "stage")
			i := 0
			for b.Loop() {
				if tc.name == "settle" {
					if _, err := sandbox.SettleObjects(dir); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if err := sandbox.BeginObjects(dir); err != nil {
					b.Fatal(err)
				}
				if tc.objects > 0 {
					b.StopTimer()
					looseObjects(b, filepath.Join(stage, fmt.Sprint(i)), tc.objects, 200)
					// Distinct objects each op, moved in place.
					moveInto(b, filepath.Join(stage, fmt.Sprint(i)), dir)
					i++
					b.StartTimer()
				}
				if _, err := sandbox.EndObjects(dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// moveInto renames the loose objects of the directory from into the object
// directory to, and removes from.
func moveInto(b *testing.B, from, to string) {
	b.Helper()
	files, _ := filepath.Glob(filepath.Join(from, "??", "*"))
	for _, f := range files {
		rel, _ := filepath.Rel(from, f)
		if err := os.Rename(f, filepath.Join(to, rel)); err != nil {
			b.Fatal(err)
		}
	}
	os.RemoveAll(from)
}
