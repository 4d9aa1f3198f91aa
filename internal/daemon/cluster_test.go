package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// Scripted tasks run on two workers and land on main through the merge
// queue, each marker written once.
func TestClusterTasksLandFromWorkers(t *testing.T) {
	t.Parallel()
	const n = 4
	d := startCluster(t, markerScript(n, 3, ""), nil)
	a := d.worker(t, 2)
	b := d.worker(t, 2)
	var ids []task.ID
	for i := 1; i <= n; i++ {
		ids = append(ids, d.create(t, api.CreateTaskRequest{Description: fmt.Sprintf("marker task %d", i)}).ID)
	}
	placed := map[string]int{}
	for i, id := range ids {
		done := d.finish(t, id)
		if done.Status != task.Completed {
			d.dump(t)
			t.Fatalf("task %d is %s (%s), want completed", i+1, done.Status, done.CloseReason)
		}
		got := d.onMain(t, fmt.Sprintf("markers-%d.txt", i+1))
		want := fmt.Sprintf("t%d-step-1\nt%d-step-2\nt%d-step-3\n", i+1, i+1, i+1)
		if got != want {
			t.Errorf("markers-%d.txt on main = %q, want %q", i+1, got, want)
		}
		for _, as := range d.assignments(t, id) {
			placed[as.Worker]++
		}
		if len(d.events(t, id, event.KindToolCall)) < 3 {
			t.Errorf("task %d: the coordinator's log lacks the worker's tool calls", i+1)
		}
	}
	refs, err := git.Run(context.Background(), d.repo, "for-each-ref", "--format=%(refname)", "refs/heads/neuraphage/")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range strings.Fields(refs) {
		if strings.Contains(ref, "/e") || strings.Contains(ref, "/c") {
			t.Errorf("snapshot ref %s left after landing", ref)
		}
	}
	if placed[a] == 0 || placed[b] == 0 {
		t.Errorf("placements %v: want tasks on both workers", placed)
	}
}

// A worker killed in the middle of a tool call: its task resumes on the
// other worker from the last checkpoint, no tool call runs twice, and it
// lands.
func TestClusterKilledWorkerTaskResumesElsewhere(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(shortTemp(t), "gate")
	d := startCluster(t, markerScript(1, 4, gate), nil)
	first := d.worker(t, 1)
	id := d.create(t, api.CreateTaskRequest{Description: "marker task 1"}).ID
	d.waitEvent(t, id, event.KindToolCall, gated)
	second := d.worker(t, 1)
	d.kill(first)
	done := d.finish(t, id)
	os.WriteFile(gate, nil, 0o644)
	if done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	as := d.assignments(t, id)
	if len(as) != 2 || as[0].Worker != first || as[1].Worker != second || as[1].Snapshot == "" || as[1].Epoch <= as[0].Epoch {
		t.Fatalf("assignments %+v: want %s, then %s from a snapshot with a newer epoch", as, first, second)
	}
	if len(d.events(t, id, event.KindClusterLost)) == 0 {
		t.Error("no cluster.worker_lost event")
	}
	// Step 1 ran on the first worker, before the checkpoint; step 2 was in
	// flight when it died (not known to have run: not run again); steps 3
	// and 4 ran on the second.
	got := d.onMain(t, "markers-1.txt")
	if want := "t1-step-1\nt1-step-3\nt1-step-4\n"; got != want {
		t.Errorf("markers on main = %q, want %q", got, want)
	}
}

// A message sent to a remote task while its worker is stuck in a tool
// call, the worker then killed: the task resumes on another worker and
// the message reaches its conversation exactly once.
func TestClusterInjectionExactlyOnceAcrossWorkerRestart(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(shortTemp(t), "gate")
	d := startCluster(t, markerScript(1, 4, gate), nil)
	first := d.worker(t, 1)
	id := d.create(t, api.CreateTaskRequest{Description: "marker task 1"}).ID
	d.waitEvent(t, id, event.KindToolCall, gated)
	const text = "the release is on Friday"
	msg, err := d.client.Send(context.Background(), string(id), text)
	if err != nil {
		t.Fatal(err)
	}
	d.kill(first)
	d.worker(t, 1)
	done := d.finish(t, id)
	os.WriteFile(gate, nil, 0o644)
	if done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	delivered := 0
	for _, e := range d.events(t, id, event.KindDelivered) {
		for _, got := range e.Payload.(event.Delivered).InjectionIDs {
			if got == msg.ID {
				delivered++
			}
		}
	}
	if delivered != 1 {
		t.Errorf("the message was delivered %d times, want once", delivered)
	}
	reqs := d.requests("t1")
	last := reqs[len(reqs)-1]
	seen := 0
	for _, m := range last.Messages {
		seen += strings.Count(m.Text(), text)
	}
	if seen != 1 {
		t.Errorf("the last model request holds the message %d times, want once", seen)
	}
}

