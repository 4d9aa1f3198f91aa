package clienttest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/llm/retry"
)

// waits records the retry decorator's sleeps and returns at once.
type waits struct {
	mu     sync.Mutex
	d      []time.Duration
	errors []error
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) onRetry(r retry.Retry) {
	w.mu.Lock()
	w.errors = append(w.errors, r.Err)
	w.mu.Unlock()
}

func withRetry(c llm.Client, w *waits) llm.Client {
	return retry.New(c, retry.Policy{MaxAttempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second},
		retry.Options{Sleep: w.sleep, OnRetry: w.onRetry, Rand: func() float64 { return 0.5 }})
}

const faultText = "The answer arrives in one piece after the retry."

func (s suite) retryFaults(t *testing.T) {
	for _, tc := range []struct {
		fault      llmtest.Fault
		minWait    time.Duration
		streamOnly bool
	}{
		{fault: llmtest.Fault{Kind: llmtest.FaultRateLimit, RetryAfterSecs: 2}, minWait: 2 * time.Second},
		{fault: llmtest.Fault{Kind: llmtest.FaultRateLimit}},
		{fault: llmtest.Fault{Kind: llmtest.FaultOverloaded, Times: 2}},
		{fault: llmtest.Fault{Kind: llmtest.FaultServerError}},
		{fault: llmtest.Fault{Kind: llmtest.FaultReset, AfterChunks: 3}},
		{fault: llmtest.Fault{Kind: llmtest.FaultReset, Times: 2}},
		{fault: llmtest.Fault{Kind: llmtest.FaultStreamError, AfterChunks: 2}},
		// A cleanly ended but incomplete stream is a network failure; a
		// truncated whole body is malformed (see malformed).
		{fault: llmtest.Fault{Kind: llmtest.FaultTruncate, AfterChunks: 2}, streamOnly: true},
	} {
		for _, stream := range []bool{true, false} {
			if tc.streamOnly && !stream {
				continue
			}
			name := fmt.Sprintf("%s/times=%d/retry_after=%d/stream=%t", tc.fault.Kind, tc.fault.Times, tc.fault.RetryAfterSecs, stream)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				f := tc.fault
				srv, c := s.start(t, oneStep(llmtest.Step{Text: faultText, ChunkSize: 4, Fault: &f}), 0)
				var w waits
				c = withRetry(c, &w)
				var rec recorder
				var resp *llm.Response
				var err error
				if stream {
					resp, err = c.Stream(ctxFor(t), ask("retry me"), rec.handle)
				} else {
					resp, err = c.Complete(ctxFor(t), ask("retry me"))
				}
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				attempts := max(f.Times, 1) + 1
				if resp.Message.Text() != faultText || resp.Attempts != attempts {
					t.Errorf("response = %q after %d attempts, want %q after %d", resp.Message.Text(), resp.Attempts, faultText, attempts)
				}
				if stream && rec.text() != faultText {
					t.Errorf("streamed text after resets = %q, want %q", rec.text(), faultText)
				}
				if n := len(srv.Requests()); n != attempts {
					t.Errorf("server saw %d requests, want %d", n, attempts)
				}
				if len(w.d) != attempts-1 {
					t.Fatalf("retry slept %d times, want %d", len(w.d), attempts-1)
				}
				for i, err := range w.errors {
					if !llm.IsRetryable(err) {
						t.Errorf("retry %d was for an unretryable error: %v", i, err)
					}
				}
				if w.d[0] < tc.minWait {
					t.Errorf("first wait %v, want at least the Retry-After %v", w.d[0], tc.minWait)
				}
				if stream && f.AfterChunks > 0 && rec.count(llm.EventReset) != 1 {
					t.Errorf("got %d reset events after partial output, want 1", rec.count(llm.EventReset))
				}
			})
		}
	}
}

