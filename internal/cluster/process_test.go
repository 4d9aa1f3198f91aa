package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// processScript: task N writes one marker line per step, then completes.
func processScript(n, steps, latencyMs int) string {
	var b strings.Builder
	b.WriteString("conversations:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - name: t%d\n    match: {user: \"marker task %d\\\\b\"}\n    steps:\n", i, i)
		for s := 1; s <= steps; s++ {
			fmt.Fprintf(&b, "      - latency_ms: %d\n        tool_calls: [{name: bash, input: {command: \"echo t%d-step-%d >> markers-%d.txt\"}}]\n", latencyMs, i, s, i)
		}
		b.WriteString("      - tool_calls: [{name: complete_task, input: {summary: \"markers written\"}}]\n")
	}
	return b.String()
}

// proc is one child process of the test.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func start(t testing.TB, bin, home, log string, env []string, args ...string) *proc {
	t.Helper()
	out, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), append(env, "NEURAPHAGE_HOME="+home)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); out.Close(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// procCluster is the built binary running as a coordinator daemon with a
// scripted model server, and `neuraphage worker` processes with homes of
// their own.
type procCluster struct {
	root, bin, repo string
	coord           *proc
	c               *client.Client
	workers         map[string]*proc
}

// startProcCluster builds the binary, makes a repository, starts the
// coordinator (maxConcurrent tasks at once) and n workers of the given
// capacity, and waits for them to join. Workers beat every heartbeatMs
// and are lost after misses missed beats.
func startProcCluster(t testing.TB, script string, n, capacity, maxConcurrent, heartbeatMs, misses int) *procCluster {
	t.Helper()
	root, err := os.MkdirTemp("", "npc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(root)
		} else {
			t.Logf("scratch kept in %s", root)
		}
	})
	pc := &procCluster{root: root, bin: filepath.Join(root, "neuraphage"), repo: filepath.Join(root, "repo"), workers: map[string]*proc{}}
	if out, err := exec.Command("go", "build", "-o", pc.bin, "github.com/neuraphage/neuraphage-go/cmd/neuraphage").CombinedOutput(); err != nil {
		t.Fatalf("building neuraphage: %v\n%s", err, out)
	}
	sc, err := llmtest.ParseScript("cluster", []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewServer(t, sc)
	if err := os.MkdirAll(pc.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pc.repo, "README.md"), []byte("# cluster\n"), 0o644)
	id := []string{"-c", "user.name=Test", "-c", "user.email=test@neuraphage.invalid", "-c", "commit.gpgsign=false"}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, append(id, "commit", "-q", "-m", "first")} {
		if _, err := git.Run(context.Background(), pc.repo, args...); err != nil {
			t.Fatal(err)
		}
	}
	coord := filepath.Join(root, "coord")
	os.MkdirAll(filepath.Join(coord, "config"), 0o755)
	cfg := fmt.Sprintf(`executor: {max_concurrent: %d}
merge: {author_name: Test, author_email: test@neuraphage.invalid}
supervision: {main_watcher: {enabled: false}}
llm:
  providers: {anthropic: {base_url: %q, api_key_env: NP_CLUSTER_TEST_KEY}}
  tiers: {router: {provider: anthropic}, worker: {provider: anthropic}, expert: {provider: anthropic}}
  retry: {base_delay_ms: 10, max_delay_ms: 50}
cluster: {enabled: true, listen: "127.0.0.1:0", git_listen: "127.0.0.1:0", heartbeat_ms: %d, heartbeat_misses: %d}
`, maxConcurrent, model.URL(), heartbeatMs, misses)
	if err := os.WriteFile(filepath.Join(coord, "config", "neuraphage.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	pc.coord = start(t, pc.bin, coord, filepath.Join(root, "daemon.out"), []string{"NP_CLUSTER_TEST_KEY=k"}, "daemon", "start", "--foreground")
	p, err := config.ResolvePaths(func(k string) string {
		if k == "NEURAPHAGE_HOME" {
			return coord
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	pc.c = client.New(p.Socket)
	t.Cleanup(pc.c.Close)
	ctx := context.Background()
	testkit.WaitFor(t, "the coordinator answers", func() bool { _, err := pc.c.Health(ctx); return err == nil })
	for i := range n {
		info, err := pc.c.ClusterJoin(ctx, api.JoinRequest{})
		if err != nil {
			t.Fatal(err)
		}
		home := filepath.Join(root, fmt.Sprintf("w%d", i))
		pc.workers[info.Worker] = start(t, pc.bin, home, filepath.Join(root, fmt.Sprintf("worker%d.out", i)), nil,
			"worker", "--join", info.URL, "--token", info.Token, "--capacity", fmt.Sprint(capacity))
	}
	testkit.WaitFor(t, "the workers joined", func() bool {
		s, err := pc.c.ClusterStatus(ctx)
		return err == nil && len(s.Workers) == n
	})
	return pc
}

// The built binary as the coordinator daemon and three `neuraphage worker`
// processes with homes of their own: 30 scripted tasks all land on main,
// one worker killed with SIGKILL while it runs tasks, and no marker line
// (one per tool call) is on main twice.
func TestClusterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs four processes")
	}
	const ntasks, steps = 30, 3
	pc := startProcCluster(t, processScript(ntasks, steps, 150), 3, 4, 12, 200, 10)
	c, repo, workers := pc.c, pc.repo, pc.workers
	ctx := context.Background()
	var ids []task.ID
	for i := 1; i <= ntasks; i++ {
		tk, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: fmt.Sprintf("marker task %d", i), Repo: repo})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	// SIGKILL the first worker seen running two tasks.
	var victim string
	testkit.WaitFor(t, "a worker runs two tasks", func() bool {
		s, err := c.ClusterStatus(ctx)
		if err != nil {
			return false
		}
		for _, w := range s.Workers {
			if len(w.Running) >= 2 {
				victim = w.Name
				return true
			}
		}
		return false
	})
	workers[victim].cmd.Process.Signal(syscall.SIGKILL)
	<-workers[victim].done
	deadline := time.Now().Add(110 * time.Second)
	for i, id := range ids {
		for {
			det, err := c.GetTask(ctx, string(id))
			if err != nil {
				t.Fatal(err)
			}
			if det.Task.Status.Terminal() {
				if det.Task.Status != task.Completed {
					t.Fatalf("task %d is %s (%s), want completed", i+1, det.Task.Status, det.Task.CloseReason)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %d never finished: %s (%s)", i+1, det.Task.Status, det.Task.CloseReason)
			}
			time.Sleep(50 * time.Millisecond)
		}
		out, err := git.Run(ctx, repo, "show", fmt.Sprintf("main:markers-%d.txt", i+1))
		if err != nil {
			t.Fatalf("task %d landed no markers: %v", i+1, err)
		}
		seen := map[string]bool{}
		for _, line := range strings.Fields(out) {
			if seen[line] {
				t.Errorf("task %d: %s is on main twice (a tool call ran twice)", i+1, line)
			}
			seen[line] = true
		}
		if last := fmt.Sprintf("t%d-step-%d", i+1, steps); !seen[last] {
			t.Errorf("task %d: its last step's marker is not on main: %q", i+1, out)
		}
	}
	assigned, err := c.Events(ctx, event.Query{Filter: event.Filter{Kinds: []string{string(event.KindClusterAssigned)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d placements for %d tasks (worker %s killed)", len(assigned), ntasks, victim)
	if len(assigned) <= ntasks {
		t.Errorf("%d placements: the killed worker's tasks were not placed again", len(assigned))
	}
	s, _ := c.ClusterStatus(ctx)
	for _, w := range s.Workers {
		if w.Name == victim && w.Alive {
			t.Errorf("the killed worker %s is still alive to the coordinator", victim)
		}
	}
}
