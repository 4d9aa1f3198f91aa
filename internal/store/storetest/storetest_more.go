package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func depEvent(d task.Dependency) event.Event {
	return event.New(t0, d.Task, event.TaskDependency{Blocker: d.Blocker})
}

func testDependencies(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	a, b, c := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil), newTask(t, "t-ccccc", "c", nil)
	for _, tk := range []task.Task{a, b, c} {
		mustCreate(t, s, tk)
	}
	// a waits for b, b waits for c.
	for _, d := range []task.Dependency{{Task: a.ID, Blocker: b.ID}, {Task: b.ID, Blocker: c.ID}} {
		if _, err := s.AddDependency(ctx, d, depEvent(d)); err != nil {
			t.Fatalf("AddDependency(%v): %v", d, err)
		}
	}
	before := len(rec.events())
	if evs, err := s.AddDependency(ctx, task.Dependency{Task: a.ID, Blocker: b.ID}, depEvent(task.Dependency{Task: a.ID, Blocker: b.ID})); err != nil || len(evs) != 0 {
		t.Errorf("repeated AddDependency = %v, %v; want no events and no error", evs, err)
	}
	var cyc *store.CycleError
	if _, err := s.AddDependency(ctx, task.Dependency{Task: c.ID, Blocker: a.ID}); !errors.As(err, &cyc) {
		t.Errorf("cycle c→a error = %v, want *CycleError", err)
	} else if diff := cmp.Diff([]task.ID{c.ID, a.ID, b.ID, c.ID}, cyc.Path); diff != "" {
		t.Errorf("cycle path (-want +got):\n%s", diff)
	}
	if _, err := s.AddDependency(ctx, task.Dependency{Task: a.ID, Blocker: a.ID}); !errors.As(err, &cyc) {
		t.Errorf("self dependency error = %v, want *CycleError", err)
	}
	if _, err := s.AddDependency(ctx, task.Dependency{Task: a.ID, Blocker: "t-zzzzz"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown blocker error = %v, want ErrNotFound", err)
	}
	if n := len(rec.events()); n != before {
		t.Errorf("refused dependencies published %d events", n-before)
	}
	bl, err := s.Blockers(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]task.ID{b.ID}, bl); diff != "" {
		t.Errorf("Blockers(a) (-want +got):\n%s", diff)
	}
	check := func(id task.ID, want task.Readiness) {
		t.Helper()
		got, err := s.Readiness(ctx, id)
		if err != nil || got != want {
			t.Errorf("Readiness(%s) = %s, %v; want %s", id, got, err, want)
		}
	}
	check(a.ID, task.Blocked)
	check(c.ID, task.Ready)
	for _, to := range []task.Status{task.Running, task.Completed} {
		if _, _, err := s.UpdateTask(ctx, b.ID, transition(to, "")); err != nil {
			t.Fatal(err)
		}
	}
	check(a.ID, task.Ready)
	if _, _, err := s.UpdateTask(ctx, c.ID, transition(task.Cancelled, "no longer needed")); err != nil {
		t.Fatal(err)
	}
	check(b.ID, task.Stranded)
}

