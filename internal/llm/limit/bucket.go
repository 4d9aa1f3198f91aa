package limit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// bucket is a token bucket holding up to one minute of budget, refilled
// continuously. It may go into debt (adjust after a call used more than
// estimated); takers then wait until it is repaid.
type bucket struct {
	perMinute float64

	mu    sync.Mutex // guards level and last
	level float64
	last  time.Time
}

func newBucket(perMinute float64) *bucket {
	return &bucket{perMinute: perMinute, level: perMinute, last: time.Now()}
}

func (b *bucket) refillLocked(now time.Time) {
	b.level = min(b.perMinute, b.level+now.Sub(b.last).Minutes()*b.perMinute)
	b.last = now
}

// take waits until n can be taken, then takes it. A request larger than
// the whole bucket waits for a full bucket and leaves it in debt, so it
// cannot wait forever. A non-nil yield makes the take low-priority: it
// stands back while yield reports an ordinary call waiting.
func (b *bucket) take(ctx context.Context, n float64, yield func() (bool, <-chan struct{})) error {
	for {
		if yield != nil {
			if blocked, changed := yield(); blocked {
				select {
				case <-changed:
					continue
				case <-ctx.Done():
					return context.Cause(ctx)
				}
			}
		}
		b.mu.Lock()
		b.refillLocked(time.Now())
		need := min(n, b.perMinute)
		if b.level >= need {
			b.level -= n
			b.mu.Unlock()
			return nil
		}
		wait := time.Duration((need - b.level) / b.perMinute * float64(time.Minute))
		b.mu.Unlock()
		if err := sleep(ctx, max(wait, time.Millisecond)); err != nil {
			return err
		}
	}
}

// adjust adds delta to what was taken (negative delta refunds).
func (b *bucket) adjust(delta float64) {
	b.mu.Lock()
	b.refillLocked(time.Now())
	b.level = min(b.perMinute, b.level-delta)
	b.mu.Unlock()
}

func asError(err error) *llm.Error {
	var e *llm.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
