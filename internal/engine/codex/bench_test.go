package codex

import (
	"bytes"
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
	"github.com/neuraphage/neuraphage-go/internal/testkit/codexcli"
)

// benchEnv is the real CLI against the scripted model server.
func benchEnv(b *testing.B) (*Engine, *llmtest.Server, string) {
	b.Helper()
	cli := codexcli.CLI(b)
	srv := enginetest.Server(b, "bench.yaml", e2eScript)
	state := filepath.Join(b.TempDir(), "state")
	return New(Options{Command: cli, StateDir: state, BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-bench",
		Model: func(task.Task) string { return "gpt-llmtest" }}), srv, state
}

// BenchmarkFirstObservation: from the start of a run (the executor's
// dispatch of `task new`) to the first observation of the real CLI's
// reply (agent.turn.started), against a local model server: the CLI's
// start, initialize, thread/start, turn/start and the first model call.
func BenchmarkFirstObservation(b *testing.B) {
	eng, _, _ := benchEnv(b)
	var total time.Duration
	for i := range b.N {
		tk := task.Task{ID: task.ID(fmt.Sprintf("t-first%d", i)), Description: "make task: create made.txt"}
		h := enginetest.NewHost(tk)
		dir := enginetest.GitRepo(b)
		start := time.Now()
		done := make(chan engine.Outcome, 1)
		go func() { done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: dir, Host: h}) }()
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
// signals Arrivals) to the CLI having it: turn/steer accepted (the receipt
// is committed on its answer), while the turn's model call is in flight.
func BenchmarkInjectLatency(b *testing.B) {
	eng, srv, _ := benchEnv(b)
	release := srv.Hold("hold", 0)
	defer release()
	tk := task.Task{ID: "t-latency", Description: "hold task: steered many times"}
	h := enginetest.NewHost(tk)
	done := make(chan engine.Outcome, 1)
	go func() {
		done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: enginetest.GitRepo(b), Host: h})
	}()
	if err := srv.WaitRequests(context.Background(), 1); err != nil {
		b.Fatal(err)
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
	release()
	<-done
}

// BenchmarkDaemonMemoryPerTask: the daemon's side of a running Codex task
// (its run, the reader of the CLI's output, the pipes' buffers), measured
// as the Go heap and goroutines of 4 tasks whose model call is in flight,
// beside the CLI's own resident memory (its launcher and the app-server).
func BenchmarkDaemonMemoryPerTask(b *testing.B) {
	eng, srv, state := benchEnv(b)
	const n = 4
	for range b.N {
		release := srv.Hold("hold", 0)
		base := len(srv.Requests())
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		var dones []chan engine.Outcome
		for i := range n {
			tk := task.Task{ID: task.ID(fmt.Sprintf("t-mem%d-%d", i, time.Now().UnixNano())), Description: "hold task: held"}
			h := enginetest.NewHost(tk)
			dir := enginetest.GitRepo(b)
			done := make(chan engine.Outcome, 1)
			go func() { done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: dir, Host: h}) }()
			dones = append(dones, done)
		}
		if err := srv.WaitRequests(context.Background(), base+n); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var during runtime.MemStats
		runtime.ReadMemStats(&during)
		b.ReportMetric(float64(int64(during.HeapAlloc)-int64(before.HeapAlloc))/n/1024, "KiB-heap/task")
		b.ReportMetric(float64(runtime.NumGoroutine()-g0)/n, "goroutines/task")
		b.ReportMetric(float64(cliRSS(state))/n/1024, "MiB-CLI-RSS/task")
		release()
		for _, d := range dones {
			<-d
		}
	}
}

// cliRSS is the resident memory in KiB of the processes whose environment
// names a CODEX_HOME under state.
func cliRSS(state string) int64 {
	var total int64
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !bytes.Contains(env, []byte("CODEX_HOME="+state)) {
			continue
		}
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, line := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				total += kb
			}
		}
	}
	return total
}