func testInjections(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk)
	record := func(inj inject.Injection) []event.Event {
		return []event.Event{event.New(inj.CreatedAt, inj.TaskID, event.TaskMessage{InjectionID: inj.ID, Source: string(inj.Source), Text: inj.Text})}
	}
	var ids []int64
	for i, text := range []string{"first", "second", "third"} {
		inj, evs, err := s.Enqueue(ctx, inject.Injection{TaskID: tk.ID, Source: "user", Text: text, Urgent: i == 2, CreatedAt: t0}, record)
		if err != nil {
			t.Fatal(err)
		}
		if inj.ID <= 0 || len(evs) != 1 || evs[0].Payload.(event.TaskMessage).InjectionID != inj.ID {
			t.Fatalf("Enqueue = %+v, %+v", inj, evs)
		}
		ids = append(ids, inj.ID)
	}
	if _, _, err := s.Enqueue(ctx, inject.Injection{TaskID: "t-zzzzz", Source: "user", Text: "x"}, record); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Enqueue(unknown task) error = %v, want ErrNotFound", err)
	}
	pending, err := s.Pending(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []inject.Injection{
		{ID: ids[0], TaskID: tk.ID, Source: "user", Kind: "message", Text: "first", CreatedAt: t0},
		{ID: ids[1], TaskID: tk.ID, Source: "user", Kind: "message", Text: "second", CreatedAt: t0},
		{ID: ids[2], TaskID: tk.ID, Source: "user", Kind: "message", Text: "third", Urgent: true, CreatedAt: t0},
	}
	if diff := cmp.Diff(want, pending); diff != "" {
		t.Errorf("Pending (-want +got):\n%s", diff)
	}
	if _, err := s.MarkDelivered(ctx, ids[:2], t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkDelivered(ctx, ids[:1], t0.Add(time.Second)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delivering twice error = %v, want ErrNotFound", err)
	}
	pending, err = s.Pending(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[2:], pending); diff != "" {
		t.Errorf("Pending after delivery (-want +got):\n%s", diff)
	}
	if n := len(rec.events()); n != 4 {
		t.Errorf("published %d events, want 4 (created + 3 messages)", n)
	}
}

type futureKind struct {
	X int `json:"x"`
}

func (futureKind) EventKind() event.Kind { return "future.thing" }

type deltaKind struct{}

func (deltaKind) EventKind() event.Kind { return "test.delta" }
func (deltaKind) Transient() bool       { return true }

func testEventQueries(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openFresh(t, open)
	a, b := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil)
	mustCreate(t, s, a)                                                                 // id 1
	mustCreate(t, s, b)                                                                 // id 2
	if _, _, err := s.UpdateTask(ctx, a.ID, transition(task.Running, "")); err != nil { // id 3 at t0+1m
		t.Fatal(err)
	}
	evs, err := s.AppendEvents(ctx, event.New(t0.Add(2*time.Minute), "", futureKind{X: 7})) // id 4
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].ID != 4 {
		t.Errorf("appended id = %d, want 4", evs[0].ID)
	}
	if _, err := s.AppendEvents(ctx, event.New(t0, a.ID, deltaKind{})); err == nil {
		t.Error("AppendEvents accepted a transient event")
	}
	q := func(q event.Query) []int64 {
		t.Helper()
		evs, err := s.ReadEvents(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, len(evs))
		for i, e := range evs {
			ids[i] = e.ID
		}
		return ids
	}
	for _, tc := range []struct {
		name string
		q    event.Query
		want []int64
	}{
		{"all", event.Query{}, []int64{1, 2, 3, 4}},
		{"task", event.Query{Filter: event.Filter{TaskID: a.ID}}, []int64{1, 3}},
		{"kind exact", event.Query{Filter: event.Filter{Kinds: []string{"task.status"}}}, []int64{3}},
		{"kind prefix", event.Query{Filter: event.Filter{Kinds: []string{"task"}}}, []int64{1, 2, 3}},
		{"kind prefix is per word", event.Query{Filter: event.Filter{Kinds: []string{"task.stat"}}}, []int64{}},
		{"two kinds", event.Query{Filter: event.Filter{Kinds: []string{"future", "task.created"}}}, []int64{1, 2, 4}},
		{"after", event.Query{AfterID: 2}, []int64{3, 4}},
		{"since", event.Query{Since: t0.Add(time.Minute)}, []int64{3, 4}},
		{"limit", event.Query{Limit: 2}, []int64{1, 2}},
	} {
		if diff := cmp.Diff(tc.want, q(tc.q)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	got, err := s.ReadEvents(ctx, event.Query{AfterID: 3})
	if err != nil {
		t.Fatal(err)
	}
	// A kind this build does not know reads back as Unknown with its data intact.
	u, ok := got[0].Payload.(event.Unknown)
	if !ok || string(u.Raw) != `{"x":7}` {
		t.Errorf("unknown kind payload = %#v, want Unknown with raw data", got[0].Payload)
	}
	b2, _ := json.Marshal(got[0])
	if want := `{"id":4,"time":"2026-11-21T09:02:00Z","kind":"future.thing","data":{"x":7}}`; string(b2) != want {
		t.Errorf("JSON = %s, want %s", b2, want)
	}
	if last, err := s.LastEventID(ctx); err != nil || last != 4 {
		t.Errorf("LastEventID = %d, %v; want 4", last, err)
	}
	n, err := s.PruneEvents(ctx, t0.Add(time.Minute))
	if err != nil || n != 2 {
		t.Errorf("PruneEvents = %d, %v; want 2", n, err)
	}
	if diff := cmp.Diff([]int64{3, 4}, q(event.Query{})); diff != "" {
		t.Errorf("after prune (-want +got):\n%s", diff)
	}
}

func testEmitFlush(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	for i := range 500 {
		if err := s.EmitEvents(ctx, event.New(t0, "", futureKind{X: i})); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EmitEvents(ctx, event.New(t0, "", deltaKind{})); err == nil {
		t.Error("EmitEvents accepted a transient event")
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := s.ReadEvents(ctx, event.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 500 {
		t.Fatalf("read %d events after Flush, want 500", len(evs))
	}
	for i, e := range evs {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i, e.ID)
		}
	}
	if n := len(rec.events()); n != 500 {
		t.Errorf("published %d, want 500", n)
	}
}

func testReopen(t *testing.T, open Opener) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, nil)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk)
	for i := range 100 {
		if err := s.EmitEvents(ctx, event.New(t0, tk.ID, futureKind{X: i})); err != nil {
			t.Fatal(err)
		}
	}
	// Close must commit what was queued.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	s2 := open(t, dir, nil)
	defer s2.Close()
	got, err := s2.GetTask(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tk, got); diff != "" {
		t.Errorf("task after reopen (-want +got):\n%s", diff)
	}
	evs, err := s2.AppendEvents(ctx, event.New(t0, tk.ID, futureKind{}))
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].ID != 102 {
		t.Errorf("first id after reopen = %d, want 102", evs[0].ID)
	}
}

