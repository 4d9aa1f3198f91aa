package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/knowledge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/supervisor/supervisortest"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// This file holds a harness that runs a real Syncer on a real SQLite store
// and event bus, fed the observations the executor records, with the
// executor's door as a fake that records what it is given.

var (
	_ Store     = (*sqlite.Store)(nil)
	_ Knowledge = (*sqlite.Store)(nil)
	_ Actions   = (*supervisortest.Actions)(nil)
)

// injected is one injection the Syncer queued.
type injected = supervisortest.Injected

// baseConfig is the Syncer's default configuration (config.DefaultSyncer,
// converted).
func baseConfig() Config {
	return Config{Enabled: true, Interval: 15 * time.Second,
		SameParent: true, SharedTags: true, SameFiles: true, SameGroup: true,
		Relay:        map[string]Policy{Blocking: Always, Helpful: Related, FYI: SameParent},
		MinRelevance: 0.15, MaxPerMinute: 5, Cooldown: 10 * time.Second, MaxPending: 20, PendingTTL: 10 * time.Minute,
		Extract:    knowledge.ExtractConfig{Errors: true, Discoveries: true, Statements: true},
		Similarity: 0.75, Brief: 3, MaxMessage: 600}
}

// harness runs one Syncer. In a synctest bubble (bubble set) every record
// waits until the Syncer has done all it will do with it; outside one the
// tests poll for what they expect.
type harness struct {
	t      testing.TB
	bubble bool
	bus    *event.Bus
	st     *sqlite.Store
	act    *supervisortest.Actions
	s      *Syncer

	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// newHarness opens a store in a temporary directory, with a bus that hears
// every committed event. Tasks are added with task before start.
func newHarness(t testing.TB, bubble bool) *harness {
	t.Helper()
	bus := event.NewBus(event.Options{}, 0)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "neuraphage.db"), sqlite.Options{Publish: bus.Publish})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, bubble: bubble, bus: bus, st: st, act: &supervisortest.Actions{}, done: make(chan error, 1)}
	t.Cleanup(func() {
		if err := h.stop(); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
		bus.Close()
		if err := st.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	return h
}

// start runs a Syncer with cfg; opt may change its options.
func (h *harness) start(cfg Config, opt func(*Options)) *Syncer {
	h.t.Helper()
	o := Options{Config: cfg, Store: h.st, Knowledge: h.st, Bus: h.bus, Actions: h.act}
	if opt != nil {
		opt(&o)
	}
	h.s = New(o)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.s.Run(ctx) }()
	if h.bubble {
		synctest.Wait()
	} else {
		testkit.WaitFor(h.t, "the Syncer to follow the bus", func() bool { return h.bus.Stats().Subscribers > 0 })
	}
	return h.s
}

// stop cancels Run and returns its error; it may be called again, and
// before start.
func (h *harness) stop() error {
	h.once.Do(func() {
		if h.cancel == nil {
			return
		}
		h.cancel()
		select {
		case h.err = <-h.done:
		case <-time.After(time.Minute):
			h.err = fmt.Errorf("run did not return a minute after its context ended")
		}
	})
	return h.err
}

// settle waits until the Syncer is done with what it was given: in a
// bubble, until every goroutine is blocked; outside, until cond holds.
func (h *harness) settle(what string, cond func() bool) {
	h.t.Helper()
	if h.bubble {
		synctest.Wait()
		if cond != nil && !cond() {
			h.t.Fatalf("%s: not so once the Syncer settled", what)
		}
		return
	}
	if cond != nil {
		testkit.WaitFor(h.t, what, cond)
	}
}

// task stores a task in status st and returns its agent.
func (h *harness) task(id task.ID, desc string, tags []string, st task.Status, mod func(*task.Task)) *agent {
	h.t.Helper()
	now := time.Now().UTC()
	t := task.Task{ID: id, Description: desc, Tags: tags, Status: st, Persona: "junior", Engine: "native",
		Worktree: "/home/dev/.neuraphage/worktrees/" + string(id), CreatedAt: now, UpdatedAt: now}
	if mod != nil {
		mod(&t)
	}
	if _, err := h.st.CreateTask(context.Background(), t); err != nil {
		h.t.Fatal(err)
	}
	return &agent{Agent: testkit.Agent{ID: id}, h: h, id: id}
}

// pub records an event, as the executor does; the store publishes it.
func (h *harness) pub(id task.ID, p event.Payload) {
	h.t.Helper()
	if _, err := h.st.AppendEvents(context.Background(), event.New(time.Now().UTC(), id, p)); err != nil {
		h.t.Fatal(err)
	}
	if h.bubble {
		synctest.Wait()
	}
}

// messages returns the sync messages the store holds for q.
func (h *harness) messages(q store.SyncQuery) []store.SyncMessage {
	h.t.Helper()
	ms, err := h.st.SyncMessages(context.Background(), q)
	if err != nil {
		h.t.Fatal(err)
	}
	return ms
}

