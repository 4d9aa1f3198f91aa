package gitserve_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/gitserve"
)

// BenchmarkClonePushTaskBranch: what a worker spends in git per task over
// loopback HTTP: clone the base, commit, push the new task branch.
func BenchmarkClonePushTaskBranch(b *testing.B) {
	c := newCluster(b, false)
	for i := range 20 {
		c.commit(c.repo, fmt.Sprintf("f%d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	ctx := context.Background()
	var cloning, pushing time.Duration
	for i := 0; b.Loop(); i++ {
		tk := fmt.Sprintf("t-b%04d", i)
		c.assign(tk, "w1", 1)
		r := c.remote(tk, 1, token1)
		dir := filepath.Join(b.TempDir(), "w")
		start := time.Now()
		if err := gitserve.Clone(ctx, r, dir, "main"); err != nil {
			b.Fatal(err)
		}
		cloning += time.Since(start)
		br := "neuraphage/" + tk + "/work"
		c.git(dir, "", "checkout", "--quiet", "-b", br)
		c.commit(dir, "work.txt", tk+"\n")
		start = time.Now()
		if err := gitserve.Push(ctx, dir, r, br); err != nil {
			b.Fatal(err)
		}
		pushing += time.Since(start)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/task")
	b.ReportMetric(float64(cloning.Milliseconds())/float64(b.N), "clone-ms/task")
	b.ReportMetric(float64(pushing.Milliseconds())/float64(b.N), "push-ms/task")
}
