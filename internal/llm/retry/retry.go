// Package retry is an llm.Client decorator that retries classified,
// retryable failures with exponential backoff and jitter.
//
// Rules: only errors whose llm.Class is Retryable are retried; a
// Retry-After from the service is honoured (waited at least, plus up to
// 10% jitter so that many tasks do not return at the same instant), and
// one longer than Policy.MaxRetryAfter ends the call instead; overloaded
// responses (Anthropic 529) back off OverloadFactor times longer; at most
// Policy.MaxAttempts attempts are made.
//
// A caller that put an observer in the call's context
// (llm.WithRetryObserver) is told of every retry, before its wait.
//
// Streams are never resumed: a failed stream is restarted from scratch.
// If the failed attempt had already delivered events, the decorator sends
// llm.EventReset before the new attempt so the caller discards the partial
// text. Providers deliver tool calls only after a complete response, so no
// tool call from a failed attempt ever reaches the caller and none is
// duplicated.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// Policy says when and how long to wait.
type Policy struct {
	// MaxAttempts counts the first attempt; values below 1 mean 1.
	MaxAttempts int
	// BaseDelay is the backoff before the second attempt; it doubles per attempt.
	BaseDelay time.Duration
	// MaxDelay caps one computed backoff (not a Retry-After).
	MaxDelay time.Duration
	// OverloadFactor multiplies the backoff after an overloaded response;
	// zero means 4.
	OverloadFactor int
	// MaxRetryAfter is the longest Retry-After honoured; a longer one ends
	// the call. Zero means 5 minutes.
	MaxRetryAfter time.Duration
}

// PolicyFromConfig builds a Policy from configuration, applying defaults.
func PolicyFromConfig(c llm.RetryConfig) Policy {
	c = c.WithDefaults()
	return Policy{
		MaxAttempts: c.MaxAttempts,
		BaseDelay:   time.Duration(c.BaseDelayMs) * time.Millisecond,
		MaxDelay:    time.Duration(c.MaxDelayMs) * time.Millisecond,
	}
}

// Delay returns how long to wait after attempt (1-based) failed with err,
// and false when the call should not be retried. rnd, in [0, 1), supplies
// the jitter.
func (p Policy) Delay(attempt int, err error, rnd float64) (time.Duration, bool) {
	class := llm.ClassOf(err)
	if !class.Retryable() || attempt >= max(p.MaxAttempts, 1) {
		return 0, false
	}
	if ra := retryAfter(err); ra > 0 {
		limit := p.MaxRetryAfter
		if limit <= 0 {
			limit = 5 * time.Minute
		}
		if ra > limit {
			return 0, false
		}
		return ra + time.Duration(rnd*float64(ra)/10), true
	}
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	if class == llm.ClassOverloaded {
		f := p.OverloadFactor
		if f <= 0 {
			f = 4
		}
		d *= time.Duration(f)
	}
	// Equal jitter: at least half the backoff, so waits still grow.
	return d/2 + time.Duration(rnd*float64(d/2)), true
}

func retryAfter(err error) time.Duration {
	var e *llm.Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// Retry describes one retry, for Options.OnRetry.
type Retry struct {
	// Attempt is the attempt that failed (1-based).
	Attempt int
	Err     error
	Wait    time.Duration
}

// Options holds the decorator's collaborators; all are optional.
type Options struct {
	// Sleep waits d or until ctx is done; nil means a real timer. Tests
	// inject one that returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns jitter in [0, 1); nil means math/rand/v2.
	Rand func() float64
	// OnRetry is told about every retry before its wait, e.g. to log it.
	OnRetry func(Retry)
}

// Client retries the calls of the Client it wraps. It is safe for
// concurrent use if the wrapped Client is.
type Client struct {
	next   llm.Client
	policy Policy
	opts   Options
}

var _ llm.Client = (*Client)(nil)

// New wraps next.
func New(next llm.Client, p Policy, o Options) *Client {
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	return &Client{next: next, policy: p, opts: o}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Complete calls the wrapped Complete until it succeeds or may not be retried.
func (c *Client) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return c.do(ctx, func() (*llm.Response, error) { return c.next.Complete(ctx, req) }, nil)
}

// Stream calls the wrapped Stream until it succeeds or may not be retried,
// sending llm.EventReset to h between attempts that delivered events.
func (c *Client) Stream(ctx context.Context, req *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	emitted := false
	var inner func(llm.Event)
	if h != nil {
		inner = func(ev llm.Event) {
			emitted = true
			h(ev)
		}
	}
	reset := func(err error) {
		if emitted {
			emitted = false
			h(llm.Event{Kind: llm.EventReset, Err: err})
		}
	}
	return c.do(ctx, func() (*llm.Response, error) { return c.next.Stream(ctx, req, inner) }, reset)
}

func (c *Client) do(ctx context.Context, call func() (*llm.Response, error), reset func(error)) (*llm.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := call()
		if err == nil {
			resp.Attempts = attempt
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		wait, ok := c.policy.Delay(attempt, err, c.opts.Rand())
		if !ok {
			if attempt > 1 {
				return nil, fmt.Errorf("giving up after %d attempts: %w", attempt, err)
			}
			return nil, err
		}
		if reset != nil {
			reset(err)
		}
		if c.opts.OnRetry != nil {
			c.opts.OnRetry(Retry{Attempt: attempt, Err: err, Wait: wait})
		}
		if fn := llm.RetryObserver(ctx); fn != nil {
			fn(llm.RetryNotice{Attempt: attempt, MaxAttempts: max(c.policy.MaxAttempts, 1), Err: err, Wait: wait})
		}
		if serr := c.opts.Sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("waiting to retry after %w: %w", err, serr)
		}
	}
}
