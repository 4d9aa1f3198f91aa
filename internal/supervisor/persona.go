package supervisor

import (
	"context"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Persona is an internal persona (the watcher's judge, the syncer's
// decider, the turn-end learning pass) asked one question at a time.
type Persona struct {
	// Model returns the client and model name for the persona's tier.
	Model func() (llm.Client, string, error)
	// System is the persona's system prompt.
	System string
	// Timeout bounds one call; 0 means none.
	Timeout time.Duration
	// MaxTokens caps the reply.
	MaxTokens int
	// Spent, when set, is told what each call cost.
	Spent func(u llm.Usage, usd float64)
}

// Ask asks p the question (llm.Ask: temperature 0, p.Timeout) and parses
// its reply with parse. A model that cannot be had, a failed call and an
// unusable reply are errors; the caller falls back (Fallback).
func Ask[T any](ctx context.Context, p Persona, question string, parse func(reply string) (T, error)) (T, error) {
	var zero T
	c, model, err := p.Model()
	if err != nil {
		return zero, err
	}
	resp, err := llm.Ask(ctx, c, model, p.System, question, p.MaxTokens, p.Timeout)
	if err != nil {
		return zero, err
	}
	if p.Spent != nil {
		p.Spent(resp.Usage, resp.CostUSD)
	}
	return parse(resp.Message.Text())
}

// Fallback settles a persona's answer: v when err is nil (d is no longer
// degraded), else fallback's value, with the failure recorded in d. It
// returns err, for the caller to log.
func Fallback[T any](d *Degraded, v T, err error, fallback func() T) (T, error) {
	if err != nil {
		d.Fail(words.Clip(err.Error(), maxReason))
		return fallback(), err
	}
	d.Recover()
	return v, nil
}

// maxReason bounds the reason Fallback records.
const maxReason = 200

// Degraded tracks whether a supervisor runs degraded (its persona absent
// or failing, a deterministic fallback deciding instead), why, for how
// long, and how many calls failed. Its methods are safe for concurrent
// use.
type Degraded struct {
	now func() time.Time

	mu       sync.Mutex
	on       bool      // guarded by mu
	reason   string    // guarded by mu
	since    time.Time // guarded by mu
	secs     float64   // guarded by mu: time degraded before since
	failures uint64    // guarded by mu
}

// NewDegraded returns a tracker, not degraded, on the clock now (nil:
// time.Now).
func NewDegraded(now func() time.Time) *Degraded {
	if now == nil {
		now = time.Now
	}
	return &Degraded{now: now}
}

// DegradedState is a tracker's state.
type DegradedState struct {
	On     bool
	Reason string
	// Secs is the time spent degraded, the current spell included.
	Secs     float64
	Failures uint64
}

// Fail counts a failed call and degrades with its reason; began says
// whether it was not degraded before.
func (d *Degraded) Fail(reason string) (began bool) {
	d.mu.Lock()
	d.failures++
	d.mu.Unlock()
	return d.Set(reason)
}

// Set degrades without counting a failure (no persona to ask at all);
// began says whether it was not degraded before. Degraded already, it
// updates the reason.
func (d *Degraded) Set(reason string) (began bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reason = reason
	if d.on {
		return false
	}
	d.on, d.since = true, d.now()
	return true
}

// Recover ends a degraded spell; ended says whether there was one.
func (d *Degraded) Recover() (ended bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.on {
		return false
	}
	d.secs += d.now().Sub(d.since).Seconds()
	d.on, d.reason, d.since = false, "", time.Time{}
	return true
}

// On says whether it is degraded now.
func (d *Degraded) On() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.on
}

// State returns the tracker's state.
func (d *Degraded) State() DegradedState {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := DegradedState{On: d.on, Reason: d.reason, Secs: d.secs, Failures: d.failures}
	if d.on {
		s.Secs += d.now().Sub(d.since).Seconds()
	}
	return s
}
