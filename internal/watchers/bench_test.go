package watchers

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// benchService runs a service on w (no rate limit) until the benchmark
// ends.
func benchService(b *testing.B, w *world) *Service {
	s := New(Options{Config: Config{Enabled: true, Settle: time.Hour, Timeout: time.Minute},
		Store: w, Sessions: w, Bus: w.bus, Actions: w,
		Models: func(llm.Tier) (llm.Client, string, error) { return w, "m", nil }})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Run(ctx) })
	b.Cleanup(func() { cancel(); wg.Wait() })
	// The loop is live once it has seen an event published after Run.
	w.addTask("t-warm")
	for s.Stats().Running == false {
		runtime.Gosched()
	}
	return s
}

// BenchmarkBreakpointToQueued is the machinery's latency from a task's
// breakpoint (a tool's file change) to the interjection in its queue, the
// model answering at once: the bus, the loop, the job, the door.
func BenchmarkBreakpointToQueued(b *testing.B) {
	w := newWorld()
	w.injected = make(chan struct{}, 1)
	w.lean = true
	w.reply = func(string) string { return "[INTERJECT]\nurgent: true\ncontent: stop\n[/INTERJECT]" }
	w.addTask("t-1")
	s := benchService(b, w)
	if _, err := s.Add(context.Background(), Spec{Task: "t-1", Role: "security"}); err != nil {
		b.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // the session reaches the loop
	b.ResetTimer()
	for b.Loop() {
		w.emit("t-1", event.FileChanged{Path: "auth.go", Op: "modified"})
		<-w.injected
	}
}

// BenchmarkHundredSessions: 100 sessions, each on one of 100 running tasks;
// one op is a round in which every task reaches a breakpoint and every
// session evaluates. It reports the service's heap and the time a round
// takes (CPU of the loop and the jobs; the model answers at once).
func BenchmarkHundredSessions(b *testing.B) {
	const n = 100
	w := newWorld()
	w.evaluated = make(chan struct{}, n)
	w.lean = true
	s := benchService(b, w)
	var ids []task.ID
	for i := range n {
		id := task.ID(fmt.Sprintf("t-%03d", i))
		ids = append(ids, id)
		w.addTask(id)
		if _, err := s.Add(context.Background(), Spec{Task: string(id), Role: "security"}); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		for _, id := range ids {
			w.emit(id, event.Text{Text: "editing the handler"})
			w.emit(id, event.FileChanged{Path: "auth.go", Op: "modified"})
		}
		for range n {
			<-w.evaluated
		}
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapInuse)/1e6, "heap-MB")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n, "µs/evaluation")
}
