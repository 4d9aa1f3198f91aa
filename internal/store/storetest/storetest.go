// Package storetest is the conformance suite for store.Store: every
// implementation runs Run in its own tests.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Opener opens the implementation's store kept in dir, publishing committed
// events to publish. Opening the same dir again must find the same data.
type Opener func(t *testing.T, dir string, publish func(...event.Event)) store.Store

// Run runs the conformance suite.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"CreateAndGet", testCreateAndGet},
		{"CreateRefusesDuplicatesAndMissingParent", testCreateRefuses},
		{"UpdateAppliesMutationWithEvents", testUpdate},
		{"UpdateErrorChangesNothing", testUpdateError},
		{"ResolveTask", testResolve},
		{"ListTasks", testList},
		{"Dependencies", testDependencies},
		{"Injections", testInjections},
		{"EnqueueMany", testEnqueueMany},
		{"QueueAtTheEnd", testQueueAtTheEnd},
		{"EventQueries", testEventQueries},
		{"EmitAndFlush", testEmitFlush},
		{"Reopen", testReopen},
		{"ConcurrentWritersKeepIDOrder", testConcurrent},
		{"Closed", testClosed},
		{"CheckpointConversation", testCheckpointConversation},
		{"CheckpointDeliversOnce", testCheckpointDelivery},
		{"CheckpointMutatesWithEvents", testCheckpointMutate},
		{"Costs", testCosts},
		{"Learnings", testLearnings},
		{"ForgetLearning", testForgetLearning},
		{"SyncMessages", testSyncMessages},
		{"Counts", testCounts},
		{"InjectionKinds", testInjectionKinds},
		{"Worktrees", testWorktrees},
		{"MergeEnqueue", testMergeEnqueue},
		{"MergeUpdate", testMergeUpdate},
		{"MergeList", testMergeList},
		{"MergeConcurrentEnqueue", testMergeConcurrentEnqueue},
		{"GitReopen", testGitReopen},
		{"GitClosed", testGitClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open)
		})
	}
}

// recorder collects published events.
type recorder struct {
	mu    sync.Mutex
	evs   []event.Event
	calls [][]event.Event // each call's events
}

func (r *recorder) publish(evs ...event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, evs...)
	r.calls = append(r.calls, evs)
}

// published returns the events of each call of publish so far.
func (r *recorder) published() [][]event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]event.Event(nil), r.calls...)
}

func (r *recorder) events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.evs...)
}

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

type fixedIDs struct{ n int }

func (f *fixedIDs) next() task.ID {
	f.n++
	return task.ID(fmt.Sprintf("t-%05d", f.n))
}

func newTask(t *testing.T, id task.ID, desc string, mod func(*task.Spec)) task.Task {
	t.Helper()
	spec := task.Spec{Description: desc, Priority: 2, Tags: []string{"auth"}}
	if mod != nil {
		mod(&spec)
	}
	tk, err := task.New(id, spec, t0)
	if err != nil {
		t.Fatalf("task.New: %v", err)
	}
	return tk
}

func created(tk task.Task) event.Event {
	return event.New(tk.CreatedAt, tk.ID, event.TaskCreated{Description: tk.Description, Status: tk.Status, Priority: tk.Priority})
}

func mustCreate(t *testing.T, s store.Store, tk task.Task) {
	t.Helper()
	if _, err := s.CreateTask(context.Background(), tk, created(tk)); err != nil {
		t.Fatalf("CreateTask(%s): %v", tk.ID, err)
	}
}

func openFresh(t *testing.T, open Opener) (store.Store, *recorder) {
	t.Helper()
	r := &recorder{}
	s := open(t, t.TempDir(), r.publish)
	t.Cleanup(func() { s.Close() })
	return s, r
}

func transition(to task.Status, reason string) store.Mutation {
	return func(tk *task.Task) ([]event.Event, error) {
		from := tk.Status
		if err := tk.Transition(to, reason, t0.Add(time.Minute)); err != nil {
			return nil, err
		}
		return []event.Event{event.New(t0.Add(time.Minute), tk.ID, event.TaskStatus{From: from, To: to, Reason: reason})}, nil
	}
}

func testCreateAndGet(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "add token expiry checks", func(sp *task.Spec) {
		sp.Context = "see docs/auth.md"
		sp.Tags = []string{"auth", "jwt"}
		sp.Persona, sp.Engine, sp.Model, sp.Repo = "senior", "native", "m", "/repo"
		sp.Budget = task.Budget{MaxIterations: 10, MaxTokens: 1000, MaxCostUSD: 1.5}
	})
	evs, err := s.CreateTask(ctx, tk, created(tk))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].ID <= 0 {
		t.Fatalf("CreateTask events = %+v, want one with an id", evs)
	}
	got, err := s.GetTask(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tk, got); diff != "" {
		t.Errorf("GetTask mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(evs, rec.events()); diff != "" {
		t.Errorf("published events mismatch (-want +got):\n%s", diff)
	}
	if _, err := s.GetTask(ctx, "t-zzzzz"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetTask(unknown) error = %v, want ErrNotFound", err)
	}
}

func testCreateRefuses(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "one", nil)
	mustCreate(t, s, tk)
	if _, err := s.CreateTask(ctx, tk, created(tk)); !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate CreateTask error = %v, want ErrExists", err)
	}
	orphan := newTask(t, "t-bbbbb", "orphan", func(sp *task.Spec) { sp.ParentID = "t-nope0" })
	if _, err := s.CreateTask(ctx, orphan, created(orphan)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateTask with missing parent error = %v, want ErrNotFound", err)
	}
	if n := len(rec.events()); n != 1 {
		t.Errorf("refused creations published events: got %d events, want 1", n)
	}
}

