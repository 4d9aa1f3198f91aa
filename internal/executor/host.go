package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// host is the executor's side of one run.
type host struct {
	e  *Executor
	id task.ID
	r  *run

	mu     sync.Mutex
	length int       // the stored conversation's length, as this run knows it
	latest task.Task // the task as last stored
	// inbox is what the last Prepare left for the model, until Inbox
	// takes it (prepared): the boundary reads the queue once.
	inbox    []inject.Injection
	prepared bool
}

func (e *Executor) newHost(t task.Task, r *run) *host {
	return &host{e: e, id: t.ID, r: r, latest: t}
}

// Emit implements engine.Host.
func (h *host) Emit(ps ...event.Payload) {
	now := h.e.now()
	var logged []event.Event
	for _, p := range ps {
		ev := event.New(now, h.id, p)
		if ev.Transient() {
			h.e.bus.Publish(ev)
			continue
		}
		logged = append(logged, ev)
	}
	if len(logged) == 0 {
		return
	}
	if err := h.e.runSt.EmitEvents(context.Background(), logged...); err != nil {
		h.e.log.Warn("recording observations", "task_id", h.id, "err", err)
	}
}

// Conversation implements engine.Host.
func (h *host) Conversation(ctx context.Context) ([]llm.Message, error) {
	entries, err := h.e.runSt.Conversation(ctx, h.id, 0)
	if err != nil {
		return nil, err
	}
	msgs := make([]llm.Message, len(entries))
	for i, en := range entries {
		msgs[i] = en.Message
	}
	h.mu.Lock()
	h.length = len(entries)
	h.mu.Unlock()
	return msgs, nil
}

