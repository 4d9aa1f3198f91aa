// Package limit shares a provider's capacity among all tasks: a cap on
// calls in flight, token buckets for requests and tokens per minute, and a
// shared pause when the provider answers 429 with a Retry-After, so that
// fifty tasks do not stampede a rate limit one after the other.
//
// One Limiter exists per provider and is shared by every Client wrapped
// with it. Wrap it inside the retry decorator (retry(limit(provider))) so
// that a task waiting to retry does not hold a slot.
package limit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// Limits configures a Limiter; zero fields mean unlimited.
type Limits struct {
	MaxConcurrent     int
	RequestsPerMinute int
	TokensPerMinute   int
}

// Limiter is one provider's shared capacity. It is safe for concurrent use.
type Limiter struct {
	sem      chan struct{} // nil when unlimited
	requests *bucket       // nil when unlimited
	tokens   *bucket       // nil when unlimited

	mu          sync.Mutex // guards pausedUntil, urgent and changed
	pausedUntil time.Time
	urgent      int           // ordinary calls waiting in acquire
	changed     chan struct{} // closed when urgent changes; nil when nobody watches
}

// NewLimiter returns a Limiter enforcing l.
func NewLimiter(l Limits) *Limiter {
	lim := &Limiter{}
	if l.MaxConcurrent > 0 {
		lim.sem = make(chan struct{}, l.MaxConcurrent)
	}
	if l.RequestsPerMinute > 0 {
		lim.requests = newBucket(float64(l.RequestsPerMinute))
	}
	if l.TokensPerMinute > 0 {
		lim.tokens = newBucket(float64(l.TokensPerMinute))
	}
	return lim
}

// acquire waits for a pause to end, a concurrency slot and budget for one
// request of about est tokens. The returned release must be called.
// A low-priority call waits while any ordinary call does.
func (l *Limiter) acquire(ctx context.Context, est int64) (release func(), err error) {
	var yield func() (bool, <-chan struct{})
	if IsLowPriority(ctx) {
		yield = l.yieldTo
	} else {
		l.urgentWaiting(1)
		defer l.urgentWaiting(-1)
	}
	for {
		l.mu.Lock()
		wait := time.Until(l.pausedUntil)
		l.mu.Unlock()
		if wait <= 0 {
			break
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
	if l.requests != nil {
		if err := l.requests.take(ctx, 1, yield); err != nil {
			return nil, err
		}
	}
	if l.tokens != nil {
		if err := l.tokens.take(ctx, float64(est), yield); err != nil {
			return nil, err
		}
	}
	if l.sem != nil && yield != nil {
		if err := l.slot(ctx); err != nil {
			return nil, err
		}
		return func() { <-l.sem }, nil
	}
	if l.sem != nil {
		select {
		case l.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		return func() { <-l.sem }, nil
	}
	return func() {}, nil
}

// settle charges the difference between the tokens a call used and the
// estimate taken before it, and pauses everyone after a rate limit.
func (l *Limiter) settle(est int64, resp *llm.Response, err error) {
	if l.tokens != nil && resp != nil {
		l.tokens.adjust(float64(resp.Usage.Total() - est))
	}
	if e := asError(err); e != nil && e.Class == llm.ClassRateLimit && e.RetryAfter > 0 {
		until := time.Now().Add(e.RetryAfter)
		l.mu.Lock()
		if until.After(l.pausedUntil) {
			l.pausedUntil = until
		}
		l.mu.Unlock()
	}
}

// Client applies a Limiter to the Client it wraps.
type Client struct {
	next llm.Client
	lim  *Limiter
}

var _ llm.Client = (*Client)(nil)

// New wraps next with lim, which may be shared with other Clients.
func New(next llm.Client, lim *Limiter) *Client { return &Client{next: next, lim: lim} }

// Complete waits for capacity, then calls the wrapped Complete.
func (c *Client) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	est := Estimate(req)
	release, err := c.lim.acquire(ctx, est)
	if err != nil {
		return nil, fmt.Errorf("waiting for model capacity: %w", err)
	}
	defer release()
	resp, err := c.next.Complete(ctx, req)
	c.lim.settle(est, resp, err)
	return resp, err
}

// Stream waits for capacity, then calls the wrapped Stream.
func (c *Client) Stream(ctx context.Context, req *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	est := Estimate(req)
	release, err := c.lim.acquire(ctx, est)
	if err != nil {
		return nil, fmt.Errorf("waiting for model capacity: %w", err)
	}
	defer release()
	resp, err := c.next.Stream(ctx, req, h)
	c.lim.settle(est, resp, err)
	return resp, err
}

// Estimate guesses the input tokens of req at four bytes per token, the
// usual ratio for English and code.
func Estimate(req *llm.Request) int64 {
	return int64(llm.TextBytes(req.System, req.Messages, req.Tools)/4 + 1)
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

type lowPriorityKey struct{}

// LowPriority marks the calls made with ctx as background work (a watcher
// session's evaluation): while any other call waits for capacity, a
// low-priority call neither takes budget nor a slot, so a task's own model
// calls are served before queued background calls.
func LowPriority(ctx context.Context) context.Context {
	return context.WithValue(ctx, lowPriorityKey{}, true)
}

// IsLowPriority reports whether ctx was marked by LowPriority.
func IsLowPriority(ctx context.Context) bool {
	low, _ := ctx.Value(lowPriorityKey{}).(bool)
	return low
}

// urgentWaiting adds d to the count of ordinary calls waiting for capacity
// and wakes the low-priority calls watching it.
func (l *Limiter) urgentWaiting(d int) {
	l.mu.Lock()
	l.urgent += d
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	l.mu.Unlock()
}

// yieldTo reports whether a low-priority call must stand back (an ordinary
// call is waiting), and a channel closed when that may have changed.
func (l *Limiter) yieldTo() (blocked bool, changed <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.urgent > 0, l.changed
}

// slot takes a concurrency slot for a low-priority call, standing back
// while an ordinary call waits: a waiting ordinary call closes changed,
// which takes this call out of the race for the slot.
func (l *Limiter) slot(ctx context.Context) error {
	for {
		blocked, changed := l.yieldTo()
		if blocked {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		select {
		case l.sem <- struct{}{}:
			return nil
		case <-changed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
