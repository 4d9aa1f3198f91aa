package watchers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/limit"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// world is the fakes of the service's collaborators: tasks, sessions,
// evaluations and the event log in memory, published on a real bus; the
// door; a model whose replies the test decides and may hold.
type world struct {
	bus *event.Bus

	mu     sync.Mutex
	last   int64
	tasks  map[task.ID]task.Task
	wss    map[string]store.WatchSession
	evals  []store.WatchEvaluation
	injs   []inject.Injection
	log    []event.Event
	calls  []string // the prompts the model was asked
	reply  func(prompt string) string
	cost   float64
	gate   chan struct{} // when set, each model call waits for a receive
	inCall int
	maxIn  int
	// ordinary counts model calls not marked limit.LowPriority.
	ordinary int
	// injected, when set, is told of each injection (benchmarks).
	injected chan struct{}
	// evaluated, when set, is told of each evaluation recorded.
	evaluated chan struct{}
	// lean keeps no log, prompts or evaluations (benchmarks measure the
	// service's memory, not the fakes').
	lean bool
}

func newWorld() *world {
	return &world{bus: event.NewBus(event.Options{}, 0), tasks: map[task.ID]task.Task{}, wss: map[string]store.WatchSession{},
		reply: func(string) string { return "[CONTINUE]\nfine\n[/CONTINUE]" }}
}

// publish logs and publishes events; w.mu held.
func (w *world) publishLocked(evs ...event.Event) []event.Event {
	for i := range evs {
		w.last++
		evs[i].ID = w.last
		if !w.lean {
			w.log = append(w.log, evs[i])
		}
	}
	w.bus.Publish(evs...)
	return evs
}

func (w *world) emit(id task.ID, p event.Payload) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.publishLocked(event.New(time.Now(), id, p))
}

func (w *world) addTask(id task.ID, tags ...string) {
	w.mu.Lock()
	w.tasks[id] = task.Task{ID: id, Description: "work on " + string(id), Tags: tags, Status: task.Running}
	w.mu.Unlock()
	w.emit(id, event.TaskCreated{Description: "work on " + string(id), Tags: tags, Status: task.Queued})
}

func (w *world) finish(id task.ID) {
	w.mu.Lock()
	t := w.tasks[id]
	t.Status = task.Completed
	w.tasks[id] = t
	w.mu.Unlock()
	w.emit(id, event.TaskStatus{From: task.Running, To: task.Completed})
}

func (w *world) GetTask(_ context.Context, id task.ID) (task.Task, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.tasks[id]
	if !ok {
		return t, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return t, nil
}

func (w *world) AppendEvents(_ context.Context, evs ...event.Event) ([]event.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.publishLocked(evs...), nil
}

func (w *world) ReadEvents(_ context.Context, q event.Query) ([]event.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []event.Event
	for _, e := range w.log {
		if e.ID > q.AfterID && q.Filter.Match(e) && (q.Limit == 0 || len(out) < q.Limit) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (w *world) CreateWatchSession(_ context.Context, ws store.WatchSession, evs ...event.Event) ([]event.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, x := range w.wss {
		if x.ID == ws.ID || x.Name == ws.Name {
			return nil, store.ErrExists
		}
	}
	w.wss[ws.ID] = ws
	return w.publishLocked(evs...), nil
}

func (w *world) UpdateWatchSession(_ context.Context, id string, mut func(*store.WatchSession) ([]event.Event, error)) (store.WatchSession, []event.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws, ok := w.wss[id]
	if !ok {
		return ws, nil, store.ErrNotFound
	}
	evs, err := mut(&ws)
	if err != nil {
		return ws, nil, err
	}
	w.wss[id] = ws
	return ws, w.publishLocked(evs...), nil
}

func (w *world) GetWatchSession(_ context.Context, id string) (store.WatchSession, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws, ok := w.wss[id]
	if !ok {
		return ws, store.ErrNotFound
	}
	return ws, nil
}

func (w *world) ResolveWatchSession(_ context.Context, ref string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ws := range w.wss {
		if ws.Name == ref || ws.ID == ref {
			return ws.ID, nil
		}
	}
	return "", store.ErrNotFound
}

func (w *world) ListWatchSessions(context.Context) ([]store.WatchSession, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []store.WatchSession
	for _, ws := range w.wss {
		out = append(out, ws)
	}
	return out, nil
}

func (w *world) RecordEvaluation(_ context.Context, e store.WatchEvaluation, record func(store.WatchEvaluation) []event.Event) (store.WatchEvaluation, []event.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws, ok := w.wss[e.SessionID]
	if !ok {
		return e, nil, store.ErrNotFound
	}
	e.ID = int64(len(w.evals) + 1)
	if !w.lean {
		w.evals = append(w.evals, e)
	}
	ws.SpentUSD += e.CostUSD
	ws.Evaluations++
	w.wss[ws.ID] = ws
	evs := w.publishLocked(record(e)...)
	if w.evaluated != nil {
		w.evaluated <- struct{}{}
	}
	return e, evs, nil
}

func (w *world) WatchEvaluations(_ context.Context, q store.WatchQuery) ([]store.WatchEvaluation, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []store.WatchEvaluation
	for _, e := range w.evals {
		if q.SessionID == "" || e.SessionID == q.SessionID {
			out = append(out, e)
		}
	}
	return out, nil
}

func (w *world) Inject(_ context.Context, inj inject.Injection) (inject.Injection, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t := w.tasks[inj.TaskID]; t.Status.Terminal() {
		return inj, &task.FinishedError{ID: t.ID, Status: t.Status}
	}
	inj.ID = int64(len(w.injs) + 1)
	w.injs = append(w.injs, inj)
	w.publishLocked(event.New(time.Now(), inj.TaskID, event.TaskMessage{InjectionID: inj.ID, Source: string(inj.Source), Kind: string(inj.Kind), Text: inj.Text, Urgent: inj.Urgent}))
	if w.injected != nil {
		w.injected <- struct{}{}
	}
	return inj, nil
}

func (w *world) Resolve(_ context.Context, ref string) (task.ID, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.tasks[task.ID(ref)]; ok {
		return task.ID(ref), nil
	}
	return "", store.ErrNotFound
}

// Complete is the model.
func (w *world) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	prompt := req.Messages[0].Text()
	w.mu.Lock()
	if !w.lean {
		w.calls = append(w.calls, prompt)
	}
	if !limit.IsLowPriority(ctx) {
		w.ordinary++
	}
	w.inCall++
	w.maxIn = max(w.maxIn, w.inCall)
	gate, reply, cost := w.gate, w.reply, w.cost
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.inCall--
		w.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &llm.Response{Provider: "fake", Model: "m", Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: reply(prompt)}}},
		Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}, CostUSD: cost}, nil
}

func (w *world) Stream(ctx context.Context, req *llm.Request, _ func(llm.Event)) (*llm.Response, error) {
	return w.Complete(ctx, req)
}

// snapshot returns copies of what the test checks.
func (w *world) snapshot() (calls []string, evals []store.WatchEvaluation, injs []inject.Injection, maxIn int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.calls), slices.Clone(w.evals), slices.Clone(w.injs), w.maxIn
}

func (w *world) events(kind event.Kind) []event.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []event.Event
	for _, e := range w.log {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (w *world) session(name string) store.WatchSession {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ws := range w.wss {
		if ws.Name == name {
			return ws
		}
	}
	return store.WatchSession{}
}

func contains(calls []string, s string) int {
	n := 0
	for _, c := range calls {
		if strings.Contains(c, s) {
			n++
		}
	}
	return n
}
