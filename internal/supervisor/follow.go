package supervisor

import (
	"context"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// feedSize is the capacity of a feed's channel.
const feedSize = 256

// Follow follows the bus for the loop: the events f selects, into the
// returned channel, until ctx ends or stop is called (the loop calls stop
// before returning; the channel is closed when the feed ends). It starts
// after the last event the loop handled (Handled), reading the missed
// ones from the log, or live when it has handled none: a supervisor that
// never calls Handled starts live at every restart. A follow error (the
// log unreadable) is logged and ends the feed.
func (r *Runtime) Follow(ctx context.Context, bus *event.Bus, log event.Log, f event.Filter) (<-chan event.Event, func()) {
	q := event.Query{AfterID: -1, Filter: f}
	if r.last > 0 || r.fromLog {
		q.AfterID = r.last
	}
	return event.Feed(ctx, bus, log, q, feedSize, func(err error) { r.log.Warn("following the event bus", "err", err) })
}

// StartAfter makes the first feed start after event id of the log (0: its
// beginning) instead of live: a supervisor built before the daemon serves
// anything, and started concurrently with the server, misses nothing
// accepted in between. It is called before Run.
func (r *Runtime) StartAfter(id int64) {
	r.last, r.fromLog = id, true
}

// Handled records e as handled: a later Follow goes on after it.
// Transient events (ID 0) do not move the position.
func (r *Runtime) Handled(e event.Event) {
	if e.ID > 0 {
		r.last = e.ID
	}
}
