package daemon_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/cluster"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// clusterDaemon is a coordinator daemon with in-process workers.
type clusterDaemon struct {
	*modelDaemon
	mu      sync.Mutex
	workers map[string]*testWorker
}

type testWorker struct {
	w      *cluster.Worker
	cancel context.CancelFunc
	done   chan error
}

// startCluster starts a coordinator on a free loopback port whose workers
// beat every 100 ms and are lost after 10 missed beats.
func startCluster(t *testing.T, script string, mut func(*config.Config)) *clusterDaemon {
	t.Helper()
	return startClusterEnv(t, script, nil, mut)
}

// startClusterEnv is startCluster with more variables in the
// coordinator's environment.
func startClusterEnv(t *testing.T, script string, env map[string]string, mut func(*config.Config)) *clusterDaemon {
	t.Helper()
	d := startModelEnv(t, script, "", env, func(c *config.Config) {
		c.Cluster.Enabled = true
		c.Cluster.Listen, c.Cluster.GitListen = "127.0.0.1:0", "127.0.0.1:0"
		c.Cluster.HeartbeatMs, c.Cluster.HeartbeatMisses = 100, 10
		c.Executor.MaxConcurrent = 8
		if mut != nil {
			mut(c)
		}
	})
	return &clusterDaemon{modelDaemon: d, workers: map[string]*testWorker{}}
}

// worker starts an in-process worker with its own home and returns its name.
func (d *clusterDaemon) worker(t testing.TB, capacity int, opts ...func(*daemon.WorkerOptions)) string {
	t.Helper()
	info, err := d.client.ClusterJoin(context.Background(), api.JoinRequest{})
	if err != nil {
		t.Fatal(err)
	}
	home := shortTemp(t)
	p, err := config.ResolvePaths(func(k string) string {
		if k == "NEURAPHAGE_HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Cluster.HeartbeatMs = 100
	cfg.Merge.AuthorName, cfg.Merge.AuthorEmail = "Test", "test@neuraphage.invalid"
	ctx, cancel := context.WithCancel(context.Background())
	tw := &testWorker{cancel: cancel, done: make(chan error, 1)}
	started := make(chan *cluster.Worker, 1)
	o := daemon.WorkerOptions{Paths: p, Config: cfg, Getenv: func(string) string { return "" },
		Join: info.URL, Token: info.Token, Capacity: capacity, Logger: slog.New(slog.DiscardHandler),
		Started: func(w *cluster.Worker) { started <- w }}
	for _, f := range opts {
		f(&o)
	}
	go func() { tw.done <- daemon.RunWorker(ctx, o) }()
	select {
	case tw.w = <-started:
	case err := <-tw.done:
		t.Fatalf("the worker did not start: %v", err)
	}
	d.mu.Lock()
	d.workers[info.Worker] = tw
	d.mu.Unlock()
	t.Cleanup(func() { tw.stop() })
	testkit.WaitFor(t, "the worker joined", func() bool {
		s, err := d.client.ClusterStatus(context.Background())
		if err != nil {
			return false
		}
		for _, w := range s.Workers {
			if w.Name == info.Worker && w.Alive {
				return true
			}
		}
		return false
	})
	return info.Worker
}

func (tw *testWorker) stop() {
	tw.cancel()
	<-tw.done
	tw.done <- nil
}

// kill cuts a worker off as a crash would.
func (d *clusterDaemon) kill(name string) {
	d.mu.Lock()
	tw := d.workers[name]
	d.mu.Unlock()
	tw.w.Kill()
	tw.stop()
}

// assignments returns the workers a task was placed on, in order.
func (d *clusterDaemon) assignments(t *testing.T, id task.ID) []event.ClusterAssigned {
	var out []event.ClusterAssigned
	for _, e := range d.events(t, id, event.KindClusterAssigned) {
		out = append(out, e.Payload.(event.ClusterAssigned))
	}
	return out
}

// onMain returns a file's content on the repository's main branch.
func (d *clusterDaemon) onMain(t *testing.T, path string) string {
	out, err := git.Run(context.Background(), d.repo, "show", "main:"+path)
	if err != nil {
		return ""
	}
	return out
}

// markerScript: task N writes marker lines, one per step, then completes.
// With gate set, step 2 waits for the gate file after writing its marker.
func markerScript(n, steps int, gate string) string {
	var b strings.Builder
	b.WriteString("conversations:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - name: t%d\n    match: {user: \"marker task %d\\\\b\"}\n    steps:\n", i, i)
		for s := 1; s <= steps; s++ {
			cmd := fmt.Sprintf("echo t%d-step-%d >> markers-%d.txt", i, s, i)
			if s == 2 && gate != "" {
				cmd += fmt.Sprintf("; while [ ! -e %s ]; do sleep 0.05; done; echo t%d-after-gate >> markers-%d.txt", gate, i, i)
			}
			fmt.Fprintf(&b, "      - tool_calls: [{name: bash, input: {command: %q}}]\n", cmd)
		}
		b.WriteString("      - tool_calls: [{name: complete_task, input: {summary: \"markers written\"}}]\n")
	}
	return b.String()
}

// gated: the tool call that waits for the gate.
func gated(e event.Event) bool {
	b, _ := e.MarshalJSON()
	return strings.Contains(string(b), "while")
}

// workerStatus returns a worker as the coordinator sees it.
func (d *clusterDaemon) workerStatus(t *testing.T, name string) (api.ClusterWorker, bool) {
	s, err := d.client.ClusterStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range s.Workers {
		if w.Name == name {
			return w, true
		}
	}
	return api.ClusterWorker{}, false
}

// restart stops the coordinator daemon and starts it again on its home.
func (d *clusterDaemon) restart(t *testing.T) {
	t.Helper()
	if err := d.running.stop(t); err != nil {
		t.Fatalf("stopping the coordinator: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1), paths: d.paths, client: client.New(d.paths.Socket)}
	ready := make(chan struct{})
	go func() {
		r.done <- daemon.Run(ctx, daemon.Options{Paths: d.paths, Config: d.cfg, Version: "test", Getenv: d.getenv,
			Logger: slog.New(slog.DiscardHandler), Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-r.done:
		cancel()
		t.Fatalf("the coordinator did not start again: %v", err)
	}
	t.Cleanup(func() { r.stop(t) })
	d.running = r
}