// partition is a dialer whose connections can be cut and refused.
type partition struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (p *partition) Dial(network, addr string) (net.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return nil, errors.New("partitioned")
	}
	c, err := net.Dial(network, addr)
	if err == nil {
		p.conns = append(p.conns, c)
	}
	return c, err
}

func (p *partition) set(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// A worker cut off in the middle of a tool call loses its task to
// another worker; when it comes back and its call ends, it is told its
// run is fenced: it pushes nothing, its messages are dropped (with a
// cluster.stale event) and nothing of its late work lands.
func TestClusterPartitionedWorkerLandsNothing(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(shortTemp(t), "gate")
	d := startCluster(t, markerScript(1, 4, gate), nil)
	link := &partition{}
	first := d.worker(t, 1, func(o *daemon.WorkerOptions) { o.NATS = append(o.NATS, nats.SetCustomDialer(link)) })
	id := d.create(t, api.CreateTaskRequest{Description: "marker task 1"}).ID
	d.waitEvent(t, id, event.KindToolCall, gated)
	link.set(true)
	d.worker(t, 1)
	done := d.finish(t, id)
	if done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	as := d.assignments(t, id)
	if len(as) != 2 || as[0].Worker != first {
		t.Fatalf("assignments %+v: want the cut-off worker first, then another", as)
	}
	link.set(false)
	testkit.WaitFor(t, "the cut-off worker is back", func() bool {
		w, ok := d.workerStatus(t, first)
		return ok && w.Alive
	})
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d.waitEvent(t, id, event.KindClusterStale, func(e event.Event) bool {
		return e.Payload.(event.ClusterStale).Epoch == as[0].Epoch
	})
	testkit.WaitFor(t, "the cut-off worker dropped its run", func() bool {
		w, ok := d.workerStatus(t, first)
		return ok && len(w.Running) == 0
	})
	if got, want := d.onMain(t, "markers-1.txt"), "t1-step-1\nt1-step-3\nt1-step-4\n"; got != want {
		t.Errorf("markers on main = %q, want %q", got, want)
	}
	refs, err := git.Run(context.Background(), d.repo, "for-each-ref", "--format=%(refname)")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range strings.Fields(refs) {
		if _, err := git.Run(context.Background(), d.repo, "grep", "-q", "after-gate", ref, "--"); err == nil {
			t.Errorf("%s holds the fenced run's late work", ref)
		}
	}
}

// The Watcher nudges a looping task that runs on a worker, through the
// same detector path as a local one: by the fourth run of the failing
// check, and the nudge reaches the worker's conversation.
func TestClusterWatcherNudgesRemoteLoop(t *testing.T) {
	t.Parallel()
	d := startCluster(t, unattendedScript(), func(c *config.Config) {
		c.Supervision.Watcher.Enabled = true
		c.Supervision.Watcher.IntervalSecs = 1
		c.Merge.Auto = false
	})
	check := "#!/bin/sh\nv=$(cat VERSION) || { echo \"FAIL: no version\"; exit 1; }\necho \"ok: $v\"\n"
	if err := os.WriteFile(filepath.Join(d.repo, "check.sh"), []byte(check), 0o755); err != nil {
		t.Fatal(err)
	}
	gitCommit(t, d.repo, "check.sh")
	d.worker(t, 1)
	loop := d.create(t, api.CreateTaskRequest{Description: "make the release check pass", Persona: "junior"})
	done := d.finish(t, loop.ID)
	if done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("the looping task is %s (%s), want completed after a nudge", done.Status, done.CloseReason)
	}
	if len(d.assignments(t, loop.ID)) == 0 {
		t.Fatal("the task did not run on the worker")
	}
	nudges := d.events(t, loop.ID, event.KindWatcherNudge)
	if len(nudges) == 0 {
		t.Fatal("the remote looping task was never nudged")
	}
	runs := 0
	for _, c := range d.events(t, loop.ID, event.KindToolCall) {
		if c.ID < nudges[0].ID {
			runs++
		}
	}
	if runs > 4 {
		t.Errorf("nudged after %d runs of the failing check, want by the 4th", runs)
	}
}

