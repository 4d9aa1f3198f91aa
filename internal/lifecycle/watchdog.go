package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// TimeoutError is why a Watchdog stopped a run: Which timeout ("idle" or
// "total") passed its Limit. It is the run's cancellation cause.
type TimeoutError struct {
	Which string
	Limit time.Duration
	// Idle is how long the run had been silent.
	Idle time.Duration
}

func (e *TimeoutError) Error() string {
	if e.Which == "idle" {
		return fmt.Sprintf("stopped by the idle timeout: nothing reported for %s (sandbox.idle_timeout_secs, scaled by complexity)", e.Limit)
	}
	return fmt.Sprintf("stopped by the total timeout: the run lasted %s (sandbox.total_timeout_secs, scaled by complexity)", e.Limit)
}

// Event is the timeout as an event.
func (e *TimeoutError) Event() event.Timeout {
	return event.Timeout{Which: e.Which, LimitSecs: int(e.Limit / time.Second), IdleMs: e.Idle.Milliseconds()}
}

// Watchdog holds a run to its idle and total timeouts with timers of its
// own: a run that reports nothing is stopped when the idle timer fires,
// whether or not output ever arrives (the earlier implementation checked
// only when output arrived, so a silent hung agent was never stopped).
// Touch records activity; Busy says a tool call is in flight, during which
// the idle limit is the longer of idle and busyIdle (a tool may run that
// long by its own timeout: a build that prints nothing is not a hang);
// Run waits for a timer or the end.
type Watchdog struct {
	idle, busyIdle, total time.Duration
	touch                 chan struct{}
	now                   func() time.Time

	mu   sync.Mutex
	last time.Time // guarded by mu
	busy bool      // guarded by mu
}

// NewWatchdog returns a watchdog for the limits (zero: none of that kind).
func NewWatchdog(idle, busyIdle, total time.Duration) *Watchdog {
	return &Watchdog{idle: idle, busyIdle: max(idle, busyIdle), total: total, touch: make(chan struct{}, 1), now: time.Now, last: time.Now()}
}

// Touch records activity now. It never blocks.
func (w *Watchdog) Touch() { w.set(nil) }

// Busy records activity now and whether a tool call is in flight.
func (w *Watchdog) Busy(busy bool) { w.set(&busy) }

func (w *Watchdog) set(busy *bool) {
	w.mu.Lock()
	w.last = w.now()
	if busy != nil {
		w.busy = *busy
	}
	w.mu.Unlock()
	select {
	case w.touch <- struct{}{}:
	default:
	}
}

// limit is the idle limit now.
func (w *Watchdog) limit() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy {
		return w.busyIdle
	}
	return w.idle
}

// Run waits until ctx ends (nil) or a timeout passes (its *TimeoutError).
// The idle timer restarts at every Touch or Busy.
func (w *Watchdog) Run(ctx context.Context) *TimeoutError {
	var idleC, totalC <-chan time.Time
	var idleT *time.Timer
	if w.idle > 0 {
		idleT = time.NewTimer(w.idle)
		defer idleT.Stop()
		idleC = idleT.C
	}
	if w.total > 0 {
		t := time.NewTimer(w.total)
		defer t.Stop()
		totalC = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.touch:
			if idleT != nil {
				idleT.Reset(w.limit())
			}
		case <-idleC:
			return &TimeoutError{Which: "idle", Limit: w.limit(), Idle: w.silent()}
		case <-totalC:
			return &TimeoutError{Which: "total", Limit: w.total, Idle: w.silent()}
		}
	}
}

func (w *Watchdog) silent() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now().Sub(w.last)
}
