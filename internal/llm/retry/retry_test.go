package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/retry"
)

// scripted is a fake llm.Client: attempt i streams texts[i] and then fails
// with errs[i] (nil means success).
type scripted struct {
	texts []string
	errs  []error
	calls int
}

func (s *scripted) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return s.Stream(ctx, req, nil)
}

func (s *scripted) Stream(_ context.Context, _ *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	i := s.calls
	s.calls++
	if h != nil && s.texts[i] != "" {
		h(llm.Event{Kind: llm.EventText, Text: s.texts[i]})
	}
	if s.errs[i] != nil {
		return nil, s.errs[i]
	}
	call := llm.ToolCall{ID: "t1", Name: "read", Input: []byte(`{}`)}
	if h != nil {
		h(llm.Event{Kind: llm.EventToolCall, ToolCall: &call})
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart(s.texts[i]), llm.ToolCallPart(call)}}, Attempts: 1}, nil
}

func classErr(c llm.Class, retryAfter time.Duration) error {
	return &llm.Error{Class: c, Provider: "fake", RetryAfter: retryAfter}
}

var policy = retry.Policy{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 8 * time.Second}

func TestPolicyDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		attempt int
		err     error
		rnd     float64
		want    time.Duration
		ok      bool
	}{
		{"first backoff, no jitter", 1, classErr(llm.ClassServer, 0), 0, 500 * time.Millisecond, true},
		{"first backoff, half jitter", 1, classErr(llm.ClassServer, 0), 0.5, 750 * time.Millisecond, true},
		{"doubles", 3, classErr(llm.ClassNetwork, 0), 0, 2 * time.Second, true},
		{"capped", 10, classErr(llm.ClassNetwork, 0), 0, 0, false},
		{"overloaded waits longer", 1, classErr(llm.ClassOverloaded, 0), 0, 2 * time.Second, true},
		{"retry-after honoured", 1, classErr(llm.ClassRateLimit, 30*time.Second), 0, 30 * time.Second, true},
		{"retry-after jitter at most 10%", 1, classErr(llm.ClassRateLimit, 30*time.Second), 0.5, 31500 * time.Millisecond, true},
		{"retry-after too long", 1, classErr(llm.ClassRateLimit, time.Hour), 0, 0, false},
		{"not retryable", 1, classErr(llm.ClassBadRequest, 0), 0, 0, false},
		{"unclassified", 1, errors.New("boom"), 0, 0, false},
		{"last attempt", 4, classErr(llm.ClassServer, 0), 0, 0, false},
	} {
		got, ok := policy.Delay(tc.attempt, tc.err, tc.rnd)
		if ok != tc.ok || (ok && got.Round(time.Microsecond) != tc.want.Round(time.Microsecond)) {
			t.Errorf("%s: Delay = %v, %t; want %v, %t", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	p := policy
	p.MaxDelay = 3 * time.Second
	if got, _ := p.Delay(3, classErr(llm.ClassServer, 0), 0.999999); got > 3*time.Second {
		t.Errorf("backoff %v exceeds MaxDelay", got)
	}
}

func TestStreamResetsBetweenAttempts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := &scripted{
			texts: []string{"partial", "", "complete"},
			errs:  []error{classErr(llm.ClassNetwork, 0), classErr(llm.ClassServer, 0), nil},
		}
		var retries []retry.Retry
		c := retry.New(fake, policy, retry.Options{Rand: func() float64 { return 0 }, OnRetry: func(r retry.Retry) { retries = append(retries, r) }})
		var kinds []string
		start := time.Now()
		resp, err := c.Stream(t.Context(), &llm.Request{}, func(ev llm.Event) { kinds = append(kinds, ev.Kind.String()+":"+ev.Text) })
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		// The second attempt emitted nothing, so only one reset.
		want := []string{"text:partial", "reset:", "text:complete", "tool_call:"}
		if diff := cmp.Diff(want, kinds); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if resp.Attempts != 3 || len(retries) != 2 {
			t.Errorf("attempts = %d, retries = %d; want 3, 2", resp.Attempts, len(retries))
		}
		if waited := time.Since(start); waited != 500*time.Millisecond+time.Second {
			t.Errorf("waited %v, want 1.5s of backoff", waited)
		}
	})
}

func TestGivesUp(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		final := classErr(llm.ClassOverloaded, 0)
		fake := &scripted{texts: make([]string, 4), errs: []error{final, final, final, final}}
		_, err := retry.New(fake, policy, retry.Options{}).Complete(t.Context(), &llm.Request{})
		if fake.calls != 4 || !errors.Is(err, final) || llm.ClassOf(err) != llm.ClassOverloaded {
			t.Fatalf("after %d calls err = %v, want 4 calls and the overloaded error", fake.calls, err)
		}
	})
}

func TestNoRetryForPermanentErrors(t *testing.T) {
	t.Parallel()
	fake := &scripted{texts: []string{"x"}, errs: []error{classErr(llm.ClassContextTooLong, 0)}}
	var events int
	_, err := retry.New(fake, policy, retry.Options{}).Stream(t.Context(), &llm.Request{}, func(llm.Event) { events++ })
	if fake.calls != 1 || llm.ClassOf(err) != llm.ClassContextTooLong || events != 1 {
		t.Fatalf("calls=%d events=%d err=%v; want one call, no reset, context error", fake.calls, events, err)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		fake := &scripted{texts: make([]string, 2), errs: []error{classErr(llm.ClassRateLimit, time.Minute), nil}}
		c := retry.New(fake, policy, retry.Options{OnRetry: func(retry.Retry) {
			time.AfterFunc(time.Second, cancel)
		}})
		start := time.Now()
		_, err := c.Complete(ctx, &llm.Request{})
		if !errors.Is(err, context.Canceled) || time.Since(start) != time.Second || fake.calls != 1 {
			t.Fatalf("err=%v after %v and %d calls; want Canceled after 1s and 1 call", err, time.Since(start), fake.calls)
		}
	})
}

func TestPolicyFromConfig(t *testing.T) {
	t.Parallel()
	got := retry.PolicyFromConfig(llm.RetryConfig{MaxAttempts: 2, BaseDelayMs: 100})
	want := retry.Policy{MaxAttempts: 2, BaseDelay: 100 * time.Millisecond, MaxDelay: 30 * time.Second}
	if got != want {
		t.Errorf("PolicyFromConfig = %+v, want %+v", got, want)
	}
}

func TestRetryObserverInContextToldOfEachRetry(t *testing.T) {
	t.Parallel()
	next := &scripted{texts: []string{"", "", ""}, errs: []error{classErr(llm.ClassTimeout, 0), classErr(llm.ClassServer, 0), nil}}
	c := retry.New(next, policy, retry.Options{Sleep: func(context.Context, time.Duration) error { return nil }, Rand: func() float64 { return 0 }})
	var got []llm.RetryNotice
	ctx := llm.WithRetryObserver(context.Background(), func(n llm.RetryNotice) { got = append(got, n) })
	if _, err := c.Stream(ctx, &llm.Request{}, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("told of %d retries, want 2", len(got))
	}
	for i, n := range got {
		if n.Attempt != i+1 || n.MaxAttempts != 4 || n.Err == nil || n.Wait <= 0 {
			t.Errorf("notice %d = %+v", i, n)
		}
	}
	if llm.ClassOf(got[0].Err) != llm.ClassTimeout {
		t.Errorf("first retry's error class = %s", llm.ClassOf(got[0].Err))
	}
}
