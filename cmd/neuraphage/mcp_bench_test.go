package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

// BenchmarkMCP times a host's round trips through `neuraphage mcp` to a
// daemon holding 1,000 tasks (created held, so none runs), and reports the
// resident memory of the idle mcp process.
//
//	go test ./cmd/neuraphage -run '^$' -bench MCP -benchtime 200x
func BenchmarkMCP(b *testing.B) {
	work := b.TempDir()
	home := filepath.Join(work, "h")
	repo := filepath.Join(work, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "initial"}} {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	env := append(os.Environ(), "NEURAPHAGE_HOME="+home, "HOME="+work, "XDG_RUNTIME_DIR=", "GORACE=atexit_sleep_ms=0")
	b.Cleanup(func() { stopDaemon(b, filepath.Join(home, "run", "daemon.pid")) })
	cmd := exec.Command("neuraphage", "daemon", "start")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("daemon start: %v\n%s", err, out)
	}
	ctx := context.Background()
	c := client.New(filepath.Join(home, "run", "neuraphage.sock"))
	const tasks = 1000
	ids := make([]string, tasks)
	var wg sync.WaitGroup
	errs := make(chan error, tasks)
	sem := make(chan struct{}, 32)
	for i := range tasks {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: fmt.Sprintf("held task %d: add token expiry checks", i), Repo: repo, NoStart: true})
			if err != nil {
				errs <- err
				return
			}
			ids[i] = string(t.ID)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}

	mcmd := exec.Command("neuraphage", "mcp")
	mcmd.Env = env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: mcmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	call := func(b *testing.B, name string, args map[string]any) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", name, err, res)
		}
	}
	// Idle: after the handshake and one call, as a host leaves it.
	call(b, "get_task", map[string]any{"id": ids[0]})
	rss := rssKiB(b, mcmd.Process.Pid)

	b.Run("get_task", func(b *testing.B) {
		i := 0
		for b.Loop() {
			call(b, "get_task", map[string]any{"id": ids[i%tasks]})
			i++
		}
	})
	b.Run("list_tasks/200", func(b *testing.B) {
		for b.Loop() {
			call(b, "list_tasks", map[string]any{"all": true})
		}
	})
	b.Run("list_tasks/1000", func(b *testing.B) {
		for b.Loop() {
			call(b, "list_tasks", map[string]any{"all": true, "limit": tasks})
		}
	})
	// The same reads straight from the API, as the CLI makes them.
	b.Run("api/get", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := c.GetTask(ctx, ids[i%tasks]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("api/list/1000", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.ListPage(ctx, client.ListQuery{All: true, Limit: tasks}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("idle", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(float64(rss), "idle-RSS-KiB")
	})
}

// rssKiB reads a process's resident set size.
func rssKiB(b *testing.B, pid int) int {
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for line := range strings.Lines(string(s)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
