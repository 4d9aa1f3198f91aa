package executor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/agent"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/llm/retry"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The benchmarks here run the whole runtime as the daemon does, minus the
// socket: the SQLite store (WAL, group commit) and the event bus, the
// executor, the native engine with the built-in tools, and the Anthropic
// provider streaming over real HTTP from the scripted model server: in this
// process for the injection benchmarks (their allocation counts include the
// server's), in a process of its own for BenchmarkTurn.
// Results and how to run them: docs/load.md.

// benchWait bounds every wait of a benchmark; reaching it means something is
// broken, not slow.
const benchWait = 30 * time.Second

// benchEnv is the runtime under benchmark.
type benchEnv struct {
	tb  testing.TB
	st  *sqlite.Store
	bus *event.Bus
	ctl creator
	ex  *Executor
	dir string
	// marks sees every request body the model server receives.
	marks *marker

	cancel context.CancelFunc
	done   chan error
}

// newBenchEnv wires the runtime to a scripted model server playing script,
// served in this process.
func newBenchEnv(tb testing.TB, script *llmtest.Script, maxConcurrent int) *benchEnv {
	tb.Helper()
	// The scripted server sits behind a handler that looks at each request
	// body first, so that a benchmark learns the moment a request carrying
	// its text arrives.
	srv := llmtest.NewServer(tb, script)
	marks := &marker{}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		marks.see(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		srv.ServeHTTP(w, r)
	}))
	tb.Cleanup(func() {
		front.CloseClientConnections()
		front.Close()
	})
	return newBenchEnvAt(tb, front.URL, marks, maxConcurrent)
}

// newBenchEnvAt wires the runtime to the model server at url.
func newBenchEnvAt(tb testing.TB, url string, marks *marker, maxConcurrent int) *benchEnv {
	tb.Helper()
	root := tb.TempDir()
	var bus *event.Bus
	st, err := sqlite.Open(context.Background(), filepath.Join(root, "db"), sqlite.Options{Publish: func(evs ...event.Event) { bus.Publish(evs...) }})
	if err != nil {
		tb.Fatal(err)
	}
	bus = event.NewBus(event.Options{Buffer: 1024}, 0)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	base, err := anthropic.New(anthropic.Options{BaseURL: url, APIKey: "bench", Model: "claude-sonnet-4-5", IdleTimeout: benchWait})
	if err != nil {
		tb.Fatal(err)
	}
	client := retry.New(base, retry.Policy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}, retry.Options{})
	native := agent.New(agent.Options{Model: func(task.Task) (llm.Client, string, error) { return client, "claude-sonnet-4-5", nil }})

	dir := filepath.Join(root, "repo")
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, body := range map[string]string{"README.md": "# bench\n", "src/main.go": "package main\n\nfunc main() {}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	e := &benchEnv{tb: tb, st: st, bus: bus, dir: dir, marks: marks,
		ctl: creator{st: st, engine: agent.Name}}
	e.ex = New(Options{Tasks: st, Runs: st, Bus: bus, Engines: []engine.Engine{native}, Logger: log,
		Config: Config{MaxConcurrent: maxConcurrent, MaxIterations: 1_000_000, ToolTimeout: 30 * time.Minute},
		// The daemon's lifecycle: each task's manifest from the default
		// policy, its progress followed and its timeouts timed.
		Manifest: func(ctx context.Context, t task.Task, env []string) lifecycle.Evaluation {
			return lifecycle.Evaluator{Policy: lifecycle.PolicyFrom(config.DefaultSandbox(), root, nil)}.Evaluate(ctx, t, env)
		}})
	tb.Cleanup(func() {
		e.stop()
		st.Close()
		bus.Close()
	})
	return e
}

func (e *benchEnv) start() {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan error, 1)
	go func() { e.done <- e.ex.Run(ctx) }()
}

func (e *benchEnv) stop() {
	if e.cancel == nil {
		return
	}
	e.cancel()
	if err := <-e.done; err != nil {
		e.tb.Errorf("executor Run: %v", err)
	}
	e.cancel = nil
}