// waitQueued waits until n sync messages are queued (or delivered);
// outside a bubble only.
func (h *harness) waitQueued(n int) {
	h.t.Helper()
	testkit.WaitFor(h.t, fmt.Sprintf("%d queued sync messages", n), func() bool {
		// Marked queued before the injection, which records its id.
		ms := h.messages(store.SyncQuery{States: []store.SyncState{store.SyncQueued, store.SyncDelivered}})
		return len(ms) == n && !slices.ContainsFunc(ms, func(m store.SyncMessage) bool { return m.InjectionID == 0 })
	})
}

// events returns the payloads of type P recorded about task id (all tasks
// when id is empty).
func eventsOf[P event.Payload](h *harness, id task.ID) []P {
	h.t.Helper()
	evs, err := h.st.ReadEvents(context.Background(), event.Query{Filter: event.Filter{Kinds: []string{"sync"}}})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []P
	for _, e := range evs {
		if p, ok := e.Payload.(P); ok && (id == "" || e.TaskID == id) {
			out = append(out, p)
		}
	}
	return out
}

// agent records one task's observations as the native agent and the
// executor do (internal/agent/loop.go, internal/executor/host.go).
type agent struct {
	testkit.Agent
	h  *harness
	id task.ID
}

// status moves the task in the store, with its task.status event.
func (a *agent) status(to task.Status) {
	a.h.t.Helper()
	_, _, err := a.h.st.UpdateTask(context.Background(), a.id, func(t *task.Task) ([]event.Event, error) {
		from := t.Status
		t.Status = to
		return []event.Event{event.New(time.Now().UTC(), a.id, event.TaskStatus{From: from, To: to})}, nil
	})
	if err != nil {
		a.h.t.Fatal(err)
	}
	if a.h.bubble {
		synctest.Wait()
	}
}

// learn records a learning as the record_learning tool does: the call,
// then the store's RecordLearning with its agent.learning event, then the
// tool's result. It returns the stored learning.
func (a *agent) learn(summary, detail string, tags ...string) store.Learning {
	a.h.t.Helper()
	callID := a.NextCall()
	args := map[string]any{"summary": summary}
	if detail != "" {
		args["detail"] = detail
	}
	if len(tags) > 0 {
		args["tags"] = tags
	}
	raw, err := json.Marshal(args)
	if err != nil {
		a.h.t.Fatal(err)
	}
	a.h.pub(a.id, event.ToolCall{Turn: a.Turn, CallID: callID, Name: "record_learning", Args: raw})
	l := a.record(summary, detail, tags...)
	a.h.pub(a.id, event.ToolResult{Turn: a.Turn, CallID: callID, Name: "record_learning", Size: 8, Preview: "Recorded."})
	return l
}

// record is the store's side of record_learning alone (internal/executor's
// host.RecordLearning).
func (a *agent) record(summary, detail string, tags ...string) store.Learning {
	a.h.t.Helper()
	l, _, err := a.h.st.RecordLearning(context.Background(), store.Learning{TaskID: a.id, Summary: summary, Detail: detail,
		Tags: tags, CreatedAt: time.Now().UTC()},
		func(sl store.Learning) []event.Event {
			return []event.Event{event.New(sl.CreatedAt, a.id, event.Learning{Turn: a.Turn, LearningID: sl.ID, Summary: sl.Summary, Tags: sl.Tags})}
		})
	if err != nil {
		a.h.t.Fatal(err)
	}
	if a.h.bubble {
		synctest.Wait()
	}
	return l
}

// tool runs one turn with one tool call, as the native agent reports it:
// turn.started, the call, its result, the files it changed, turn.ended.
func (a *agent) tool(name string, args map[string]string, out string, failed bool, changes ...string) {
	a.h.t.Helper()
	for _, p := range a.ToolTurn(name, args, out, failed, changes...) {
		a.h.pub(a.id, p)
	}
}

// edit changes a file with edit_file.
func (a *agent) edit(path string) {
	a.tool("edit_file", map[string]string{"path": path, "old_text": "TODO", "new_text": "done"}, "Edited "+path+".", false, path)
}

// deliver records the receipt of injections of the given kinds.
func (a *agent) deliver(ids []int64, kinds []string) {
	a.h.t.Helper()
	a.h.pub(a.id, a.Delivered(ids, kinds))
}

// syncs returns the sync injections sent to the agent's task.
func (a *agent) syncs() []injected {
	var out []injected
	for _, i := range a.h.act.To(a.id) {
		if i.Kind == inject.Sync {
			out = append(out, i)
		}
	}
	return out
}

// froms returns the from attribute of each sync injection sent to the task.
func (a *agent) froms() []string {
	var out []string
	for _, i := range a.syncs() {
		out = append(out, i.Attrs["from"])
	}
	return out
}

// states counts the store's sync messages per state.
func states(ms []store.SyncMessage) map[store.SyncState]int {
	out := map[store.SyncState]int{}
	for _, m := range ms {
		out[m.State]++
	}
	return out
}

// recipients returns the recipients of sync messages, sorted.
func recipients(ms []store.SyncMessage) []task.ID {
	var out []task.ID
	for _, m := range ms {
		out = append(out, m.TaskID)
	}
	slices.Sort(out)
	return out
}
