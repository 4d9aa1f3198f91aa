package gemini

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
	"github.com/neuraphage/neuraphage-go/internal/testkit/geminicli"
)

// benchScript drives the real CLI: "make" tasks write a file and finish;
// "wait" tasks run a command that waits for a flag file, then finish; a
// message is answered at once.
const benchScript = `
conversations:
  - name: answered
    match: {user: "(?i)wait task", after: "note-"}
    steps:
      - text: "Noted."
  - name: make
    match: {user: "(?i)make task"}
    steps:
      - text: "I'll create the file."
        tool_calls:
          - {name: run_shell_command, input: {command: "echo hi > made.txt", description: "make file"}}
      - text: "Done: made.txt created."
  - name: wait
    match: {user: "(?i)wait task"}
    steps:
      - text: "Waiting for the flag."
        tool_calls:
          - {name: run_shell_command, input: {command: "while [ ! -f go.flag ]; do sleep 0.05; done; echo flagged", description: "wait"}}
      - text: "Done waiting."
default:
  steps:
    - text: "ok"
`

// benchEnv is the real CLI against the scripted model server.
func benchEnv(b *testing.B) (*Engine, *llmtest.Server) {
	b.Helper()
	cli := geminicli.CLI(b)
	srv := enginetest.Server(b, "bench.yaml", benchScript)
	return New(Options{Command: cli, StateDir: filepath.Join(b.TempDir(), "state"), BaseURL: srv.GeminiBaseURL(), APIKey: "gm-bench",
		Model: func(task.Task) string { return "gemini-2.5-flash" }}), srv
}

func waitEvent(b *testing.B, h *enginetest.Host, k event.Kind, done <-chan engine.Outcome) {
	b.Helper()
	for !h.Has(k, nil) {
		select {
		case o := <-done:
			b.Fatalf("the run ended before %s: %+v", k, o)
		case <-time.After(time.Millisecond):
		}
	}
}

// BenchmarkFirstObservation: from the start of a run to the first
// observation of the real CLI's reply (agent.turn.started), against a
// local model server: the CLI's start-up is in it.
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
		waitEvent(b, h, event.KindTurnStarted, done)
		total += time.Since(start)
		<-done
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-observation")
}

// BenchmarkInjectLatency: from Inject to the model request carrying the
// message (the CLI has it and sent it on), for an urgent message while a
// tool runs (the turn's process ended, the next one started with it) and
// for a message waiting at a turn's end (measured from the turn's result).
func BenchmarkInjectLatency(b *testing.B) {
	eng, srv := benchEnv(b)
	var urgent, next time.Duration
	for i := range b.N {
		for _, isUrgent := range []bool{true, false} {
			tk := task.Task{ID: task.ID(fmt.Sprintf("t-inj%d%v", i, isUrgent)), Description: "wait task: wait for the flag"}
			h := enginetest.NewHost(tk)
			dir := enginetest.GitRepo(b)
			done := make(chan engine.Outcome, 1)
			go func() { done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: dir, Host: h}) }()
			waitEvent(b, h, event.KindToolCall, done)
			n := len(srv.Requests())
			start := time.Now()
			h.Inject(inject.Message, fmt.Sprintf("note-%d", i), isUrgent)
			if !isUrgent {
				if err := os.WriteFile(filepath.Join(dir, "go.flag"), nil, 0o644); err != nil {
					b.Fatal(err)
				}
				waitEvent(b, h, event.KindUsage, done)
				start = time.Now()
				n = len(srv.Requests())
			}
			if err := srv.WaitRequests(context.Background(), n+1); err != nil {
				b.Fatal(err)
			}
			if isUrgent {
				urgent += time.Since(start)
			} else {
				next += time.Since(start)
			}
			if o := <-done; o.Status != engine.Completed {
				b.Fatalf("outcome = %+v", o)
			}
		}
	}
	b.ReportMetric(float64(urgent.Milliseconds())/float64(b.N), "ms/urgent-inject")
	b.ReportMetric(float64(next.Milliseconds())/float64(b.N), "ms/next-turn-inject")
}

// BenchmarkMemoryPerTask: the daemon's side of a running Gemini task (its
// run, the reader of the turn's output), as the Go heap and goroutines of
// 4 tasks waiting in a tool call, beside the CLI's own resident memory
// (its processes' VmRSS, found by the task's HOME).
func BenchmarkMemoryPerTask(b *testing.B) {
	eng, _ := benchEnv(b)
	const n = 4
	for it := range b.N {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		var dirs []string
		var dones []chan engine.Outcome
		var hosts []*enginetest.Host
		var homes []string
		for i := range n {
			tk := task.Task{ID: task.ID(fmt.Sprintf("t-mem%d-%d", it, i)), Description: "wait task: wait for the flag"}
			h := enginetest.NewHost(tk)
			dir := enginetest.GitRepo(b)
			done := make(chan engine.Outcome, 1)
			go func() { done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: dir, Host: h}) }()
			dirs, dones, hosts, homes = append(dirs, dir), append(dones, done), append(hosts, h), append(homes, eng.Home(tk.ID))
		}
		for i, h := range hosts {
			waitEvent(b, h, event.KindToolCall, dones[i])
		}
		runtime.GC()
		var during runtime.MemStats
		runtime.ReadMemStats(&during)
		b.ReportMetric(float64(int64(during.HeapAlloc)-int64(before.HeapAlloc))/n/1024, "KiB-heap/task")
		b.ReportMetric(float64(runtime.NumGoroutine()-g0)/n, "goroutines/task")
		rss := 0
		for _, home := range homes {
			rss += rssWithHome(home)
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

// rssWithHome sums the VmRSS (KiB) of the processes whose HOME is home.
func rssWithHome(home string) int {
	ents, _ := os.ReadDir("/proc")
	total := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte("\x00HOME="+home+"\x00")) && !bytes.HasPrefix(env, []byte("HOME="+home+"\x00")) {
			continue
		}
		status, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		for l := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				total += kb
			}
		}
	}
	return total
}
