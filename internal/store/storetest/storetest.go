// Package storetest is the conformance suite for store.Store: every
// implementation runs Run in its own tests.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
		{"ListSummaries", testSummaries},
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
		{"WatchSessions", testWatchSessions},
		{"WatchEvaluations", testWatchEvaluations},
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
	// Pages: After continues where Limit stopped, under any filter.
	for _, opts := range []store.ListOptions{{}, {ParentID: parent.ID}, {Statuses: []task.Status{task.Queued}}} {
		whole, err := s.ListTasks(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		var paged []task.ID
		page := opts
		page.Limit = 2
		for range 10 {
			got, err := s.ListSummaries(ctx, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, sm := range got {
				paged = append(paged, sm.ID)
			}
			if len(got) < page.Limit {
				break
			}
			page.After = got[len(got)-1].ID
		}
		if diff := cmp.Diff(idsOf(whole), paged); diff != "" {
			t.Errorf("ListSummaries(%+v) in pages of 2 (-whole +paged):\n%s", opts, diff)
		}
	}
	// The JSON pages follow Next to the end.
	var paged []task.ID
	page := store.ListOptions{Limit: 2}
	for range 10 {
		p, err := s.ListSummariesJSON(ctx, page)
		if err != nil {
			t.Fatal(err)
		}
		var sms []task.Summary
		if err := json.Unmarshal([]byte("["+string(p.JSON)+"]"), &sms); err != nil {
			t.Fatalf("%v\n%s", err, p.JSON)
		}
		for _, sm := range sms {
			paged = append(paged, sm.ID)
		}
		if p.Next == "" {
			break
		}
		page.After = p.Next
	}
	if diff := cmp.Diff(want, paged); diff != "" {
		t.Errorf("ListSummariesJSON in pages of 2 following Next (-want +got):\n%s", diff)
	}
	if _, err := s.ListSummaries(ctx, store.ListOptions{After: "t-nosuch"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ListSummaries(After unknown) error = %v, want ErrNotFound", err)
	}
}

// testSummaries checks that the listing columns say what the stored tasks
// say, for tasks of every shape and after every kind of write.
func testSummaries(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openFresh(t, open)
	ids := &fixedIDs{}
	descs := []string{
		"plain",
		"first line\nsecond line\n\n  indented third",
		"  \t leading space and\r\nCRLF lines  ",
		strings.Repeat("long words without a break ", 20),
		"ünïcødé 日本語 " + strings.Repeat("é", 200),
		"invalid \xff\xfe bytes",
	}
	var all []task.ID
	for i, d := range descs {
		tk := newTask(t, ids.next(), d, func(sp *task.Spec) {
			sp.Priority = i % 5
			sp.Persona = []string{"", "senior", "dba"}[i%3]
			sp.Engine = []string{"", "native"}[i%2]
			sp.Model = []string{"", "sonnet"}[i%2]
			sp.Hold = i%2 == 1
			if i > 0 {
				sp.ParentID = all[0]
			}
		})
		tk.CreatedAt = tk.CreatedAt.Add(time.Duration(i) * time.Second)
		mustCreate(t, s, tk)
		all = append(all, tk.ID)
	}
	check := func(when string) {
		t.Helper()
		for _, opts := range []store.ListOptions{{}, {Statuses: []task.Status{task.Running, task.Completed}}, {ParentID: all[0], Limit: 3}} {
			ts, err := s.ListTasks(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]task.Summary, len(ts))
			for i, tk := range ts {
				want[i] = tk.Summarize()
			}
			got, err := s.ListSummaries(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: ListSummaries(%+v) differs from the stored tasks (-tasks +summaries):\n%s", when, opts, diff)
			}
			raw, err := s.ListSummariesJSON(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			var decoded []task.Summary
			if err := json.Unmarshal([]byte("["+string(raw.JSON)+"]"), &decoded); err != nil {
				t.Fatalf("ListSummariesJSON is not summaries joined by commas: %v\n%s", err, raw.JSON)
			}
			if raw.N != len(decoded) {
				t.Errorf("ListSummariesJSON: N = %d, %d summaries", raw.N, len(decoded))
			}
			if diff := cmp.Diff(want, decoded, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: ListSummariesJSON(%+v) differs from the stored tasks (-tasks +summaries):\n%s", when, opts, diff)
			}
			var next task.ID
			if opts.Limit > 0 {
				whole := opts
				whole.Limit = 0
				if all, err := s.ListTasks(ctx, whole); err != nil {
					t.Fatal(err)
				} else if len(all) > opts.Limit {
					next = ts[len(ts)-1].ID
				}
			}
			if raw.Next != next {
				t.Errorf("%s: ListSummariesJSON(%+v).Next = %q, want %q", when, opts, raw.Next, next)
			}
		}
	}
	check("created")
	update := func(id task.ID, m func(tk *task.Task)) {
		t.Helper()
		if _, _, err := s.UpdateTask(ctx, id, func(tk *task.Task) ([]event.Event, error) {
			m(tk)
			tk.UpdatedAt = tk.UpdatedAt.Add(time.Second)
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	mustMove := func(id task.ID, to task.Status, reason string) {
		t.Helper()
		if _, _, err := s.UpdateTask(ctx, id, transition(to, reason)); err != nil {
			t.Fatal(err)
		}
	}
	mustMove(all[0], task.Running, "")
	mustMove(all[2], task.Running, "")
	check("started")
	update(all[0], func(tk *task.Task) {
		tk.Usage = task.Usage{Iterations: 3, InputTokens: 12_345, OutputTokens: 678, CostUSD: 0.1 + 0.2}
		tk.Persona, tk.Engine, tk.Model = "expert", "native", "opus"
	})
	update(all[2], func(tk *task.Task) {
		tk.Usage.CostUSD = 1e-9
		tk.ResumePending = true
		tk.Description = "rewritten\ndescription"
	})
	check("usage and fields changed")
	// The indexed columns too (a write that keeps them leaves them out).
	update(all[3], func(tk *task.Task) { tk.ParentID = ""; tk.CreatedAt = tk.CreatedAt.Add(-time.Hour) })
	update(all[5], func(tk *task.Task) { tk.ParentID = all[2] })
	check("parent and creation time changed")
	mustMove(all[0], task.Completed, "done: "+strings.Repeat("x", 300))
	mustMove(all[4], task.Cancelled, "no longer needed")
	update(all[2], func(tk *task.Task) { tk.Usage.CostUSD = 123456.789; tk.ResumePending = false })
	check("finished")
	// A checkpoint changes the task through the same write.
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: all[2], Mutate: func(tk *task.Task) ([]event.Event, error) {
		tk.Usage.Iterations++
		tk.Usage.OutputTokens += 99
		return nil, nil
	}}); err != nil {
		t.Fatal(err)
	}
	check("checkpointed")
}

func idsOf(ts []task.Task) []task.ID {
	out := make([]task.ID, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}