// A draining worker finishes its task, takes no new one and leaves; the
// next task runs on another worker.
func TestClusterDrainedWorkerFinishesAndLeaves(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(shortTemp(t), "gate")
	d := startCluster(t, markerScript(2, 3, gate), nil)
	first := d.worker(t, 2)
	one := d.create(t, api.CreateTaskRequest{Description: "marker task 1"}).ID
	d.waitEvent(t, one, event.KindToolCall, gated)
	d.mu.Lock()
	tw := d.workers[first]
	d.mu.Unlock()
	tw.w.Drain()
	testkit.WaitFor(t, "the worker says it drains", func() bool {
		w, ok := d.workerStatus(t, first)
		return ok && w.Draining
	})
	two := d.create(t, api.CreateTaskRequest{Description: "marker task 2"}).ID
	second := d.worker(t, 1)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []task.ID{one, two} {
		if done := d.finish(t, id); done.Status != task.Completed {
			d.dump(t)
			t.Fatalf("%s is %s (%s), want completed", id, done.Status, done.CloseReason)
		}
	}
	if as := d.assignments(t, one); len(as) != 1 || as[0].Worker != first {
		t.Errorf("task 1 assignments %+v: want only the draining worker", as)
	}
	if as := d.assignments(t, two); len(as) != 1 || as[0].Worker != second {
		t.Errorf("task 2 assignments %+v: want only the new worker", as)
	}
	select {
	case err := <-tw.done:
		tw.done <- err
		if err != nil {
			t.Errorf("the drained worker ended with %v", err)
		}
	case <-time.After(testkit.WaitLimit):
		t.Fatal("the drained worker did not exit")
	}
	if got := d.onMain(t, "markers-1.txt"); !strings.Contains(got, "t1-after-gate") {
		t.Errorf("markers-1.txt on main = %q: the drained worker's task did not finish its call", got)
	}
}

