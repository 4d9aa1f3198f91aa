package llm

import (
	"context"
	"time"
)

// RetryNotice says that a retrying decorator is about to make another
// attempt at a call: the attempt that failed, why, and how long it waits
// first.
type RetryNotice struct {
	// Attempt is the attempt that failed (1-based); the next is Attempt+1.
	Attempt int
	// MaxAttempts is the most attempts the decorator makes (the first
	// included).
	MaxAttempts int
	Err         error
	Wait        time.Duration
}

type retryObserverKey struct{}

// WithRetryObserver returns a context that carries fn: a retrying
// decorator serving a call made with it tells fn of every retry, before its
// wait, on the calling goroutine. This is how a caller (the agent loop)
// learns that its call is being retried without knowing the decorators.
func WithRetryObserver(ctx context.Context, fn func(RetryNotice)) context.Context {
	return context.WithValue(ctx, retryObserverKey{}, fn)
}

// RetryObserver returns the function WithRetryObserver put in ctx, or nil.
func RetryObserver(ctx context.Context) func(RetryNotice) {
	fn, _ := ctx.Value(retryObserverKey{}).(func(RetryNotice))
	return fn
}
