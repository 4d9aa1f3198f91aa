package llm

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrStreamIdle is the cancellation cause set by an IdleWatch whose timeout
// expired.
var ErrStreamIdle = errors.New("stream idle timeout")

// IdleWatch cancels a context when a stream makes no progress for a while.
// Providers call Touch on every event received and Stop when the stream ends.
// It owns no goroutine of its own: the timer's callback only cancels.
type IdleWatch struct {
	timeout time.Duration
	cancel  context.CancelCauseFunc

	mu    sync.Mutex // guards timer
	timer *time.Timer
}

// WatchIdle returns a context derived from ctx that is cancelled with cause
// ErrStreamIdle when Touch has not been called for timeout. A timeout of
// zero or less disables the watch. Callers must call Stop.
func WatchIdle(ctx context.Context, timeout time.Duration) (context.Context, *IdleWatch) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &IdleWatch{timeout: timeout, cancel: cancel}
	if timeout > 0 {
		w.timer = time.AfterFunc(timeout, func() { cancel(ErrStreamIdle) })
	}
	return ctx, w
}

// Touch records progress, restarting the idle timer.
func (w *IdleWatch) Touch() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	w.timer.Reset(w.timeout)
	w.mu.Unlock()
}

// Stop disarms the watch and releases the derived context.
func (w *IdleWatch) Stop() {
	if w.timer != nil {
		w.mu.Lock()
		w.timer.Stop()
		w.mu.Unlock()
	}
	w.cancel(context.Canceled)
}

// Expired reports whether ctx (returned by WatchIdle) ended because of the
// idle timeout.
func Expired(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrStreamIdle)
}