// The time from the tool call that completes a loop (as the coordinator
// logs it) to the Watcher's nudge, for a task on a worker (cluster) and
// on the daemon itself (local): the detector path is the same.
func BenchmarkWatcherVerdict(b *testing.B) {
	for _, remote := range []bool{false, true} {
		name := "local"
		if remote {
			name = "cluster"
		}
		b.Run(name, func(b *testing.B) {
			mut := func(c *config.Config) {
				c.Supervision.Watcher.Enabled = true
				c.Supervision.Watcher.IntervalSecs = 1
				c.Merge.Auto = false
				c.Cluster.Enabled = remote
				c.Cluster.Listen, c.Cluster.GitListen = "127.0.0.1:0", "127.0.0.1:0"
				c.Cluster.HeartbeatMs = 100
			}
			d := &clusterDaemon{modelDaemon: startModel(b, unattendedScript(), "", mut), workers: map[string]*testWorker{}}
			check := "#!/bin/sh\nv=$(cat VERSION) || { echo \"FAIL: no version\"; exit 1; }\necho \"ok: $v\"\n"
			if err := os.WriteFile(filepath.Join(d.repo, "check.sh"), []byte(check), 0o755); err != nil {
				b.Fatal(err)
			}
			gitCommit(b, d.repo, "check.sh")
			if remote {
				d.worker(b, 1)
			}
			var total time.Duration
			b.ResetTimer()
			for range b.N {
				loop := d.create(b, api.CreateTaskRequest{Description: "make the release check pass", Persona: "junior"})
				d.wait(b, loop.ID, "nudged", func(task.Task) bool { return len(d.events(b, loop.ID, event.KindWatcherNudge)) > 0 })
				nudge := d.events(b, loop.ID, event.KindWatcherNudge)[0]
				var last event.Event
				for _, c := range d.events(b, loop.ID, event.KindToolCall) {
					if c.ID < nudge.ID {
						last = c
					}
				}
				total += nudge.Time.Sub(last.Time)
				d.wait(b, loop.ID, "finished", func(t task.Task) bool { return t.Status.Terminal() })
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/verdict")
		})
	}
}

// The task's branch moves on the coordinator while its run goes on on a
// worker (as a rebase moves it): the worker's work is merged onto the
// moved branch, and nothing of the branch is reverted when it lands.
func TestClusterWorkMergedOntoMovedBranch(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(shortTemp(t), "gate")
	d := startCluster(t, markerScript(1, 3, gate), nil)
	d.worker(t, 1)
	id := d.create(t, api.CreateTaskRequest{Description: "marker task 1"}).ID
	d.waitEvent(t, id, event.KindToolCall, gated)
	wt := d.events(t, id, event.KindWorktreeCreated)[0].Payload.(event.WorktreeCreated).Path
	if err := os.WriteFile(filepath.Join(wt, "upstream.txt"), []byte("moved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCommit(t, wt, "upstream.txt")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if done := d.finish(t, id); done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	if got := d.onMain(t, "upstream.txt"); got != "moved\n" {
		t.Errorf("upstream.txt on main = %q: the branch's own commit was reverted", got)
	}
	if got, want := d.onMain(t, "markers-1.txt"), "t1-step-1\nt1-step-2\nt1-after-gate\nt1-step-3\n"; got != want {
		t.Errorf("markers on main = %q, want %q", got, want)
	}
}

// A blocking rebase of a remote task: main moves, the rebase is carried
// out at the task's boundary on the coordinator, the worker's run ends
// there, and the task goes on from the rebased branch with its work: both
// main's new commit and the task's markers land.
func TestClusterBlockingRebaseOfRemoteTask(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(shortTemp(t), "gate")
	d := startCluster(t, markerScript(1, 3, gate), nil)
	d.worker(t, 1)
	id := d.create(t, api.CreateTaskRequest{Description: "marker task 1"}).ID
	d.waitEvent(t, id, event.KindToolCall, gated)
	if err := os.WriteFile(filepath.Join(d.repo, "upstream.txt"), []byte("main moved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCommit(t, d.repo, "upstream.txt")
	if _, err := d.client.RebaseTask(context.Background(), string(id)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if done := d.finish(t, id); done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	if n := len(d.assignments(t, id)); n < 2 {
		t.Errorf("%d placements: the run did not end at the rebase", n)
	}
	if got := d.onMain(t, "upstream.txt"); got != "main moved\n" {
		t.Errorf("upstream.txt on main = %q", got)
	}
	if got, want := d.onMain(t, "markers-1.txt"), "t1-step-1\nt1-step-2\nt1-after-gate\nt1-step-3\n"; got != want {
		t.Errorf("markers on main = %q, want %q", got, want)
	}
}

// Placement by labels: a task that needs gpu=1 (tag label:gpu=1) runs on
// the worker that declares it, never on the other.
func TestClusterPlacementByLabels(t *testing.T) {
	t.Parallel()
	d := startCluster(t, markerScript(3, 1, ""), nil)
	plain := d.worker(t, 2)
	gpu := d.worker(t, 2, func(o *daemon.WorkerOptions) { o.Labels = map[string]string{"gpu": "1"} })
	id := d.create(t, api.CreateTaskRequest{Description: "marker task 1", Tags: []string{"label:gpu=1"}}).ID
	if done := d.finish(t, id); done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	if as := d.assignments(t, id); len(as) != 1 || as[0].Worker != gpu {
		t.Errorf("the gpu task went to %+v, want %s (not %s)", as, gpu, plain)
	}
}

// The coordinator restarts while its task runs on a worker: the worker
// is told to stop, reconnects to the coordinator's server (same address,
// its JetStream state and tokens kept), and the task resumes there with a
// new epoch from its last checkpoint and lands, no tool call run twice.
func TestClusterCoordinatorRestart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	gate := filepath.Join(shortTemp(t), "gate")
	d := startCluster(t, markerScript(1, 4, gate), func(c *config.Config) { c.Cluster.Listen = addr })
	w := d.worker(t, 1)
	id := d.create(t, api.CreateTaskRequest{Description: "marker task 1"}).ID
	d.waitEvent(t, id, event.KindToolCall, gated)
	d.restart(t)
	done := d.finish(t, id)
	os.WriteFile(gate, nil, 0o644)
	if done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	as := d.assignments(t, id)
	if len(as) < 2 || as[len(as)-1].Worker != w || as[len(as)-1].Epoch <= as[0].Epoch {
		t.Errorf("assignments %+v: want a new epoch on %s after the restart", as, w)
	}
	if got, want := d.onMain(t, "markers-1.txt"), "t1-step-1\nt1-step-3\nt1-step-4\n"; got != want {
		t.Errorf("markers on main = %q, want %q", got, want)
	}
}
