package merge_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// BenchmarkLand50 measures the time from 50 tasks completing at once (each
// adding its own file) until all 50 landed on main.
func BenchmarkLand50(b *testing.B) {
	const n = 50
	var total time.Duration
	for range b.N {
		b.StopTimer()
		e := newMergeEnv(b, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
		ids := make([]task.ID, n)
		for i := range ids {
			tk, w := e.newTask(fmt.Sprintf("task %d", i))
			e.write(w.Path, fmt.Sprintf("file-%02d.txt", i), fmt.Sprintf("content %d\n", i))
			ids[i] = tk.ID
		}
		e.start()
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() { e.complete(id, fmt.Sprintf("add file %d", i)) })
		}
		wg.Wait()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			es, err := e.st.ListMerges(e.ctx, store.MergeQuery{})
			if err != nil {
				b.Fatal(err)
			}
			landed := 0
			for _, m := range es {
				switch m.State {
				case store.MergeLanded:
					landed++
				case store.MergeQueued, store.MergeRunning:
				default:
					b.Fatalf("entry %d: %s: %s", m.ID, m.State, m.Detail)
				}
			}
			if landed == n {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d landed", landed, n)
			}
			time.Sleep(5 * time.Millisecond)
		}
		total += time.Since(start)
		b.StopTimer()
		if got := e.git(e.repo, "rev-list", "--count", "main"); got != fmt.Sprint(n+1) {
			b.Fatalf("main has %s commits, want %d", got, n+1)
		}
		e.stop()
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N)/n, "ns/landing")
}

// BenchmarkLandings500 measures landings per second with 500 worktrees
// present: 100 tasks' entries (each adding its own file) are queued while
// 400 other worktrees sit in the repository, as at a thousand agents; the
// time runs from the queue's start until the last of the 100 landed (merge.cleanup on, as by
// default). Run it with -benchtime=1x: the setup makes 500 worktrees.
func BenchmarkLandings500(b *testing.B) {
	const present, n = 500, 100
	var total time.Duration
	for range b.N {
		b.StopTimer()
		e := newMergeEnv(b, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2, Cleanup: true})
		for i := range present - n {
			e.git(e.repo, "worktree", "add", "-q", "-b", fmt.Sprintf("other/%d", i), filepath.Join(b.TempDir(), "w"), "main")
		}
		ids := make([]task.ID, n)
		for i := range ids {
			tk, w := e.newTask(fmt.Sprintf("task %d", i))
			e.write(w.Path, fmt.Sprintf("file-%03d.txt", i), fmt.Sprintf("content %d\n", i))
			ids[i] = tk.ID
		}
		for i, id := range ids {
			e.complete(id, fmt.Sprintf("add file %d", i))
		}
		b.StartTimer()
		start := time.Now()
		e.start()
		deadline := time.Now().Add(10 * time.Minute)
		for {
			es, err := e.st.ListMerges(e.ctx, store.MergeQuery{})
			if err != nil {
				b.Fatal(err)
			}
			landed := 0
			for _, m := range es {
				switch m.State {
				case store.MergeLanded:
					landed++
				case store.MergeQueued, store.MergeRunning:
				default:
					b.Fatalf("entry %d: %s: %s", m.ID, m.State, m.Detail)
				}
			}
			if landed == n {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d landed", landed, n)
			}
			time.Sleep(5 * time.Millisecond)
		}
		total += time.Since(start)
		b.StopTimer()
		if got := e.git(e.repo, "rev-list", "--count", "main"); got != fmt.Sprint(n+1) {
			b.Fatalf("main has %s commits, want %d", got, n+1)
		}
		e.stop()
	}
	b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "landings/s")
	b.ReportMetric(0, "ns/op")
}