func (s suite) nonRetryableFaults(t *testing.T) {
	for _, tc := range []struct {
		kind llmtest.FaultKind
		want llm.Class
	}{
		{llmtest.FaultContextTooLong, llm.ClassContextTooLong},
		{llmtest.FaultAuth, llm.ClassAuth},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			srv, c := s.start(t, oneStep(llmtest.Step{Text: "never", Fault: &llmtest.Fault{Kind: tc.kind, Always: true}}), 0)
			var w waits
			c = withRetry(c, &w)
			_, err := c.Stream(ctxFor(t), ask("fail"), nil)
			if got := llm.ClassOf(err); got != tc.want {
				t.Fatalf("class = %v (%v), want %v", got, err, tc.want)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1 (no retry)", n)
			}
		})
	}
}

func (s suite) malformed(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%t", stream), func(t *testing.T) {
			t.Parallel()
			_, c := s.start(t, oneStep(llmtest.Step{Text: "partial then garbage", ChunkSize: 4,
				Fault: &llmtest.Fault{Kind: llmtest.FaultMalformed, Always: true, AfterChunks: 2}}), 0)
			var err error
			if stream {
				_, err = c.Stream(ctxFor(t), ask("break"), nil)
			} else {
				_, err = c.Complete(ctxFor(t), ask("break"))
			}
			if got := llm.ClassOf(err); got != llm.ClassMalformed {
				t.Fatalf("class = %v (%v), want malformed", got, err)
			}
		})
	}
}

func (s suite) cancelMidStream(t *testing.T) {
	_, c := s.start(t, oneStep(llmtest.Step{Text: "a long reply that is streamed slowly enough to cancel", ChunkSize: 2, ChunkDelayMs: 20}), 0)
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	returned := false
	_, err := c.Stream(ctx, ask("cancel me"), func(ev llm.Event) {
		if returned {
			t.Error("handler called after Stream returned")
		}
		cancel()
	})
	returned = true
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream after cancel = %v, want context.Canceled", err)
	}
}

func (s suite) stalled(t *testing.T) {
	_, c := s.start(t, oneStep(llmtest.Step{Text: "starts then stalls", ChunkSize: 4,
		Fault: &llmtest.Fault{Kind: llmtest.FaultStall, Always: true}}), 150*time.Millisecond)
	var rec recorder
	_, err := c.Stream(ctxFor(t), ask("stall"), rec.handle)
	if got := llm.ClassOf(err); got != llm.ClassTimeout {
		t.Fatalf("class = %v (%v), want timeout", got, err)
	}
	if rec.count(llm.EventText) == 0 {
		t.Errorf("no text before the stall, want the partial output")
	}
	if rec.count(llm.EventToolCall) != 0 {
		t.Errorf("tool call events from a failed stream")
	}
	// Without streaming there is no idle timer: the caller's deadline ends it.
	ctx, cancel := context.WithTimeout(ctxFor(t), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Complete(ctx, ask("stall")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Complete on a stalled server = %v, want DeadlineExceeded", err)
	}
}

func (s suite) slowWithinIdle(t *testing.T) {
	// Every event comes 40ms after the last: slow, but never idle for the
	// 300ms timeout, so the stream must complete.
	const want = "slow but steady wins"
	_, c := s.start(t, oneStep(llmtest.Step{Text: want, ChunkSize: 4, ChunkDelayMs: 40}), 300*time.Millisecond)
	resp, err := c.Stream(ctxFor(t), ask("slowly"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Message.Text() != want {
		t.Errorf("text = %q, want %q", resp.Message.Text(), want)
	}
}

func (s suite) concurrent(t *testing.T) {
	const n = 16
	script := &llmtest.Script{}
	for i := range n {
		script.Conversations = append(script.Conversations, llmtest.Conversation{
			Name:  fmt.Sprintf("task-%d", i),
			Match: llmtest.Match{User: fmt.Sprintf(`^task %d$`, i)},
			Steps: []llmtest.Step{{Text: fmt.Sprintf("reply to task %d", i), ChunkSize: 3}},
		})
	}
	_, c := s.start(t, script, 0)
	ctx := ctxFor(t)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			var rec recorder
			resp, err := c.Stream(ctx, ask(fmt.Sprintf("task %d", i)), rec.handle)
			switch {
			case err != nil:
				errs[i] = err
			case resp.Message.Text() != fmt.Sprintf("reply to task %d", i) || rec.text() != resp.Message.Text():
				errs[i] = fmt.Errorf("task %d got %q (streamed %q)", i, resp.Message.Text(), rec.text())
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}