// Commit implements engine.Host.
func (h *host) Commit(ctx context.Context, s engine.Step) (task.Task, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.e.now()
	cp := store.Checkpoint{TaskID: h.id, From: h.length, Replace: s.Replace, DeliveredAt: now}
	for _, m := range s.Messages {
		cp.Entries = append(cp.Entries, store.Entry{Turn: s.Turn, At: now, Message: m})
	}
	for _, inj := range s.Delivered {
		cp.Delivered = append(cp.Delivered, inj.ID)
	}
	if c := s.Call; c != nil {
		cp.Charges = []store.Charge{charge(now, c)}
	}
	if s.Call != nil || s.Manifest != nil {
		c, m := s.Call, s.Manifest
		cp.Mutate = func(t *task.Task) ([]event.Event, error) {
			if c != nil {
				t.Usage.Iterations++
				addUsage(t, c)
			}
			if m != nil {
				mc := *m
				t.Manifest = &mc
			}
			t.UpdatedAt = now
			return nil, nil
		}
	}
	evs := make([]event.Event, len(s.Events))
	for i, p := range s.Events {
		evs[i] = event.New(now, h.id, p)
	}
	// A full disk holds the run here, retrying, until space returns (or
	// the run is stopped): the step is not lost and the task stays running
	// as the store says.
	var t task.Task
	err := h.e.writeRetrying(ctx, h.id, fmt.Sprintf("turn %d", s.Turn), func(ctx context.Context) error {
		var err error
		t, _, err = h.e.runSt.Checkpoint(ctx, cp, evs...)
		return err
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("storing turn %d: %w", s.Turn, err)
	}
	if s.Replace {
		h.length = len(s.Messages)
	} else {
		h.length += len(s.Messages)
	}
	h.latest = t
	if s.Call != nil {
		h.e.spend.add(now, s.Call.CostUSD)
	}
	return t, nil
}

// Prepare implements engine.Host: it reads the task's queue, once for the
// boundary, and performs the requests waiting there that the executor
// carries out itself, in queue order: blocking rebases (each replaced in
// the queue by its outcome, which the model sees; a crash in between
// repeats the rebase, which then finds the branch up to date) and persona
// changes. What is left, with the outcomes queued, is what the boundary's
// Inbox returns. It returns the task as stored then.
func (h *host) Prepare(ctx context.Context) (task.Task, error) {
	h.mu.Lock()
	h.inbox, h.prepared = nil, false
	h.mu.Unlock()
	pending, err := h.e.st.Pending(ctx, h.id)
	if err != nil {
		return task.Task{}, err
	}
	changed := false
	var inbox, outcomes []inject.Injection
	for _, p := range pending {
		switch {
		case h.e.rebase != nil && p.IsBlockingRebase():
			queued, err := h.rebase(ctx, p)
			if err != nil {
				return task.Task{}, err
			}
			outcomes = append(outcomes, queued...)
		case h.e.personas != nil && p.IsPersonaRequest():
			queued, err := h.escalate(ctx, p)
			if err != nil {
				return task.Task{}, err
			}
			outcomes = append(outcomes, queued...)
			changed = true
		default:
			inbox = append(inbox, p)
		}
	}
	// The outcomes were queued after everything read: they come last, as
	// a read of the queue would order them.
	inbox = append(inbox, outcomes...)
	var t task.Task
	if changed {
		if t, err = h.e.st.GetTask(ctx, h.id); err != nil {
			return task.Task{}, err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inbox, h.prepared = inbox, true
	if changed {
		h.latest = t
	}
	// Unchanged, the task is as the run last stored it (a change while
	// it runs comes only through requests).
	return h.latest, nil
}

// rebase performs one blocking rebase request and returns what it queued
// for the task: the outcome, and a pause when the rebaser asks for one.
func (h *host) rebase(ctx context.Context, p inject.Injection) ([]inject.Injection, error) {
	h.mu.Lock()
	t := h.latest
	h.mu.Unlock()
	reply := h.e.rebase(ctx, t, p)
	out := inject.Injection{TaskID: h.id, Kind: inject.Rebase, Source: p.Source, Urgency: p.Urgency,
		Outcome: reply.Outcome, Attrs: maps.Clone(p.Attrs), Text: reply.Text}
	if out.Outcome == "" {
		out.Outcome = inject.Done
	}
	stored, err := h.e.Inject(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("storing the rebase's outcome: %w", err)
	}
	queued := []inject.Injection{stored}
	if _, err := h.e.st.MarkDelivered(ctx, []int64{p.ID}, h.e.now()); err != nil {
		return nil, err
	}
	if reply.Pause != "" {
		pause, err := h.e.Inject(ctx, inject.Injection{TaskID: h.id, Kind: inject.Pause, Source: p.Source, Text: reply.Pause})
		if err != nil {
			return nil, err
		}
		queued = append(queued, pause)
	}
	return queued, nil
}

// escalate performs one persona change request and returns what it queued
// for the task (the outcome the model sees). The target was checked when
// the request was made; a change the chain no longer allows is refused
// now, recorded, and the model is not told.
func (h *host) escalate(ctx context.Context, p inject.Injection) ([]inject.Injection, error) {
	h.mu.Lock()
	turn := h.latest.Usage.Iterations
	h.mu.Unlock()
	by := words.Or(p.Attrs["by"], string(p.Source))
	var queued []inject.Injection
	told, err := h.e.applyEscalation(ctx, h.id, p.Attrs["from"], p.Attrs["to"], p.Attrs["reason"], by, turn, false)
	if err != nil {
		var fe *task.FinishedError
		switch {
		case errors.As(err, &fe):
			return nil, err
		case errors.Is(err, errSuperseded):
			_, err := h.e.st.MarkDelivered(ctx, []int64{p.ID}, h.e.now())
			return nil, err
		}
		h.e.record(ctx, h.id, event.EscalationRefused{From: p.Attrs["from"], To: p.Attrs["to"], Reason: err.Error(), By: by})
	} else if told.ID != 0 {
		queued = append(queued, told)
	}
	if _, err := h.e.st.MarkDelivered(ctx, []int64{p.ID}, h.e.now()); err != nil {
		return nil, err
	}
	return queued, nil
}

// Inbox implements engine.Host: after Prepare, the queue as Prepare read
// it (taken once: the next call reads the queue again). Blocking rebase
// and persona requests are never in it: Prepare performs them and queues
// their outcome instead.
func (h *host) Inbox(ctx context.Context) ([]inject.Injection, error) {
	h.mu.Lock()
	inbox, prepared := h.inbox, h.prepared
	h.inbox, h.prepared = nil, false
	h.mu.Unlock()
	if prepared {
		return inbox, nil
	}
	pending, err := h.e.st.Pending(ctx, h.id)
	if err != nil {
		return nil, err
	}
	out := make([]inject.Injection, 0, len(pending))
	for _, p := range pending {
		if h.e.rebase != nil && p.IsBlockingRebase() || h.e.personas != nil && p.IsPersonaRequest() {
			// A request waits for the next boundary's Prepare: the
			// engine sees only its outcome.
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// UrgentWaiting implements engine.Host.
func (h *host) UrgentWaiting(ctx context.Context) bool {
	pending, err := h.e.st.Pending(ctx, h.id)
	if err != nil {
		return false
	}
	for _, p := range pending {
		if p.Urgent {
			return true
		}
	}
	return false
}

// Interrupts implements engine.Host.
func (h *host) Interrupts() <-chan struct{} { return h.r.interrupts }

// Arrivals implements engine.Arrivals.
func (h *host) Arrivals() <-chan struct{} { return h.r.arrivals }

// Allow implements engine.Host: the task's budgets, then the fleet's.
func (h *host) Allow(ctx context.Context) *engine.Stop {
	h.mu.Lock()
	t := h.latest
	h.mu.Unlock()
	if reason := overBudget(t, h.e.cfg); reason != "" {
		return &engine.Stop{Status: engine.Paused, Reason: reason}
	}
	if reason := h.e.spend.over(h.e.cfg, h.e.now()); reason != "" {
		return &engine.Stop{Status: engine.Paused, Reason: reason}
	}
	return nil
}

// budgetPrefix starts the reason of every pause for a spent budget, and
// sharedBudgetPrefix the reasons for the daily and fleet budgets; Resume
// tells a task's own budget from the shared ones by them.
const (
	budgetPrefix       = "budget: "
	sharedBudgetPrefix = budgetPrefix + "the "
)

// overBudget returns why t has spent its budget, or "".
func overBudget(t task.Task, cfg Config) string {
	b, u := effectiveBudget(t, cfg), t.Usage
	switch {
	case b.MaxIterations > 0 && u.Iterations >= b.MaxIterations:
		return fmt.Sprintf("%sreached its limit of %d model calls", budgetPrefix, b.MaxIterations)
	case b.MaxTokens > 0 && u.InputTokens+u.OutputTokens >= b.MaxTokens:
		return fmt.Sprintf("%sused %d of its %d tokens", budgetPrefix, u.InputTokens+u.OutputTokens, b.MaxTokens)
	case b.MaxCostUSD > 0 && u.CostUSD >= b.MaxCostUSD:
		return fmt.Sprintf("%sspent $%.4f of its $%.2f", budgetPrefix, u.CostUSD, b.MaxCostUSD)
	}
	return ""
}

// effectiveBudget is t's budget with the configured defaults filled in.
func effectiveBudget(t task.Task, cfg Config) task.Budget {
	b := t.Budget
	if b.MaxIterations == 0 {
		b.MaxIterations = cfg.MaxIterations
	}
	if b.MaxCostUSD == 0 {
		b.MaxCostUSD = cfg.TaskUSD
	}
	return b
}

// isBudgetPause reports whether a paused task stopped for its own budget.
func isBudgetPause(t task.Task) bool {
	return t.Status == task.Paused && strings.HasPrefix(t.CloseReason, budgetPrefix) &&
		!strings.HasPrefix(t.CloseReason, sharedBudgetPrefix)
}

// RecordLearning implements engine.Host.
func (h *host) RecordLearning(ctx context.Context, l engine.Learning) error {
	_, _, err := h.e.runSt.RecordLearning(ctx, store.Learning{TaskID: h.id, Summary: l.Summary, Detail: l.Detail, Tags: l.Tags, CreatedAt: h.e.now()},
		func(sl store.Learning) []event.Event {
			return []event.Event{event.New(sl.CreatedAt, h.id, event.Learning{Turn: l.Turn, LearningID: sl.ID, Summary: sl.Summary, Tags: sl.Tags})}
		})
	return err
}

// Now implements engine.Host.
func (h *host) Now() time.Time { return h.e.now() }

// charge is the cost-ledger row of one model call.
func charge(now time.Time, c *engine.Call) store.Charge {
	u := c.Usage
	return store.Charge{At: now, Provider: c.Provider, Model: c.Model,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		CostUSD: c.CostUSD, DurationMs: c.Duration.Milliseconds()}
}

// addUsage adds one model call's tokens and cost to the task's usage.
func addUsage(t *task.Task, c *engine.Call) {
	u := c.Usage
	t.Usage.InputTokens += u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	t.Usage.OutputTokens += u.OutputTokens
	t.Usage.CostUSD += c.CostUSD
}
