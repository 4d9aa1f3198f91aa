package limit_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/limit"
)

// served is a fake provider recording the order in which calls reached it
// (by the request's System text); each call takes a second.
type served struct {
	mu    sync.Mutex
	order []string
}

func (s *served) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return s.Stream(ctx, req, nil)
}

func (s *served) Stream(_ context.Context, req *llm.Request, _ func(llm.Event)) (*llm.Response, error) {
	s.mu.Lock()
	s.order = append(s.order, req.System)
	s.mu.Unlock()
	time.Sleep(time.Second)
	return &llm.Response{}, nil
}

// TestTaskCallServedBeforeQueuedSessionCalls: with the provider's capacity
// taken, three watcher-session calls queue, then a task's call; the task's
// call is served first, whichever limit holds them back.
func TestTaskCallServedBeforeQueuedSessionCalls(t *testing.T) {
	t.Parallel()
	for name, l := range map[string]limit.Limits{
		"concurrency":         {MaxConcurrent: 1},
		"requests per minute": {RequestsPerMinute: 1},
		"tokens per minute":   {TokensPerMinute: 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				fake := &served{}
				c := limit.New(fake, limit.NewLimiter(l))
				call := func(ctx context.Context, label string) {
					if _, err := c.Complete(ctx, &llm.Request{System: label}); err != nil {
						t.Error(err)
					}
				}
				var wg sync.WaitGroup
				wg.Go(func() { call(t.Context(), "first") })
				synctest.Wait() // the first call holds the capacity
				for _, s := range []string{"session-1", "session-2", "session-3"} {
					wg.Go(func() { call(limit.LowPriority(t.Context()), s) })
				}
				synctest.Wait() // the sessions' calls are queued
				wg.Go(func() { call(t.Context(), "task") })
				wg.Wait()
				if len(fake.order) != 5 || fake.order[0] != "first" || fake.order[1] != "task" {
					t.Errorf("served in order %v, want first, then task, then the sessions", fake.order)
				}
				if !slices.Contains(fake.order, "session-3") {
					t.Errorf("served %v: a session's call was never served", fake.order)
				}
			})
		})
	}
}

// TestLowPriorityServedWhenNothingWaits: a session's call alone is not held
// back.
func TestLowPriorityServedWhenNothingWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := limit.New(&served{}, limit.NewLimiter(limit.Limits{MaxConcurrent: 1, RequestsPerMinute: 60, TokensPerMinute: 1000}))
		start := time.Now()
		if _, err := c.Complete(limit.LowPriority(t.Context()), &llm.Request{}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("a lone low-priority call took %v, want the 1s of the call", d)
		}
	})
}

// TestLowPriorityCancelWhileYielding: a session's call standing back for a
// task's call returns when its context ends.
func TestLowPriorityCancelWhileYielding(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := limit.New(&served{}, limit.NewLimiter(limit.Limits{MaxConcurrent: 1}))
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { _, _ = c.Complete(t.Context(), &llm.Request{}) })
		synctest.Wait()
		wg.Go(func() { _, _ = c.Complete(t.Context(), &llm.Request{}) }) // a task waits
		synctest.Wait()
		ctx, cancel := context.WithTimeout(limit.LowPriority(t.Context()), 100*time.Millisecond)
		defer cancel()
		if _, err := c.Complete(ctx, &llm.Request{}); err == nil || ctx.Err() == nil {
			t.Fatalf("err = %v, want the deadline while standing back", err)
		}
	})
}
