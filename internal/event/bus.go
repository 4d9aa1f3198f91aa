package event

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// ErrLagged ends a subscription whose reader fell LagLimit events behind. The
// reader resumes from the event log after the last ID it handled.
var ErrLagged = errors.New("event subscriber fell too far behind")

// ErrClosed ends a subscription that was closed, or whose bus was closed.
var ErrClosed = errors.New("event subscription closed")

// Options tunes a Bus.
type Options struct {
	// Buffer is how many queued events a subscriber may have before transient
	// events are dropped for it. Default 1024.
	Buffer int
	// LagLimit is how many queued events end a subscription with ErrLagged.
	// Default 64 × Buffer, at least 65536.
	LagLimit int
}

// Stats counts what a Bus has done.
type Stats struct {
	Published   uint64 `json:"published"`
	Dropped     uint64 `json:"dropped"`
	Lagged      uint64 `json:"lagged"`
	Subscribers int    `json:"subscribers"`
	LastID      int64  `json:"last_id"`
	// Backlog is the most events any one subscriber has queued and not
	// yet read: how far the slowest reader is behind the bus. A reader
	// ends with ErrLagged when it reaches Options.LagLimit.
	Backlog int `json:"backlog"`
}

// Bus fans events out to subscribers. It is safe for concurrent use. See the
// package documentation for the delivery rules.
type Bus struct {
	opts Options

	mu     sync.Mutex // guards subs, lastID, closed; held while enqueueing so order is global
	subs   map[*Subscription]struct{}
	lastID int64
	closed bool

	published atomic.Uint64
	dropped   atomic.Uint64
	lagged    atomic.Uint64
}

// NewBus returns an empty bus. lastID is the highest ID already in the event
// log, so that LastID is meaningful before anything is published.
func NewBus(opts Options, lastID int64) *Bus {
	if opts.Buffer <= 0 {
		opts.Buffer = 1024
	}
	if opts.LagLimit <= 0 {
		opts.LagLimit = max(64*opts.Buffer, 65536)
	}
	if opts.LagLimit < opts.Buffer {
		opts.LagLimit = opts.Buffer
	}
	return &Bus{opts: opts, subs: map[*Subscription]struct{}{}, lastID: lastID}
}

// Publish hands events to every subscriber whose filter matches. Logged events
// must come in ID order (the store's writer guarantees it). Publish never blocks.
func (b *Bus) Publish(evs ...Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for _, e := range evs {
		if e.ID > b.lastID {
			b.lastID = e.ID
		}
		b.published.Add(1)
		drop := e.Transient()
		for s := range b.subs {
			if !s.filter.Match(e) {
				continue
			}
			switch s.enqueue(e, drop, b.opts) {
			case enqDropped:
				b.dropped.Add(1)
			case enqLagged:
				b.lagged.Add(1)
				delete(b.subs, s)
			}
		}
	}
}

// LastID returns the highest logged event ID published, or the log's last ID at
// start. Every event with a larger ID is published after this call returns.
func (b *Bus) LastID() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastID
}

// Subscribe starts a subscription for the events f selects, from now on.
// The caller must Close it.
func (b *Bus) Subscribe(f Filter) *Subscription {
	s := &Subscription{bus: b, filter: f, notify: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.err = ErrClosed
		return s
	}
	b.subs[s] = struct{}{}
	return s
}

// Close ends every subscription with ErrClosed once its queue is drained, and
// makes later publishes no-ops. It is idempotent.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for s := range b.subs {
		s.end(ErrClosed)
	}
	clear(b.subs)
}

// Stats returns the bus's counters.
func (b *Bus) Stats() Stats {
	b.mu.Lock()
	n, last := len(b.subs), b.lastID
	backlog := 0
	for s := range b.subs {
		backlog = max(backlog, s.pending())
	}
	b.mu.Unlock()
	return Stats{
		Backlog:     backlog,
		Published:   b.published.Load(),
		Dropped:     b.dropped.Load(),
		Lagged:      b.lagged.Load(),
		Subscribers: n,
		LastID:      last,
	}
}

func (b *Bus) unsubscribe(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs, s)
}

// Subscription is one reader's queue of events. Next is for one goroutine at a
// time; Close and Dropped may be called from any goroutine.
type Subscription struct {
	bus    *Bus
	filter Filter
	notify chan struct{} // capacity 1: "the queue changed"

	mu      sync.Mutex // guards queue, head, err
	queue   []Event
	head    int
	err     error
	dropped atomic.Uint64
}

type enqResult int

const (
	enqOK enqResult = iota
	enqDropped
	enqLagged
)

func (s *Subscription) enqueue(e Event, droppable bool, o Options) enqResult {
	s.mu.Lock()
	pending := len(s.queue) - s.head
	var r enqResult
	switch {
	case s.err != nil:
		r = enqOK // already ending; the bus removes it on its own
	case droppable && pending >= o.Buffer:
		s.dropped.Add(1)
		r = enqDropped
	case pending >= o.LagLimit:
		s.err = ErrLagged
		r = enqLagged
	default:
		if s.head > 0 && s.head == len(s.queue) {
			s.queue, s.head = s.queue[:0], 0
		}
		s.queue = append(s.queue, e)
	}
	s.mu.Unlock()
	if r != enqDropped {
		s.wake()
	}
	return r
}

func (s *Subscription) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *Subscription) end(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.wake()
}

// Next returns the next event, waiting until one arrives or ctx ends. After the
// subscription ends it returns the events still queued, then ErrClosed or
// ErrLagged. A lagged subscription returns ErrLagged at once: the reader
// resumes from the log.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		if errors.Is(s.err, ErrLagged) {
			s.mu.Unlock()
			return Event{}, ErrLagged
		}
		if s.head < len(s.queue) {
			e := s.queue[s.head]
			s.queue[s.head] = Event{}
			s.head++
			s.mu.Unlock()
			return e, nil
		}
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return Event{}, err
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// pending returns how many events are queued and not yet read.
func (s *Subscription) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) - s.head
}

// Dropped returns how many transient events were dropped for this subscriber.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close ends the subscription. It is idempotent.
func (s *Subscription) Close() {
	s.bus.unsubscribe(s)
	s.end(ErrClosed)
}
