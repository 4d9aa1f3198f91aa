package mainwatch

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// e2e is the daemon's path for notices, end to end: a real repository, a
// real store, a running Monitor whose notices go through a real
// executor's door, and the store's own report of what it committed.
type e2e struct {
	*mwEnv
	ex *executor.Executor
	// queued receives, for every committed batch of events that holds
	// rebase notices, how many it holds.
	queued chan int
}

func newE2E(tb testing.TB, cfg Config) *e2e {
	tb.Helper()
	x := &e2e{mwEnv: newWatchEnv(tb, cfg), queued: make(chan int, 4096)}
	x.ex = executor.New(executor.Options{Tasks: x.st, Runs: x.st, Logger: slog.New(slog.DiscardHandler)})
	x.mu.Lock()
	x.publish = func(evs []event.Event) {
		n := 0
		for _, ev := range evs {
			if m, ok := ev.Payload.(event.TaskMessage); ok && m.Kind == string(inject.Rebase) {
				n++
			}
		}
		if n > 0 {
			x.queued <- n
		}
	}
	x.mu.Unlock()
	// The daemon's wiring: notices go through the executor's door.
	x.w = New(Options{Store: x.st, Worktrees: x.wt, Config: cfg,
		Inject: func(ctx context.Context, n inject.Injection) error {
			_, err := x.ex.Inject(ctx, n)
			return err
		},
		InjectMany: x.ex.InjectMany})
	return x
}

// provisioned is what the daemon does when a task's worktree has been
// provisioned (daemon/runtime.go, Workspace).
func (x *e2e) provisioned(wt store.Worktree) { x.w.Track(context.Background(), wt) }

// compared reports whether the watcher has compared n tasks with main.
func (x *e2e) compared(n int) bool {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	k := 0
	for _, ts := range x.w.tasks {
		if ts.MainCommit != "" {
			k++
		}
	}
	return k >= n
}

// run starts the Monitor and waits for its first look.
func (x *e2e) run(b *testing.B) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { x.w.Run(ctx) })
	for x.w.Health().Cycles < 1 {
		time.Sleep(time.Millisecond)
	}
	return func() { cancel(); wg.Wait() }
}

// behind registers n running tasks of the repository with worktree
// records and branches on main (every other one with a commit of its
// own), as provisioning leaves them, without making n worktrees: the
// watcher reads the registry and the branches. Half of them changed
// a.txt, the others c.txt: when main changes a.txt, the first half are
// told at the configured urgency (a quarter with a merge-tree forecast)
// and the others get an fyi note.
func (x *e2e) behind(b *testing.B, n int) []store.Worktree {
	b.Helper()
	ctx := context.Background()
	base := x.git(x.repo, "rev-parse", "main")
	tree := x.git(x.repo, "rev-parse", "main^{tree}")
	var refs strings.Builder
	wts := make([]store.Worktree, n)
	for i := range n {
		tk, _ := x.taskNoWorktree(task.Running)
		tip := base
		if i%2 == 1 {
			tip = x.git(x.repo, "commit-tree", tree, "-p", base, "-m", fmt.Sprintf("task %d's own commit", i))
		}
		fmt.Fprintf(&refs, "create refs/heads/%s %s\n", worktree.Branch(tk.ID), tip)
		wt := store.Worktree{TaskID: tk.ID, Repo: x.repo, Branch: worktree.Branch(tk.ID), Base: "main", BaseCommit: base,
			Path: x.repo + "-wt-" + string(tk.ID), State: store.WorktreeActive, CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if _, err := x.st.PutWorktree(ctx, wt); err != nil {
			b.Fatal(err)
		}
		wts[i] = wt
		x.changed(tk.ID, map[bool]string{true: "a.txt", false: "c.txt"}[i%4 < 2])
	}
	x.gitIn(x.repo, refs.String(), "update-ref", "--stdin")
	return wts
}

// gitIn runs git in dir with stdin.
func (x *e2e) gitIn(dir, stdin string, args ...string) string {
	x.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		x.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// nextMain makes the commit main moves to next (a.txt set to content on
// top of main) without moving main.
func (x *e2e) nextMain(content string) string {
	blob := x.gitIn(x.repo, content, "hash-object", "-w", "--stdin")
	lines := strings.Split(x.git(x.repo, "ls-tree", "main"), "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, "\ta.txt") {
			lines[i] = "100644 blob " + blob + "\ta.txt"
		}
	}
	tree := x.gitIn(x.repo, strings.Join(lines, "\n")+"\n", "mktree")
	return x.git(x.repo, "commit-tree", tree, "-p", "main", "-m", "main: "+strings.TrimSpace(content))
}

// moveMain moves main to commit as a push or a teammate's commit does (a
// ref change made by git outside the daemon), and returns how long it
// took from then until n rebase notices were committed to the store, and
// in how many commits.
func (x *e2e) moveMain(b *testing.B, commit string, n int) (time.Duration, int) {
	start := time.Now()
	x.git(x.repo, "update-ref", "refs/heads/main", commit)
	deadline := time.After(90 * time.Second)
	got, commits := 0, 0
	for got < n {
		select {
		case k := <-x.queued:
			got += k
			commits++
		case <-deadline:
			b.Fatalf("%d of %d notices queued after 90 s", got, n)
		}
	}
	return time.Since(start), commits
}

// report adds the spread of the measured latencies and the store commits
// that carried the notices.
func report(b *testing.B, lat []time.Duration, commits int) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[0].Microseconds())/1000, "min-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(commits)/float64(len(lat)), "commits/op")
}

