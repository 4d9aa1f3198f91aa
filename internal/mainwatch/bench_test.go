package mainwatch

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// benchTasks registers n running tasks of e.repo, each with a branch on
// main's current commit (every other one with a commit of its own) and a
// change to a.txt, without making n worktrees: the watcher reads the
// registry and the branches, never the worktrees.
func benchTasks(b *testing.B, e *mwEnv, n int) []task.ID {
	b.Helper()
	ctx := context.Background()
	base := e.git(e.repo, "rev-parse", "main")
	tree := e.git(e.repo, "rev-parse", "main^{tree}")
	var refs strings.Builder
	ids := make([]task.ID, n)
	for i := range n {
		tk, _ := e.taskNoWorktree(task.Running)
		ids[i] = tk.ID
		tip := base
		if i%2 == 1 {
			tip = e.git(e.repo, "commit-tree", tree, "-p", base, "-m", fmt.Sprintf("task %d's own commit", i))
		}
		fmt.Fprintf(&refs, "create refs/heads/%s %s\n", worktree.Branch(tk.ID), tip)
		if _, err := e.st.PutWorktree(ctx, store.Worktree{TaskID: tk.ID, Repo: e.repo, Branch: worktree.Branch(tk.ID), Base: "main", BaseCommit: base,
			Path: e.repo + "-wt-" + string(tk.ID), State: store.WorktreeActive, CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
			b.Fatal(err)
		}
		e.changed(tk.ID, "a.txt")
	}
	cmd := exec.Command("git", "update-ref", "--stdin")
	cmd.Dir, cmd.Stdin = e.repo, strings.NewReader(refs.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("update-ref: %v\n%s", err, out)
	}
	return ids
}

// BenchmarkCheckCycle100 is one full comparison of 100 task branches with
// main (main moved by 3 commits; half the branches have commits of their
// own): the read-only pass behind `rebase status` and every notifying
// cycle. Target: 100 ms per cycle.
func BenchmarkCheckCycle100(b *testing.B) { benchCycle(b, "b.txt") }

// BenchmarkCheckCycle100Overlap is the same with main changing the file
// every task changed: each of the 50 branches with commits also gets a
// conflict forecast (git merge-tree).
func BenchmarkCheckCycle100Overlap(b *testing.B) { benchCycle(b, "a.txt") }

func benchCycle(b *testing.B, file string) {
	e := newWatchEnv(b, defaults())
	benchTasks(b, e, 100)
	for i := range 3 {
		e.commit(e.repo, fmt.Sprintf("main %d", i), map[string]string{file: fmt.Sprintf("%d\n", i)})
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		states, err := e.w.Status(ctx)
		if err != nil || len(states) != 100 || states[0].Behind != 3 {
			b.Fatalf("status: %d states, %v", len(states), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/100, "µs/task")
}

// BenchmarkNoticeLatency100 is the time from a commit landing on main (made
// by git outside the daemon) to the notices of all 100 behind tasks being
// stored in their durable queues, seen through the filesystem watch (the
// polling interval is an hour). Target: 1 s.
func BenchmarkNoticeLatency100(b *testing.B) {
	e := newWatchEnv(b, Config{Enabled: true, Interval: time.Hour, Urgency: Helpful, Cooldown: 0})
	ids := benchTasks(b, e, 100)
	// The door: each notice is stored in the task's durable queue.
	e.w.inject = func(ctx context.Context, n inject.Injection) error {
		n.CreatedAt = time.Now()
		_, _, err := e.st.Enqueue(ctx, n, nil)
		if err == nil {
			e.got <- n
		}
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { e.w.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	for e.w.Health().Cycles < 2 {
		time.Sleep(time.Millisecond)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		e.commit(e.repo, fmt.Sprintf("main %d", i), map[string]string{"a.txt": fmt.Sprintf("%d\n", i)})
		for range ids {
			select {
			case <-e.got:
			case <-time.After(30 * time.Second):
				b.Fatal("notices did not arrive in 30 s")
			}
		}
	}
}
