// Package enginetest holds what the tests of the engines share: Host, an
// executor's side of a run kept in memory. It is for tests only
// (internal/archtest checks that no other code imports it).
package enginetest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Host is an executor's side of a run, in memory: an injection queue, the
// stored conversation, the committed steps and emitted events. It signals
// arrivals (engine.Arrivals); Polling hides that.
type Host struct {
	mu     sync.Mutex
	t      task.Task
	queue  []inject.Injection
	nextID int64
	conv   []llm.Message
	steps  []engine.Step
	events []event.Payload
	intr   chan struct{}
	arr    chan struct{}
}

var (
	_ engine.Host     = (*Host)(nil)
	_ engine.Arrivals = (*Host)(nil)
)

// Polling hides Arrivals: the engine polls the inbox instead.
type Polling struct{ engine.Host }

// NewHost returns a host for task t.
func NewHost(t task.Task) *Host {
	return &Host{t: t, intr: make(chan struct{}, 1), arr: make(chan struct{}, 1)}
}

// Emit implements engine.Host.
func (h *Host) Emit(ps ...event.Payload) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ps...)
}

// Conversation implements engine.Host.
func (h *Host) Conversation(context.Context) ([]llm.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.conv), nil
}

// Commit implements engine.Host: the step's messages, manifest, events,
// receipts and usage are applied to the task.
func (h *Host) Commit(_ context.Context, s engine.Step) (task.Task, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conv = append(h.conv, s.Messages...)
	if s.Manifest != nil {
		m := *s.Manifest
		h.t.Manifest = &m
	}
	h.steps = append(h.steps, s)
	h.events = append(h.events, s.Events...)
	for _, d := range s.Delivered {
		h.queue = slices.DeleteFunc(h.queue, func(q inject.Injection) bool { return q.ID == d.ID })
	}
	if s.Call != nil {
		h.t.Usage.CostUSD += s.Call.CostUSD
		h.t.Usage.InputTokens += s.Call.Usage.InputTokens
		h.t.Usage.OutputTokens += s.Call.Usage.OutputTokens
	}
	return h.t, nil
}

// Prepare implements engine.Host.
func (h *Host) Prepare(context.Context) (task.Task, error) { return h.Task(), nil }

// Inbox implements engine.Host.
func (h *Host) Inbox(context.Context) ([]inject.Injection, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.queue), nil
}

// Interrupts implements engine.Host.
func (h *Host) Interrupts() <-chan struct{} { return h.intr }

// Arrivals implements engine.Arrivals.
func (h *Host) Arrivals() <-chan struct{} { return h.arr }

// UrgentWaiting implements engine.Host.
func (h *Host) UrgentWaiting(context.Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.ContainsFunc(h.queue, func(q inject.Injection) bool { return q.Urgent })
}

// Allow implements engine.Host: nothing is ever refused.
func (h *Host) Allow(context.Context) *engine.Stop { return nil }

// RecordLearning implements engine.Host: learnings are dropped.
func (h *Host) RecordLearning(context.Context, engine.Learning) error { return nil }

// Now implements engine.Host.
func (h *Host) Now() time.Time { return time.Now() }

// Inject queues a message from the user and signals its arrival, and an
// urgent one's interrupt. It returns the injection's id.
func (h *Host) Inject(kind inject.Kind, text string, urgent bool) int64 {
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.queue = append(h.queue, inject.Injection{ID: id, TaskID: h.t.ID, Kind: kind, Text: text, Urgent: urgent, Source: inject.FromUser, CreatedAt: time.Now()})
	h.mu.Unlock()
	if urgent {
		select {
		case h.intr <- struct{}{}:
		default:
		}
	}
	select {
	case h.arr <- struct{}{}:
	default:
	}
	return id
}

// Delivered reports whether injection id was committed as delivered.
func (h *Host) Delivered(id int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.steps {
		for _, d := range s.Delivered {
			if d.ID == id {
				return true
			}
		}
	}
	return false
}

// Snapshot returns the events emitted and the steps committed so far.
func (h *Host) Snapshot() (evs []event.Payload, steps []engine.Step) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events), slices.Clone(h.steps)
}

// Has reports whether an event of kind k was observed that ok accepts (nil
// accepts any).
func (h *Host) Has(k event.Kind, ok func(event.Payload) bool) bool {
	evs, _ := h.Snapshot()
	for _, e := range evs {
		if e.EventKind() == k && (ok == nil || ok(e)) {
			return true
		}
	}
	return false
}

// Task is the task as stored: what Prepare returns.
func (h *Host) Task() task.Task {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.t
}

// Manifest is the task's stored manifest.
func (h *Host) Manifest() *task.Manifest { return h.Task().Manifest }