// BenchmarkMainMovedNotify100 is the time from main moving (git
// update-ref, outside the daemon) to the last of 100 behind tasks' notices
// committed to their queues, through the executor's door: 50 told at the
// blocking urgency (25 with a merge-tree forecast), 50 fyi notes. The
// polling interval is an hour: the move is seen through the filesystem
// watch. Target: 200 ms.
func BenchmarkMainMovedNotify100(b *testing.B) { benchWarm(b, 0) }

// BenchmarkMainMovedNotify100Busy is the same while eight writers keep
// the store busy, as running tasks' turns do (each commits an event,
// then the next, without pause).
func BenchmarkMainMovedNotify100Busy(b *testing.B) { benchWarm(b, 8) }

func benchWarm(b *testing.B, writers int) {
	x := newE2E(b, Config{Enabled: true, Interval: time.Hour, Urgency: Blocking, NotifyUnrelated: true})
	wts := x.behind(b, 100)
	for _, wt := range wts {
		x.provisioned(wt)
	}
	defer x.run(b)()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for i := range writers {
		id := wts[i].TaskID
		wg.Go(func() {
			for ctx.Err() == nil {
				x.st.AppendEvents(ctx, event.New(time.Now(), id, event.FileChanged{Path: "a.txt", Op: "modified", Tool: "edit_file"}))
			}
		})
	}
	// Warm: the watcher has told every task about main once.
	x.moveMain(b, x.nextMain("warm\n"), len(wts))
	var (
		lat     []time.Duration
		commits int
	)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		next := x.nextMain(fmt.Sprintf("%d\n", i))
		b.StartTimer()
		d, c := x.moveMain(b, next, len(wts))
		lat, commits = append(lat, d), commits+c
	}
	report(b, lat, commits)
}

// BenchmarkMainMovedNotify100Fresh is the same in a repository whose 100
// tasks all started just now: the watcher runs, the tasks are provisioned
// (as the daemon provisions them), main moves right after. Each
// iteration is a new repository, store and watcher; run it with a fixed
// count (-benchtime 5x). Target: 200 ms.
func BenchmarkMainMovedNotify100Fresh(b *testing.B) {
	var (
		lat     []time.Duration
		commits int
	)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		x := newE2E(b, Config{Enabled: true, Urgency: Blocking, NotifyUnrelated: true}) // polling every 30 s, the default
		stop := x.run(b)
		wts := x.behind(b, 100)
		next := x.nextMain(fmt.Sprintf("%d\n", i))
		for _, wt := range wts {
			x.provisioned(wt)
		}
		// Main moves after the watcher has compared the new tasks with it.
		for !x.compared(len(wts)) {
			time.Sleep(time.Millisecond)
		}
		b.StartTimer()
		d, c := x.moveMain(b, next, len(wts))
		b.StopTimer()
		lat, commits = append(lat, d), commits+c
		stop()
		b.StartTimer()
	}
	report(b, lat, commits)
}
