package limit_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/limit"
)

// quick is a fake provider whose calls take a fixed model time.
type quick struct{ d time.Duration }

func (q quick) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return q.Stream(ctx, req, nil)
}

func (q quick) Stream(context.Context, *llm.Request, func(llm.Event)) (*llm.Response, error) {
	time.Sleep(q.d)
	return &llm.Response{}, nil
}

// BenchmarkTaskWaitUnderSessions: 100 tasks make 5 calls each through one
// provider limiter (16 in flight, 5ms model time) while 0 or 100 watcher
// sessions evaluate in a loop through the same limiter. One op is the 500
// task calls; it reports how long a task call waited for capacity.
func BenchmarkTaskWaitUnderSessions(b *testing.B) {
	for _, sessions := range []int{0, 100} {
		b.Run(map[int]string{0: "sessions=0", 100: "sessions=100"}[sessions], func(b *testing.B) {
			var waits []time.Duration
			for b.Loop() {
				waits = append(waits, taskWaits(sessions)...)
			}
			slices.Sort(waits)
			b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1e3, "p50-wait-ms")
			b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds())/1e3, "p99-wait-ms")
		})
	}
}

func taskWaits(sessions int) []time.Duration {
	const tasks, calls, model = 100, 5, 5 * time.Millisecond
	lim := limit.NewLimiter(limit.Limits{MaxConcurrent: 16})
	c := limit.New(quick{model}, lim)
	ctx, cancel := context.WithCancel(context.Background())
	var sess sync.WaitGroup
	for range sessions {
		sess.Go(func() {
			for ctx.Err() == nil {
				_, _ = c.Complete(limit.LowPriority(ctx), &llm.Request{})
			}
		})
	}
	var mu sync.Mutex
	var waits []time.Duration
	var wg sync.WaitGroup
	for range tasks {
		wg.Go(func() {
			for range calls {
				start := time.Now()
				if _, err := c.Complete(ctx, &llm.Request{}); err != nil {
					return
				}
				mu.Lock()
				waits = append(waits, max(0, time.Since(start)-model))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	cancel()
	sess.Wait()
	return waits
}
