// Package testkit holds the test helpers several packages' tests share: a
// bounded wait for a condition nothing signals, a temporary SQLite store,
// and the observation events a native agent emits. It is for tests only:
// archtest forbids importing it from non-test code.
package testkit

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
)

// WaitLimit bounds WaitFor: generous, so a loaded machine never trips it;
// reaching it means the condition will not hold.
const WaitLimit = 30 * time.Second

// WaitFor returns once cond holds, checking it every few milliseconds, and
// fails the test when it has not held within WaitLimit. It is for
// conditions nothing signals (counters, a fake's records) outside a
// synctest bubble; inside one use synctest.Wait, and where an event or a
// channel says it, wait on that. It never asserts on elapsed time.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// OpenStore opens a SQLite store in a temporary directory, closed when the
// test ends.
func OpenStore(t testing.TB, opts sqlite.Options) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// WaitOnBus returns true once cond holds, checking it at once and again
// after every event on bus that passes f: for conditions on what the store
// holds, which changes only with a published event. It returns false when
// cond has not held within WaitLimit, or the bus closed first; the caller
// fails the test with what it knows.
func WaitOnBus(bus *event.Bus, f event.Filter, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), WaitLimit)
	defer cancel()
	sub := bus.Subscribe(f) // before the first check: no event is missed
	defer func() { sub.Close() }()
	for !cond() {
		if _, err := sub.Next(ctx); err != nil {
			if !errors.Is(err, event.ErrLagged) || ctx.Err() != nil {
				return cond()
			}
			// Events were dropped for this reader: read on from now.
			sub.Close()
			sub = bus.Subscribe(f)
		}
	}
	return true
}
