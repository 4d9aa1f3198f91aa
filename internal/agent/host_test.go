package agent

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// memHost is an in-memory engine.Host that records everything, with the
// store's exactly-once delivery rule.
type memHost struct {
	mu         sync.Mutex
	msgs       []llm.Message
	inbox      []inject.Injection
	delivered  map[int64]int // injection ID → times delivered
	events     []event.Payload
	commits    int
	prepared   int                // Prepare calls
	onPrepare  func(t *task.Task) // called by Prepare under the lock: a change of persona
	calls      []engine.Call
	learnings  []engine.Learning
	task       task.Task
	stop       *engine.Stop
	interrupts chan struct{}
	now        func() time.Time
	failCommit error
	onCommit   func(engine.Step)
}

func newMemHost(t task.Task) *memHost {
	return &memHost{task: t, delivered: map[int64]int{}, interrupts: make(chan struct{}, 1), now: time.Now}
}

func (h *memHost) Emit(ps ...event.Payload) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ps...)
}

func (h *memHost) Conversation(context.Context) ([]llm.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.msgs), nil
}

func (h *memHost) Commit(_ context.Context, s engine.Step) (task.Task, error) {
	h.mu.Lock()
	if h.failCommit != nil {
		defer h.mu.Unlock()
		return task.Task{}, h.failCommit
	}
	for _, inj := range s.Delivered {
		if h.delivered[inj.ID] > 0 {
			h.mu.Unlock()
			return task.Task{}, errors.New("injection delivered twice")
		}
	}
	for _, inj := range s.Delivered {
		h.delivered[inj.ID]++
		h.inbox = slices.DeleteFunc(h.inbox, func(i inject.Injection) bool { return i.ID == inj.ID })
	}
	if s.Replace {
		h.msgs = slices.Clone(s.Messages)
	} else {
		h.msgs = append(h.msgs, s.Messages...)
	}
	if s.Call != nil {
		h.calls = append(h.calls, *s.Call)
		h.task.Usage.Iterations++
		h.task.Usage.CostUSD += s.Call.CostUSD
	}
	h.events = append(h.events, s.Events...)
	h.commits++
	t := h.task
	cb := h.onCommit
	h.mu.Unlock()
	if cb != nil {
		cb(s)
	}
	return t, nil
}

func (h *memHost) Prepare(context.Context) (task.Task, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.prepared++
	if h.onPrepare != nil {
		h.onPrepare(&h.task)
	}
	return h.task, nil
}

func (h *memHost) UrgentWaiting(context.Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, inj := range h.inbox {
		if inj.Urgent {
			return true
		}
	}
	return false
}

func (h *memHost) Inbox(context.Context) ([]inject.Injection, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.inbox), nil
}

func (h *memHost) Interrupts() <-chan struct{} { return h.interrupts }

func (h *memHost) Allow(context.Context) *engine.Stop {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stop
}

func (h *memHost) RecordLearning(_ context.Context, l engine.Learning) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.learnings = append(h.learnings, l)
	return nil
}

func (h *memHost) Now() time.Time { return h.now() }

// inject queues an injection, signalling an interrupt when it is urgent.
func (h *memHost) inject(inj inject.Injection) {
	h.mu.Lock()
	h.inbox = append(h.inbox, inj)
	h.mu.Unlock()
	if inj.Urgent {
		select {
		case h.interrupts <- struct{}{}:
		default:
		}
	}
}

// kinds returns the kinds of the recorded events.
func (h *memHost) kinds() []event.Kind {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ks []event.Kind
	for _, p := range h.events {
		if p.EventKind() != event.KindTextDelta {
			ks = append(ks, p.EventKind())
		}
	}
	return ks
}

func (h *memHost) conversation() []llm.Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.msgs)
}
