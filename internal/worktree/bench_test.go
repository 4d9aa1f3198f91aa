package worktree_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// The benchmarks compare Provision with the bare `git worktree add` it is
// built on, in a repository of benchFiles small files in benchDirs
// directories, generated once per process.
const (
	benchFiles = 10_000
	benchDirs  = 100
)

var bench struct {
	once sync.Once
	dir  string // holds the repository and the worktrees; removed by TestMain
	repo string
	err  error
	seq  atomic.Int64 // names branches and tasks uniquely in the process
}

// benchRepo returns the generated repository.
func benchRepo(b *testing.B) string {
	b.Helper()
	bench.once.Do(func() {
		start := time.Now()
		bench.err = func() error {
			dir, err := os.MkdirTemp("", "worktree-bench-")
			if err != nil {
				return err
			}
			if bench.dir, err = filepath.EvalSymlinks(dir); err != nil {
				return err
			}
			repo := filepath.Join(bench.dir, "repo")
			for i := range benchFiles {
				d := filepath.Join(repo, fmt.Sprintf("pkg%02d", i%benchDirs))
				if i < benchDirs {
					if err := os.MkdirAll(d, 0o755); err != nil {
						return err
					}
				}
				content := fmt.Sprintf("package pkg%02d\n\n// File %d.\nconst C%d = %d\n", i%benchDirs, i, i, i)
				if err := os.WriteFile(filepath.Join(d, "f"+strconv.Itoa(i)+".go"), []byte(content), 0o644); err != nil {
					return err
				}
			}
			ctx := context.Background()
			for _, args := range [][]string{
				{"-c", "init.defaultBranch=main", "init", "-q"},
				{"add", "-A"},
				{"commit", "-q", "-m", "10k files"},
			} {
				if _, err := git.Run(ctx, repo, args...); err != nil {
					return err
				}
			}
			bench.repo = repo
			return nil
		}()
		b.Logf("generated %d files in %d directories in %s", benchFiles, benchDirs, time.Since(start).Round(time.Millisecond))
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.repo
}

// benchCleanup removes the generated repository and its worktrees.
func benchCleanup() {
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
}

// benchDrop removes a worktree made by an iteration (untimed), so that the
// disk does not fill and every iteration sees the same repository.
func benchDrop(b *testing.B, repo, path string) {
	b.Helper()
	if err := os.RemoveAll(path); err != nil {
		b.Fatal(err)
	}
	if _, err := git.Run(context.Background(), repo, "worktree", "prune"); err != nil {
		b.Fatal(err)
	}
}

// benchID returns a task ID of the task alphabet, unique for n < 32⁴.
func benchID(n int64) task.ID {
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	id := []byte("t-b0000")
	for i := len(id) - 1; n > 0 && i >= 3; i-- {
		id[i] = alphabet[n%32]
		n /= 32
	}
	return task.ID(id)
}

func BenchmarkRawWorktreeAdd(b *testing.B) {
	repo := benchRepo(b)
	ctx := context.Background()
	root := filepath.Join(bench.dir, "raw")
	b.ResetTimer()
	for range b.N {
		n := bench.seq.Add(1)
		path := filepath.Join(root, "w"+strconv.FormatInt(n, 10))
		if _, err := git.Run(ctx, repo, "worktree", "add", "-q", "-b", "b"+strconv.FormatInt(n, 10), path, "main"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		benchDrop(b, repo, path)
		b.StartTimer()
	}
	b.StopTimer()
	// After the loop: ResetTimer drops metrics reported before it.
	b.ReportMetric(benchFiles, "files")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchFiles, "ns/file")
}

func BenchmarkProvision(b *testing.B) {
	repo := benchRepo(b)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m := worktree.New(worktree.Options{Store: st, Config: worktree.Config{PortEnv: "PORT"}})
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		// IDs of the task alphabet, unique in the process.
		id := benchID(bench.seq.Add(1))
		tk, err := task.New(id, task.Spec{Description: "bench", Priority: 2, Repo: repo}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.CreateTask(ctx, tk); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		w, err := m.Provision(ctx, tk)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		benchDrop(b, repo, w.Path)
		b.StartTimer()
	}
	b.StopTimer()
	// After the loop: ResetTimer drops metrics reported before it.
	b.ReportMetric(benchFiles, "files")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchFiles, "ns/file")
}
