package event

import (
	"context"
	"errors"
	"fmt"
)

// Log is the read side of the event log that Follow needs.
type Log interface {
	// ReadEvents returns logged events matching q in ID order.
	ReadEvents(ctx context.Context, q Query) ([]Event, error)
}

// followPage is how many logged events Follow reads from the log at a time.
const followPage = 1000

// Follow calls fn for every logged event q selects with an ID after q.AfterID,
// first from the log and then live from the bus, without gap or duplicate, until
// ctx ends or fn returns an error. Transient events are passed on live only.
// When q.AfterID is negative, Follow starts live, with nothing from the log.
// If the live subscription lags, Follow catches up from the log and goes on.
// It returns ctx's error or fn's.
func Follow(ctx context.Context, bus *Bus, log Log, q Query, fn func(Event) error) error {
	last := q.AfterID
	if last < 0 {
		last = bus.LastID()
	}
	for {
		// Subscribe before reading the log: every event after hi is published
		// after this subscription exists, so it reaches the subscription.
		sub := bus.Subscribe(q.Filter)
		hi := bus.LastID()
		err := func() error {
			defer sub.Close()
			for caughtUp := last >= hi; !caughtUp; {
				page := q
				page.AfterID, page.Limit = last, followPage
				evs, err := log.ReadEvents(ctx, page)
				if err != nil {
					return fmt.Errorf("reading the event log after %d: %w", last, err)
				}
				caughtUp = len(evs) < followPage
				for _, e := range evs {
					if e.ID > hi {
						caughtUp = true
						break
					}
					if err := fn(e); err != nil {
						return err
					}
					last = e.ID
				}
			}
			last = max(last, hi)
			for {
				e, err := sub.Next(ctx)
				if err != nil {
					return err
				}
				if e.ID != 0 && e.ID <= last {
					continue
				}
				if !q.Since.IsZero() && e.Time.Before(q.Since) {
					continue
				}
				if err := fn(e); err != nil {
					return err
				}
				if e.ID != 0 {
					last = e.ID
				}
			}
		}()
		if !errors.Is(err, ErrLagged) {
			return err
		}
	}
}

// Feed runs Follow in a goroutine that delivers the events to the returned
// channel (of capacity size) until ctx ends or stop is called; a follow
// error other than the end of ctx is passed to onErr (nil: ignored). The
// channel is closed when the goroutine ends. stop ends it and waits for
// it: the caller that owns the loop calls stop before returning.
func Feed(ctx context.Context, bus *Bus, log Log, q Query, size int, onErr func(error)) (<-chan Event, func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan Event, size)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		err := Follow(ctx, bus, log, q, func(e Event) error {
			select {
			case ch <- e:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err != nil && ctx.Err() == nil && onErr != nil {
			onErr(err)
		}
	}()
	return ch, func() {
		cancel()
		for range ch { // let the goroutine end
		}
		<-done
	}
}