func (e *benchEnv) create(desc string) task.Task {
	e.tb.Helper()
	tk, err := e.ctl.Create(context.Background(), task.Spec{Description: desc, Repo: e.dir})
	if err != nil {
		e.tb.Fatal(err)
	}
	return tk
}

// next returns the next event of sub that satisfies ok.
func (e *benchEnv) next(sub *event.Subscription, ok func(event.Event) bool) event.Event {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), benchWait)
	defer cancel()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			e.tb.Fatalf("waiting for an event: %v", err)
		}
		if ok(ev) {
			return ev
		}
	}
}

// idle waits until no run is left in the executor. A run's goroutine
// leaves the executor's table just after its outcome is stored, and no
// event marks that moment, so this polls.
func (e *benchEnv) idle() {
	e.tb.Helper()
	deadline := time.Now().Add(benchWait)
	for len(e.ex.Running()) > 0 {
		if time.Now().After(deadline) {
			e.tb.Fatalf("tasks still running: %v", e.ex.Running())
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// marker signals when a request body containing an expected text arrives.
type marker struct {
	mu   sync.Mutex
	want []byte
	hit  chan struct{}
}

// expect returns a channel closed when a body containing text arrives.
func (m *marker) expect(text string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.want, m.hit = []byte(text), make(chan struct{})
	return m.hit
}

func (m *marker) see(body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.want != nil && bytes.Contains(body, m.want) {
		close(m.hit)
		m.want = nil
	}
}

func call(name string, input map[string]any) llmtest.ToolCall {
	return llmtest.ToolCall{Name: name, Input: input}
}

// turns returns n steps that each call glob, the last complete_task instead.
func turns(n int) []llmtest.Step {
	steps := make([]llmtest.Step, n)
	for i := range steps {
		steps[i] = llmtest.Step{ToolCalls: []llmtest.ToolCall{call("glob", map[string]any{"pattern": "**/*"})}}
	}
	steps[n-1] = llmtest.Step{ToolCalls: []llmtest.ToolCall{call("complete_task", map[string]any{"summary": "done"})}}
	return steps
}

// percentiles reports the median and 95th percentile of ds, in milliseconds.
func percentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
}

// BenchmarkInjectionLatencyWaiting measures the wake path of a message to a
// task waiting for its user (it called ask_user): from Inject to the model
// server receiving the request that carries the message. In between: the
// message is stored, the task moves waiting → queued, the scheduler
// dispatches it, the engine loads the stored conversation, delivers the
// message at the boundary (commit with receipt) and calls the model.
func BenchmarkInjectionLatencyWaiting(b *testing.B) {
	e := newBenchEnv(b, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{
		{Text: "One question first.", ToolCalls: []llmtest.ToolCall{call("ask_user", map[string]any{"question": "Which file?"})}},
		{ToolCalls: []llmtest.ToolCall{call("complete_task", map[string]any{"summary": "answered"})}},
	}}}, 4)
	sub := e.bus.Subscribe(event.Filter{Kinds: []string{string(event.KindTaskStatus)}})
	defer sub.Close()
	e.start()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		tk := e.create(fmt.Sprintf("waiting task %d", i))
		e.next(sub, func(ev event.Event) bool {
			p, ok := ev.Payload.(event.TaskStatus)
			return ok && ev.TaskID == tk.ID && p.To == task.Waiting
		})
		// Measure the wake path, not a message racing the end of the run.
		e.idle()
		text := fmt.Sprintf("answer-%d-main.go", i)
		hit := e.marks.expect(text)
		b.StartTimer()
		start := time.Now()
		if _, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Message, Source: "user", Text: text}); err != nil {
			b.Fatal(err)
		}
		select {
		case <-hit:
		case <-time.After(benchWait):
			b.Fatalf("the model never saw the message to task %s", tk.ID)
		}
		lat = append(lat, time.Since(start))
		b.StopTimer()
	}
	percentiles(b, lat)
}

