package limit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/limit"
)

// slow is a fake llm.Client whose calls take a second and report usage.
type slow struct {
	inFlight, peak atomic.Int32
	usage          llm.Usage
	err            error
}

func (s *slow) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return s.Stream(ctx, req, nil)
}

func (s *slow) Stream(context.Context, *llm.Request, func(llm.Event)) (*llm.Response, error) {
	n := s.inFlight.Add(1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(time.Second)
	s.inFlight.Add(-1)
	if s.err != nil {
		return nil, s.err
	}
	return &llm.Response{Usage: s.usage}, nil
}

func run(t *testing.T, c llm.Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := c.Stream(t.Context(), &llm.Request{}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestMaxConcurrentSharedAcrossClients(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := &slow{}
		lim := limit.NewLimiter(limit.Limits{MaxConcurrent: 3})
		a, b := limit.New(fake, lim), limit.New(fake, lim)
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { run(t, a, 25) })
		wg.Go(func() { run(t, b, 25) })
		wg.Wait()
		if p := fake.peak.Load(); p != 3 {
			t.Errorf("peak in flight = %d, want 3", p)
		}
		if d := time.Since(start); d != 17*time.Second {
			t.Errorf("50 one-second calls, 3 at a time, took %v; want 17s", d)
		}
	})
}

func TestRequestsPerMinute(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := &slow{}
		c := limit.New(fake, limit.NewLimiter(limit.Limits{RequestsPerMinute: 60}))
		start := time.Now()
		run(t, c, 90) // a full bucket of 60 at once, then one per second
		if d := time.Since(start); d < 30*time.Second || d > 32*time.Second {
			t.Errorf("90 requests at 60/min with a 60 burst took %v, want about 31s", d)
		}
	})
}

func TestTokensPerMinuteChargesActualUsage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Each call is estimated at 1 token but really uses 30000.
		fake := &slow{usage: llm.Usage{InputTokens: 20000, OutputTokens: 10000}}
		c := limit.New(fake, limit.NewLimiter(limit.Limits{TokensPerMinute: 60000}))
		start := time.Now()
		for range 4 {
			if _, err := c.Complete(t.Context(), &llm.Request{}); err != nil {
				t.Fatal(err)
			}
		}
		// Usage is charged after each call, so the bucket goes into debt:
		// calls 1-3 run back to back from the 60k burst, leaving about 29k
		// of debt, and call 4 waits ~29s for it to be repaid at 1k tokens
		// a second.
		if d := time.Since(start); d < 30*time.Second || d > 34*time.Second {
			t.Errorf("4 calls of 30k tokens took %v, want about 33s", d)
		}
	})
}

func TestRateLimitPausesEveryone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		lim := limit.NewLimiter(limit.Limits{})
		limited := limit.New(&slow{err: &llm.Error{Class: llm.ClassRateLimit, RetryAfter: 20 * time.Second}}, lim)
		other := limit.New(&slow{}, lim)
		if _, err := limited.Complete(t.Context(), &llm.Request{}); llm.ClassOf(err) != llm.ClassRateLimit {
			t.Fatalf("err = %v, want the rate limit", err)
		}
		start := time.Now()
		if _, err := other.Complete(t.Context(), &llm.Request{}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 21*time.Second {
			t.Errorf("1s call after a 429 with Retry-After 20s took %v, want 21s", d)
		}
	})
}

func TestCancelWhileWaiting(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		lim := limit.NewLimiter(limit.Limits{MaxConcurrent: 1})
		c := limit.New(&slow{}, lim)
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { _, _ = c.Complete(t.Context(), &llm.Request{}) })
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := c.Complete(ctx, &llm.Request{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded while waiting for capacity", err)
		}
	})
}

func TestEstimate(t *testing.T) {
	t.Parallel()
	req := &llm.Request{System: strings.Repeat("s", 400), Messages: []llm.Message{llm.UserText(strings.Repeat("u", 400))}}
	if got := limit.Estimate(req); got != 201 {
		t.Errorf("Estimate = %d, want 201", got)
	}
}
