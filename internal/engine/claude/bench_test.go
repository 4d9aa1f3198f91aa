package claude

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit/claudecli"
)

// benchEnv is the real CLI against the scripted model server.
func benchEnv(b *testing.B) (*Engine, *llmtest.Server) {
	b.Helper()
	cli := claudecli.CLI(b)
	srv := enginetest.Server(b, "bench.yaml", e2eScript)
	return New(Options{Command: cli, StateDir: filepath.Join(b.TempDir(), "state"), BaseURL: srv.URL(), APIKey: "sk-bench",
		AllowedTools: []string{"Bash"}, Grace: time.Second}), srv
}

// BenchmarkFirstObservation: from the start of a run (the executor's
// dispatch of `task new`) to the first observation of the real CLI's
// reply (agent.turn.started), against a local model server.
func BenchmarkFirstObservation(b *testing.B) {
	eng, _ := benchEnv(b)
	var total time.Duration
	for i := range b.N {
		tk := task.Task{ID: task.ID(fmt.Sprintf("t-first%d", i)), Description: "make task: create made.txt"}
		h := enginetest.NewHost(tk)
		start := time.Now()
		done := make(chan engine.Outcome, 1)
		go func() {
			done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: enginetest.GitRepo(b), Host: h})
		}()
		for !h.Has(event.KindTurnStarted, nil) {
			select {
			case o := <-done:
				b.Fatalf("the run ended before its first observation: %+v", o)
			case <-time.After(time.Millisecond):
			}
		}
		total += time.Since(start)
		<-done
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-observation")
}

// BenchmarkInjectLatency: from Inject (a message stored; the executor
// signals Arrivals) to the line on the real CLI's stdin (the receipt is
// committed once the pipe took it), while one of its tools runs.
func BenchmarkInjectLatency(b *testing.B) {
	eng, _ := benchEnv(b)
	tk := task.Task{ID: "t-latency", Description: "wait task: wait for the flag"}
	h := enginetest.NewHost(tk)
	dir := enginetest.GitRepo(b)
	done := make(chan engine.Outcome, 1)
	go func() { done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: dir, Host: h}) }()
	for !h.Has(event.KindToolCall, nil) {
		time.Sleep(time.Millisecond)
	}
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		id := h.Inject(inject.Message, fmt.Sprintf("note %d", i), false)
		for !h.Delivered(id) {
			time.Sleep(50 * time.Microsecond)
		}
		total += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/inject")
	if err := os.WriteFile(filepath.Join(dir, "go.flag"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	<-done
}

// BenchmarkDaemonMemoryPerTask: the daemon's side of a running Claude task
// (its run, the reader of the CLI's output, the pipes' buffers), measured
// as the Go heap and goroutines of 4 tasks waiting in a tool call; beside
// it the CLI's own memory, the resident set of the processes running in
// the task's directory (the CLI and its waiting tool).
func BenchmarkDaemonMemoryPerTask(b *testing.B) {
	eng, _ := benchEnv(b)
	const n = 4
	for range b.N {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		var dirs []string
		var dones []chan engine.Outcome
		var hosts []*enginetest.Host
		for i := range n {
			tk := task.Task{ID: task.ID(fmt.Sprintf("t-mem%d", i)), Description: "wait task: wait for the flag"}
			h := enginetest.NewHost(tk)
			dir := enginetest.GitRepo(b)
			done := make(chan engine.Outcome, 1)
			go func() { done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: dir, Host: h}) }()
			dirs, dones, hosts = append(dirs, dir), append(dones, done), append(hosts, h)
		}
		for _, h := range hosts {
			for !h.Has(event.KindToolCall, nil) {
				time.Sleep(time.Millisecond)
			}
		}
		runtime.GC()
		var during runtime.MemStats
		runtime.ReadMemStats(&during)
		b.ReportMetric(float64(int64(during.HeapAlloc)-int64(before.HeapAlloc))/n/1024, "KiB-heap/task")
		b.ReportMetric(float64(runtime.NumGoroutine()-g0)/n, "goroutines/task")
		var rss int64
		for _, dir := range dirs {
			rss += rssIn(b, dir)
		}
		b.ReportMetric(float64(rss)/n/1024, "MiB-cli-rss/task")
		for i, dir := range dirs {
			if err := os.WriteFile(filepath.Join(dir, "go.flag"), nil, 0o644); err != nil {
				b.Fatal(err)
			}
			<-dones[i]
		}
	}
}

// rssIn sums the resident set (KiB) of this user's processes whose working
// directory is dir.
func rssIn(b *testing.B, dir string) int64 {
	b.Helper()
	pids, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		b.Fatal(err)
	}
	var kib int64
	for _, p := range pids {
		if cwd, err := os.Readlink(filepath.Join(p, "cwd")); err != nil || cwd != dir {
			continue
		}
		status, err := os.ReadFile(filepath.Join(p, "status"))
		if err != nil {
			continue // it ended
		}
		for l := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				kib += n
			}
		}
	}
	if kib == 0 {
		b.Fatalf("no process runs in %s", dir)
	}
	return kib
}