// BenchmarkInjectionLatencyRunning measures delivery to a task that runs
// turns back to back (no model latency, a glob per turn): from Inject to
// the receipt (agent.delivered) on the bus, i.e. until the message is part
// of the stored conversation at the next turn boundary.
func BenchmarkInjectionLatencyRunning(b *testing.B) {
	e := newBenchEnv(b, &llmtest.Script{Default: &llmtest.Conversation{Steps: turns(1000)}}, 4)
	e.start()
	lat := make([]time.Duration, 0, b.N)
	var turnMs float64
	b.ReportAllocs()
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		tk := e.create(fmt.Sprintf("busy task %d", i))
		sub := e.bus.Subscribe(event.Filter{TaskID: tk.ID, Kinds: []string{string(event.KindToolResult), string(event.KindDelivered)}})
		// Wait until turns are flowing: two tool results, timed for the
		// turn length reported alongside.
		first := e.next(sub, func(ev event.Event) bool { return ev.Kind == event.KindToolResult })
		second := e.next(sub, func(ev event.Event) bool { return ev.Kind == event.KindToolResult })
		turnMs += float64(second.Time.Sub(first.Time).Microseconds()) / 1000
		b.StartTimer()
		start := time.Now()
		inj, err := e.ex.Inject(context.Background(), inject.Injection{TaskID: tk.ID, Kind: inject.Message, Source: "user", Text: fmt.Sprintf("note %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		e.next(sub, func(ev event.Event) bool {
			d, ok := ev.Payload.(event.Delivered)
			return ok && slices.Contains(d.InjectionIDs, inj.ID)
		})
		lat = append(lat, time.Since(start))
		b.StopTimer()
		sub.Close()
		if _, err := e.ex.Cancel(context.Background(), tk.ID, "benchmark op done"); err != nil {
			b.Fatal(err)
		}
		e.idle()
	}
	percentiles(b, lat)
	b.ReportMetric(turnMs/float64(b.N), "turn-ms")
}

// turnTaskLen is how many turns each task of BenchmarkTurn runs, so that
// every op sees a short conversation whatever b.N is.
const turnTaskLen = 8

// BenchmarkTurn measures full native turns: a streamed model call to the
// scripted server (no latency), one tool (glob; complete_task on a task's
// last turn) and the checkpoints that store reply and result. The ops are
// spread over tasks of turnTaskLen turns run by the executor, so task start
// and finish are part of the cost (one in turnTaskLen turns). With
// concurrent=16 that many tasks run at once and turns/s is throughput. The
// model server runs in a child process, so allocs/op and cpu-µs/turn (CPU
// time, which waiting for a CPU on a loaded machine does not inflate) are
// the runtime's side of a turn only.
func BenchmarkTurn(b *testing.B) {
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("concurrent=%d", conc), func(b *testing.B) {
			full, rest := b.N/turnTaskLen, b.N%turnTaskLen
			// The model server is a process of its own: what is measured
			// is the runtime's side of each call.
			e := newBenchEnvAt(b, modelProcess(b, turnTaskLen, rest), &marker{}, conc)
			ids := map[task.ID]bool{}
			for i := range full {
				ids[e.create(fmt.Sprintf("full task %d", i)).ID] = true
			}
			if rest > 0 {
				ids[e.create("short task").ID] = true
			}
			sub := e.bus.Subscribe(event.Filter{Kinds: []string{string(event.KindTaskStatus)}})
			defer sub.Close()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			cpu0, cpuOK := cpuTime()
			e.start()
			for left := len(ids); left > 0; left-- {
				ev := e.next(sub, func(ev event.Event) bool {
					p, ok := ev.Payload.(event.TaskStatus)
					return ok && ids[ev.TaskID] && (p.To.Terminal() || p.To == task.Paused || p.To == task.Waiting)
				})
				if p := ev.Payload.(event.TaskStatus); p.To != task.Completed {
					b.Fatalf("task %s ended %s: %s", ev.TaskID, p.To, p.Reason)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
			if cpu1, ok := cpuTime(); ok && cpuOK {
				// The process's CPU, on all threads: the runtime's only,
				// the scripted server running in its own process.
				b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/turn")
			}
			var calls int
			for id := range ids {
				tk, err := e.st.GetTask(context.Background(), id)
				if err != nil {
					b.Fatal(err)
				}
				calls += tk.Usage.Iterations
			}
			if calls != b.N {
				b.Fatalf("%d model calls for %d turns", calls, b.N)
			}
		})
	}
}