func testConcurrent(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	const workers, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			id := task.ID(fmt.Sprintf("t-w%04d", w))
			if _, err := s.CreateTask(ctx, newTask(t, id, "w", nil)); err != nil {
				errs <- err
				return
			}
			for i := range each {
				// Every other mutation fails: the batch it rides in must not suffer.
				_, _, err := s.UpdateTask(ctx, id, func(tk *task.Task) ([]event.Event, error) {
					if i%2 == 1 {
						return []event.Event{event.New(t0, id, futureKind{X: -1})}, errors.New("odd")
					}
					tk.Usage.Iterations++
					return []event.Event{event.New(t0, id, futureKind{X: i})}, nil
				})
				if (err != nil) != (i%2 == 1) {
					errs <- fmt.Errorf("worker %d step %d: %v", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	pub := rec.events()
	if len(pub) != workers*each/2 {
		t.Fatalf("published %d events, want %d", len(pub), workers*each/2)
	}
	for i, e := range pub {
		if e.ID != int64(i+1) {
			t.Fatalf("published event %d has id %d: ids must be dense and in order", i, e.ID)
		}
		if e.Payload.(futureKind).X < 0 {
			t.Fatalf("an event of a failed mutation was published: %+v", e)
		}
	}
	for w := range workers {
		tk, err := s.GetTask(ctx, task.ID(fmt.Sprintf("t-w%04d", w)))
		if err != nil {
			t.Fatal(err)
		}
		if tk.Usage.Iterations != each/2 {
			t.Errorf("%s iterations = %d, want %d", tk.ID, tk.Usage.Iterations, each/2)
		}
	}
}

func testClosed(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, t.TempDir(), nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, newTask(t, "t-aaaaa", "a", nil)); !errors.Is(err, store.ErrClosed) {
		t.Errorf("CreateTask after Close error = %v, want ErrClosed", err)
	}
	if err := s.EmitEvents(ctx, event.New(t0, "", futureKind{})); !errors.Is(err, store.ErrClosed) {
		t.Errorf("EmitEvents after Close error = %v, want ErrClosed", err)
	}
}

// testQueueAtTheEnd holds the store to the rules that account for every
// acknowledged message: Closing only with an empty queue, nothing queued
// for a task that is Closing or finished, and what still waits as a task
// finishes returned in the same commit with an event.
func testQueueAtTheEnd(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk)
	if _, _, err := s.UpdateTask(ctx, tk.ID, transition(task.Running, "started")); err != nil {
		t.Fatal(err)
	}
	msg, _, err := s.Enqueue(ctx, inject.Injection{TaskID: tk.ID, Source: "user", Text: "stop: do not merge\nplease", CreatedAt: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	closing := func(tk *task.Task) ([]event.Event, error) { tk.Closing = true; return nil, nil }
	var pe *store.PendingError
	if _, _, err := s.UpdateTask(ctx, tk.ID, closing); !errors.As(err, &pe) || !slices.Equal(pe.Pending, []int64{msg.ID}) {
		t.Fatalf("closing with a message queued: error = %v, want *PendingError naming %d", err, msg.ID)
	}
	if got, _ := s.GetTask(ctx, tk.ID); got.Closing {
		t.Fatal("a refused close was stored")
	}
	if _, err := s.MarkDelivered(ctx, []int64{msg.ID}, t0); err != nil {
		t.Fatal(err)
	}
	// A notice of the machinery does not hold the end back.
	notice, _, err := s.Enqueue(ctx, inject.Injection{TaskID: tk.ID, Source: inject.FromSyncer, Kind: inject.Sync, Text: "fyi", CreatedAt: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.UpdateTask(ctx, tk.ID, closing); err != nil || !got.Closing {
		t.Fatalf("closing with only a sync message queued = %+v, %v", got, err)
	}
	var fe *task.FinishedError
	if _, _, err := s.Enqueue(ctx, inject.Injection{TaskID: tk.ID, Source: "user", Text: "late"}, nil); !errors.As(err, &fe) || !fe.Closing {
		t.Fatalf("Enqueue on a closing task: error = %v, want *task.FinishedError (closing)", err)
	}
	// A move of status clears Closing: the task takes messages again.
	if got, _, err := s.UpdateTask(ctx, tk.ID, transition(task.Paused, "paused")); err != nil || got.Closing {
		t.Fatalf("pausing a closing task = %+v, %v; want Closing cleared", got, err)
	}
	late, _, err := s.Enqueue(ctx, inject.Injection{TaskID: tk.ID, Source: "user", Text: "late\nsecond line", CreatedAt: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := len(rec.events())
	_, evs, err := s.UpdateTask(ctx, tk.ID, transition(task.Cancelled, "cancelled"))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Kind != event.KindTaskReturned {
		t.Fatalf("cancelling with a message queued committed %+v; want the status and a %s event", evs, event.KindTaskReturned)
	}
	want := event.TaskReturned{Status: task.Cancelled, InjectionIDs: []int64{notice.ID, late.ID}, Kinds: []string{"sync", "message"}, Texts: []string{"fyi", "late"}}
	if diff := cmp.Diff(want, evs[1].Payload); diff != "" {
		t.Errorf("returned event (-want +got):\n%s", diff)
	}
	if n := len(rec.events()) - before; n != 2 {
		t.Errorf("published %d events, want 2", n)
	}
	if pending, err := s.Pending(ctx, tk.ID); err != nil || len(pending) != 0 {
		t.Errorf("Pending after the end = %+v, %v; want none", pending, err)
	}
	returned, err := s.Returned(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(returned) != 2 || returned[1].ID != late.ID || returned[1].ReturnedAt == nil || returned[1].DeliveredAt != nil {
		t.Errorf("Returned = %+v; want the sync message and message %d, with ReturnedAt", returned, late.ID)
	}
	if _, _, err := s.Enqueue(ctx, inject.Injection{TaskID: tk.ID, Source: "user", Text: "later"}, nil); !errors.As(err, &fe) || fe.Status != task.Cancelled {
		t.Errorf("Enqueue on a cancelled task: error = %v, want *task.FinishedError (cancelled)", err)
	}
	if c, err := s.Counts(ctx); err != nil || c.Pending != 0 {
		t.Errorf("Counts = %+v, %v; want nothing pending", c, err)
	}
}

// EnqueueMany queues what it can in one commit and one publish, reports
// each refusal in its place, and queues nothing when an event fails.
func testEnqueueMany(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	a, b, c := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil), newTask(t, "t-ccccc", "c", nil)
	for _, tk := range []task.Task{a, b, c} {
		mustCreate(t, s, tk)
	}
	if _, _, err := s.UpdateTask(ctx, c.ID, transition(task.Cancelled, "no")); err != nil {
		t.Fatal(err)
	}
	record := func(i int, inj inject.Injection) []event.Event {
		return []event.Event{event.New(inj.CreatedAt, inj.TaskID, event.TaskMessage{InjectionID: inj.ID, Source: string(inj.Source), Kind: string(inj.Kind), Text: inj.Text})}
	}
	injs := []inject.Injection{
		{TaskID: a.ID, Source: inject.FromMainWatcher, Kind: inject.Rebase, Urgency: inject.Blocking, Urgent: true, Text: "to a", CreatedAt: t0},
		{TaskID: c.ID, Source: inject.FromMainWatcher, Kind: inject.Rebase, Text: "to c, cancelled", CreatedAt: t0},
		{TaskID: "t-zzzzz", Source: inject.FromMainWatcher, Kind: inject.Rebase, Text: "to nobody", CreatedAt: t0},
		{TaskID: b.ID, Source: inject.FromMainWatcher, Text: "to b", Quiet: true, CreatedAt: t0},
	}
	before := len(rec.published())
	got, evs, err := s.EnqueueMany(ctx, injs, record, event.New(t0, "", futureKind{X: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("EnqueueMany returned %d results, want 4", len(got))
	}
	var fe *task.FinishedError
	if !errors.As(got[1].Err, &fe) || fe.ID != c.ID {
		t.Errorf("result for the cancelled task: %v, want a FinishedError", got[1].Err)
	}
	if !errors.Is(got[2].Err, store.ErrNotFound) {
		t.Errorf("result for an unknown task: %v, want ErrNotFound", got[2].Err)
	}
	if got[0].Err != nil || got[3].Err != nil || got[0].Injection.ID <= 0 || got[3].Injection.ID <= got[0].Injection.ID {
		t.Fatalf("results for a and b: %+v, %+v", got[0], got[3])
	}
	if len(evs) != 3 || evs[0].Kind != "future.thing" || evs[1].Payload.(event.TaskMessage).InjectionID != got[0].Injection.ID ||
		evs[2].Payload.(event.TaskMessage).InjectionID != got[3].Injection.ID || evs[1].ID != evs[0].ID+1 || evs[2].ID != evs[1].ID+1 {
		t.Errorf("committed events = %+v, want the leading event, then a's and b's receipts", evs)
	}
	calls := rec.published()[before:]
	if len(calls) != 1 || len(calls[0]) != 3 {
		t.Errorf("published in %d calls (%v), want the 3 events in one", len(calls), calls)
	}
	pa, err := s.Pending(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []inject.Injection{{ID: got[0].Injection.ID, TaskID: a.ID, Source: inject.FromMainWatcher, Kind: inject.Rebase, Urgency: inject.Blocking, Urgent: true, Text: "to a", CreatedAt: t0}}
	if diff := cmp.Diff(want, pa); diff != "" {
		t.Errorf("Pending(a) (-want +got):\n%s", diff)
	}
	if pb, err := s.Pending(ctx, b.ID); err != nil || len(pb) != 1 || pb[0].Text != "to b" || pb[0].Kind != inject.Message || pb[0].Quiet {
		t.Errorf("Pending(b) = %+v, %v", pb, err)
	}

	// An event that cannot be logged queues nothing.
	bad := func(i int, inj inject.Injection) []event.Event {
		if i == 1 {
			return []event.Event{event.New(t0, inj.TaskID, deltaKind{})}
		}
		return record(i, inj)
	}
	if _, _, err := s.EnqueueMany(ctx, []inject.Injection{{TaskID: a.ID, Source: "user", Text: "x"}, {TaskID: b.ID, Source: "user", Text: "y"}}, bad); err == nil {
		t.Error("EnqueueMany logged a transient event")
	}
	for _, id := range []task.ID{a.ID, b.ID} {
		if p, err := s.Pending(ctx, id); err != nil || len(p) != 1 {
			t.Errorf("Pending(%s) after a failed batch = %d messages, %v; want the one from before", id, len(p), err)
		}
	}
}
