package daemon_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/testkit/claudecli"
)

// BenchmarkClaudeTaskNewToFirstObservation: from `task new --engine claude`
// (the API's create) to the task's first observation (agent.turn.started)
// through a real daemon: the task stored, its worktree made, its manifest
// evaluated, the real Claude Code started in the sandbox and its first
// model call answered by the local scripted model server.
func BenchmarkClaudeTaskNewToFirstObservation(b *testing.B) {
	cli := claudecli.CLI(b)
	script, err := llmtest.ParseScript("bench.yaml", []byte("default:\n  steps:\n    - text: \"Done.\"\n"))
	if err != nil {
		b.Fatal(err)
	}
	srv := llmtest.NewServer(b, script)
	home := shortTemp(b)
	repo := filepath.Join(home, "repo")
	for _, args := range [][]string{{"git", "init", "-q", repo},
		{"git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "--allow-empty", "-m", "initial"}} {
		if res, err := proc.Run(context.Background(), proc.Cmd{Args: args}); err != nil || res.ExitCode != 0 {
			b.Fatalf("%v: %v %s", args, err, res.Output)
		}
	}
	p, err := config.ResolvePaths(func(k string) string {
		if k == "NEURAPHAGE_HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		b.Fatal(err)
	}
	cfg := config.Default()
	cfg.Engines.Claude.Command = cli
	env := map[string]string{"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "sk-bench", "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	ctx, cancel := context.WithCancel(context.Background())
	done, ready := make(chan error, 1), make(chan struct{})
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Paths: p, Config: cfg, Version: "bench", Logger: slog.New(slog.DiscardHandler),
			Ready: func() { close(ready) }, Getenv: func(k string) string { return env[k] }})
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		b.Fatalf("daemon did not start: %v", err)
	}
	c := client.New(p.Socket)
	defer func() {
		c.Close()
		cancel()
		<-done
	}()
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		t, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: fmt.Sprintf("bench task %d: say done", i), Engine: "claude", Repo: repo})
		if err != nil {
			b.Fatal(err)
		}
		for {
			evs, err := c.Events(ctx, event.Query{Filter: event.Filter{TaskID: t.ID, Kinds: []string{string(event.KindTurnStarted)}}})
			if err != nil {
				b.Fatal(err)
			}
			if len(evs) > 0 {
				break
			}
			if time.Since(start) > 2*time.Minute {
				b.Fatalf("no first observation of %s after 2 minutes", t.ID)
			}
			time.Sleep(2 * time.Millisecond)
		}
		total += time.Since(start)
		b.StopTimer()
		for { // the task ends before the next starts
			d, err := c.GetTask(ctx, string(t.ID))
			if err != nil {
				b.Fatal(err)
			}
			if d.Task.Status.Terminal() || time.Since(start) > 2*time.Minute {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-observation")
}