func testUpdate(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "one", nil)
	mustCreate(t, s, tk)
	got, evs, err := s.UpdateTask(ctx, tk.ID, transition(task.Running, ""))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != task.Running || got.StartedAt == nil {
		t.Errorf("after update: status %s started %v, want running with a start time", got.Status, got.StartedAt)
	}
	if len(evs) != 1 || evs[0].ID <= 1 {
		t.Errorf("update events = %+v, want one with id > 1", evs)
	}
	stored, err := s.GetTask(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, stored); diff != "" {
		t.Errorf("stored task differs from returned (-returned +stored):\n%s", diff)
	}
	pub := rec.events()
	if len(pub) != 2 || pub[1].Kind != event.KindTaskStatus {
		t.Fatalf("published = %+v, want created then status", pub)
	}
	if p, ok := pub[1].Payload.(event.TaskStatus); !ok || p.From != task.Queued || p.To != task.Running {
		t.Errorf("status payload = %#v", pub[1].Payload)
	}
}

func testUpdateError(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "one", nil)
	mustCreate(t, s, tk)
	_, _, err := s.UpdateTask(ctx, tk.ID, transition(task.Completed, "")) // queued → completed is illegal
	var te *task.TransitionError
	if !errors.As(err, &te) {
		t.Fatalf("illegal transition error = %v, want *task.TransitionError", err)
	}
	// A mutation that emits events and then fails must leave no trace.
	_, _, err = s.UpdateTask(ctx, tk.ID, func(tk *task.Task) ([]event.Event, error) {
		tk.Description = "changed"
		return nil, errors.New("refused")
	})
	if err == nil || err.Error() != "refused" {
		t.Fatalf("failing mutation error = %v, want refused", err)
	}
	got, err := s.GetTask(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tk, got); diff != "" {
		t.Errorf("failed updates changed the task (-want +got):\n%s", diff)
	}
	if _, _, err := s.UpdateTask(ctx, "t-zzzzz", transition(task.Running, "")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateTask(unknown) error = %v, want ErrNotFound", err)
	}
	// IDs stay dense after failures.
	_, evs, err := s.UpdateTask(ctx, tk.ID, transition(task.Running, ""))
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].ID != 2 {
		t.Errorf("event id after failed updates = %d, want 2", evs[0].ID)
	}
	if n := len(rec.events()); n != 2 {
		t.Errorf("published %d events, want 2", n)
	}
}

func testResolve(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openFresh(t, open)
	for _, id := range []task.ID{"t-4k2x9", "t-4k2y0", "t-7abcd"} {
		mustCreate(t, s, newTask(t, id, "task "+string(id), nil))
	}
	for _, tc := range []struct {
		ref  string
		want task.ID
		err  error
	}{
		{"t-4k2x9", "t-4k2x9", nil},
		{"4k2x9", "t-4k2x9", nil},
		{"T-4K2X9", "t-4k2x9", nil},
		{"t-7a", "t-7abcd", nil},
		{"7", "t-7abcd", nil},
		{"t-9", "", store.ErrNotFound},
	} {
		got, err := s.ResolveTask(ctx, tc.ref)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("ResolveTask(%q) = %q, %v; want %q, %v", tc.ref, got, err, tc.want, tc.err)
		}
	}
	_, err := s.ResolveTask(ctx, "4k2")
	var amb *store.AmbiguousError
	if !errors.As(err, &amb) || len(amb.Matches) != 2 {
		t.Errorf("ResolveTask(ambiguous) error = %v, want *AmbiguousError with 2 matches", err)
	}
	var inv *task.InvalidError
	if _, err := s.ResolveTask(ctx, "t-!!"); !errors.As(err, &inv) {
		t.Errorf("ResolveTask(invalid) error = %v, want *task.InvalidError", err)
	}
}

func testList(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openFresh(t, open)
	ids := &fixedIDs{}
	parent := newTask(t, ids.next(), "parent", nil)
	mustCreate(t, s, parent)
	var want []task.ID
	want = append(want, parent.ID)
	for i := range 5 {
		tk := newTask(t, ids.next(), fmt.Sprintf("child %d", i), func(sp *task.Spec) { sp.ParentID = parent.ID })
		tk.CreatedAt = tk.CreatedAt.Add(time.Duration(i+1) * time.Second)
		mustCreate(t, s, tk)
		want = append(want, tk.ID)
	}
	if _, _, err := s.UpdateTask(ctx, want[2], transition(task.Running, "")); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListTasks(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, idsOf(all)); diff != "" {
		t.Errorf("ListTasks order (-want +got):\n%s", diff)
	}
	running, err := s.ListTasks(ctx, store.ListOptions{Statuses: []task.Status{task.Running}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]task.ID{want[2]}, idsOf(running)); diff != "" {
		t.Errorf("ListTasks(running) (-want +got):\n%s", diff)
	}
	children, err := s.ListTasks(ctx, store.ListOptions{ParentID: parent.ID, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[1:3], idsOf(children)); diff != "" {
		t.Errorf("ListTasks(parent, limit 2) (-want +got):\n%s", diff)
	}
	// The JSON form decodes to exactly the typed list.
	for _, opts := range []store.ListOptions{{}, {Statuses: []task.Status{task.Running}}, {Statuses: []task.Status{task.Failed}}} {
		raw, err := s.ListTasksJSON(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON []task.Task
		if err := json.Unmarshal(raw, &fromJSON); err != nil {
			t.Fatalf("ListTasksJSON(%+v) is not a JSON array of tasks: %v\n%s", opts, err, raw)
		}
		typed, err := s.ListTasks(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(typed, fromJSON, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("ListTasksJSON(%+v) differs from ListTasks (-typed +json):\n%s", opts, diff)
		}
	}
}

func idsOf(ts []task.Task) []task.ID {
	out := make([]task.ID, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}
