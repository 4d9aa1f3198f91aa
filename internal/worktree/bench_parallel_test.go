package worktree_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// BenchmarkProvisionMany provisions 32 tasks of a repository of 200 small
// files at once, with worktree.parallel 1 (one worktree made at a time) and
// 8, and reports the time per task and the git processes per task
// (git.Started: the count is the process's, so run it alone).
func BenchmarkProvisionMany(b *testing.B) {
	const tasks, files = 32, 200
	for _, parallel := range []int{1, 8} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) {
			ctx := context.Background()
			var procs int64
			for range b.N {
				b.StopTimer()
				dir := b.TempDir()
				repo := filepath.Join(dir, "repo")
				for i := range files {
					p := filepath.Join(repo, fmt.Sprintf("d%d", i%10), fmt.Sprintf("f%d.txt", i))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(p+"\n"), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				for _, args := range [][]string{{"-c", "init.defaultBranch=main", "init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "files"}} {
					if _, err := git.Run(ctx, repo, args...); err != nil {
						b.Fatal(err)
					}
				}
				st, err := sqlite.Open(ctx, filepath.Join(dir, "db"), sqlite.Options{})
				if err != nil {
					b.Fatal(err)
				}
				m := worktree.New(worktree.Options{Store: st, Config: worktree.Config{Parallel: parallel}})
				tks := make([]task.Task, tasks)
				for i := range tks {
					if tks[i], err = task.New(benchID(bench.seq.Add(1)), task.Spec{Description: "bench", Priority: 2, Repo: repo}, time.Now()); err != nil {
						b.Fatal(err)
					}
					if _, err := st.CreateTask(ctx, tks[i]); err != nil {
						b.Fatal(err)
					}
				}
				// The repository's facts, asked once, are not the tasks'.
				if _, _, err := m.Target(ctx, repo); err != nil {
					b.Fatal(err)
				}
				before := git.Started()
				b.StartTimer()
				var wg sync.WaitGroup
				for _, tk := range tks {
					wg.Go(func() {
						if _, err := m.Provision(ctx, tk); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				procs += git.Started() - before
				st.Close()
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*tasks), "ms/task")
			b.ReportMetric(float64(procs)/float64(b.N*tasks), "git/task")
		})
	}
}
