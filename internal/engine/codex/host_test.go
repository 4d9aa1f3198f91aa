package codex

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// fakeHost is an executor's side of a run, in memory: an injection queue,
// the stored conversation, the committed steps and emitted events.
type fakeHost struct {
	tb     testing.TB // for helpers that wait; nil in most tests
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

// pollingHost hides Arrivals: the engine polls the inbox instead.
type pollingHost struct{ engine.Host }

func newFakeHost(t task.Task) *fakeHost {
	return &fakeHost{t: t, intr: make(chan struct{}, 1), arr: make(chan struct{}, 1)}
}

func (h *fakeHost) Emit(ps ...event.Payload) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ps...)
}

func (h *fakeHost) Conversation(context.Context) ([]llm.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.conv), nil
}

func (h *fakeHost) Commit(_ context.Context, s engine.Step) (task.Task, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conv = append(h.conv, s.Messages...)
	h.steps = append(h.steps, s)
	h.events = append(h.events, s.Events...)
	for _, d := range s.Delivered {
		h.queue = slices.DeleteFunc(h.queue, func(q inject.Injection) bool { return q.ID == d.ID })
	}
	if s.Manifest != nil {
		m := *s.Manifest
		h.t.Manifest = &m
	}
	if s.Call != nil {
		h.t.Usage.CostUSD += s.Call.CostUSD
		h.t.Usage.InputTokens += s.Call.Usage.InputTokens
		h.t.Usage.OutputTokens += s.Call.Usage.OutputTokens
	}
	return h.t, nil
}

func (h *fakeHost) Prepare(context.Context) (task.Task, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.t, nil
}

func (h *fakeHost) Inbox(context.Context) ([]inject.Injection, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.queue), nil
}

func (h *fakeHost) Interrupts() <-chan struct{} { return h.intr }

func (h *fakeHost) Arrivals() <-chan struct{} { return h.arr }

func (h *fakeHost) UrgentWaiting(context.Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.ContainsFunc(h.queue, func(q inject.Injection) bool { return q.Urgent })
}

func (h *fakeHost) Allow(context.Context) *engine.Stop { return nil }

func (h *fakeHost) RecordLearning(context.Context, engine.Learning) error { return nil }

func (h *fakeHost) Now() time.Time { return time.Now() }

// inject queues a message, signalling an urgent one.
func (h *fakeHost) inject(kind inject.Kind, text string, urgent bool) int64 {
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

// delivered reports whether injection id was committed as delivered.
func (h *fakeHost) delivered(id int64) bool {
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

func (h *fakeHost) snapshot() (evs []event.Payload, steps []engine.Step) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events), slices.Clone(h.steps)
}

// has reports whether an event of kind k was observed that ok accepts.
func (h *fakeHost) has(k event.Kind, ok func(event.Payload) bool) bool {
	evs, _ := h.snapshot()
	for _, e := range evs {
		if e.EventKind() == k && (ok == nil || ok(e)) {
			return true
		}
	}
	return false
}

// manifest is the task's stored manifest.
func (h *fakeHost) manifest() *task.Manifest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.t.Manifest
}
