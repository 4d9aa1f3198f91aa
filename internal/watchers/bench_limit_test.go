package watchers

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/limit"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// modelTime makes every call of next take d, as a provider's would.
type modelTime struct {
	next llm.Client
	d    time.Duration
}

func (m modelTime) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	time.Sleep(m.d)
	return m.next.Complete(ctx, req)
}

func (m modelTime) Stream(ctx context.Context, req *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	time.Sleep(m.d)
	return m.next.Stream(ctx, req, h)
}

// BenchmarkSharedLimit: 100 running tasks, each making 5 model calls a
// round through one provider limiter (16 calls in flight, 5ms of model
// time each) and reaching a breakpoint, with 0 or 100 watcher sessions
// (one per task) whose evaluations go through the same limiter. One op is
// a round. It reports how long the tasks' calls waited for capacity, the
// process's CPU time a round and the heap in use.
func BenchmarkSharedLimit(b *testing.B) {
	for _, sessions := range []int{0, 100} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) { sharedLimit(b, sessions) })
	}
}

func sharedLimit(b *testing.B, sessions int) {
	const n, calls, model = 100, 5, 5 * time.Millisecond
	w := newWorld()
	w.evaluated = make(chan struct{}, n)
	w.lean = true
	lim := limit.NewLimiter(limit.Limits{MaxConcurrent: 16})
	taskModel := limit.New(modelTime{w, model}, lim)
	s := New(Options{Config: Config{Enabled: true, Settle: time.Hour, Timeout: time.Minute},
		Store: w, Sessions: w, Bus: w.bus, Actions: w,
		Models: func(llm.Tier) (llm.Client, string, error) { return limit.New(modelTime{w, model}, lim), "m", nil }})
	ctx, cancel := context.WithCancel(context.Background())
	var run sync.WaitGroup
	run.Go(func() { _ = s.Run(ctx) })
	defer func() { cancel(); run.Wait() }()
	w.addTask("t-warm")
	for !s.Stats().Running {
		runtime.Gosched()
	}
	var ids []task.ID
	for i := range n {
		id := task.ID(fmt.Sprintf("t-%03d", i))
		ids = append(ids, id)
		w.addTask(id)
		if i < sessions {
			if _, err := s.Add(ctx, Spec{Task: string(id), Role: "security"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	time.Sleep(50 * time.Millisecond) // the sessions reach the loop
	var mu sync.Mutex
	var waits []time.Duration
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				w.emit(id, event.Text{Text: "editing the handler"})
				w.emit(id, event.FileChanged{Path: "auth.go", Op: "modified"})
				for range calls {
					start := time.Now()
					if _, err := taskModel.Complete(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("task")}}); err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					waits = append(waits, max(0, time.Since(start)-model))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for range sessions {
			<-w.evaluated
		}
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	slices.Sort(waits)
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1e3, "task-p50-wait-ms")
	b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds())/1e3, "task-p99-wait-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/round")
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "heap-MB")
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
