package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// testForgetLearning covers GetLearning and ForgetLearning.
func testForgetLearning(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	a := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, a)
	var kept, gone store.Learning
	for i, p := range []*store.Learning{&kept, &gone} {
		l, _, err := s.RecordLearning(ctx, store.Learning{TaskID: a.ID, Summary: []string{"gofmt runs in CI", "the auth keys live in testdata"}[i],
			CreatedAt: t0.Add(time.Duration(i) * time.Minute)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		*p = l
	}
	got, err := s.GetLearning(ctx, gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(gone, got); diff != "" {
		t.Errorf("GetLearning (-recorded +got):\n%s", diff)
	}
	if _, err := s.GetLearning(ctx, gone.ID+100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLearning(unknown) error = %v, want ErrNotFound", err)
	}

	record := func(l store.Learning) []event.Event {
		return []event.Event{event.New(t0, l.TaskID, futureKind{X: int(l.ID)})}
	}
	published := len(rec.events())
	if _, evs, err := s.ForgetLearning(ctx, gone.ID+100, record); !errors.Is(err, store.ErrNotFound) || len(evs) != 0 {
		t.Errorf("ForgetLearning(unknown) = %v, %v; want ErrNotFound", evs, err)
	}
	if n := len(rec.events()); n != published {
		t.Errorf("a refused ForgetLearning published %d events", n-published)
	}
	forgot, evs, err := s.ForgetLearning(ctx, gone.ID, record)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(gone, forgot); diff != "" {
		t.Errorf("ForgetLearning returned (-recorded +got):\n%s", diff)
	}
	if len(evs) != 1 || evs[0].ID <= 0 || evs[0].Payload.(futureKind).X != int(gone.ID) {
		t.Errorf("ForgetLearning events = %+v, want one committed, built from learning %d", evs, gone.ID)
	}
	if _, err := s.GetLearning(ctx, gone.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLearning(forgotten) error = %v, want ErrNotFound", err)
	}
	left, err := s.Learnings(ctx, store.LearningQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Learning{kept}, left); diff != "" {
		t.Errorf("Learnings after forgetting one (-want +got):\n%s", diff)
	}
}

// testSyncMessages covers AddSyncMessage, UpdateSyncMessage and
// SyncMessages.
func testSyncMessages(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	a, b, c := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil), newTask(t, "t-ccccc", "c", nil)
	for _, tk := range []task.Task{a, b, c} {
		mustCreate(t, s, tk)
	}
	l, _, err := s.RecordLearning(ctx, store.Learning{TaskID: a.ID, Summary: "the JWT library rejects tokens without iat", CreatedAt: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	msg := func(to task.ID) store.SyncMessage {
		return store.SyncMessage{LearningID: l.ID, From: a.ID, TaskID: to, Urgency: "helpful", Relevance: "medium", Score: 0.625,
			Message: l.Summary, Reason: "same parent", DecidedBy: "rules", State: store.SyncHeld, CreatedAt: t0.Add(time.Second)}
	}
	record := func(m store.SyncMessage) []event.Event {
		return []event.Event{event.New(m.CreatedAt, m.TaskID, futureKind{X: int(m.ID)})}
	}
	var sent []store.SyncMessage
	for _, to := range []task.ID{b.ID, c.ID} {
		want := msg(to)
		got, evs, err := s.AddSyncMessage(ctx, want, record)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID <= 0 || (len(sent) > 0 && got.ID <= sent[0].ID) {
			t.Errorf("message to %s has id %d, want increasing ids", to, got.ID)
		}
		want.ID = got.ID
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("AddSyncMessage returned (-want +got):\n%s", diff)
		}
		if len(evs) != 1 || evs[0].ID <= 0 || evs[0].Payload.(futureKind).X != int(got.ID) {
			t.Errorf("AddSyncMessage events = %+v, want one committed, built from message %d", evs, got.ID)
		}
		sent = append(sent, got)
	}
	published := len(rec.events())
	if _, evs, err := s.AddSyncMessage(ctx, msg(b.ID), record); !errors.Is(err, store.ErrExists) || len(evs) != 0 {
		t.Errorf("AddSyncMessage(the same learning to %s again) = %v, %v; want ErrExists", b.ID, evs, err)
	}
	if n := len(rec.events()); n != published {
		t.Errorf("a refused AddSyncMessage published %d events", n-published)
	}

	queued := t0.Add(time.Minute)
	got, evs, err := s.UpdateSyncMessage(ctx, sent[0].ID, func(m *store.SyncMessage) ([]event.Event, error) {
		m.State, m.InjectionID, m.QueuedAt, m.Note = store.SyncQueued, 7, &queued, "released"
		return []event.Event{event.New(queued, m.TaskID, futureKind{X: -int(m.ID)})}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := sent[0]
	want.State, want.InjectionID, want.QueuedAt, want.Note = store.SyncQueued, 7, &queued, "released"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UpdateSyncMessage returned (-want +got):\n%s", diff)
	}
	if len(evs) != 1 || evs[0].ID <= 0 {
		t.Errorf("UpdateSyncMessage events = %+v, want one committed", evs)
	}
	sent[0] = got
	refused := errors.New("refused")
	if _, _, err := s.UpdateSyncMessage(ctx, sent[1].ID, func(m *store.SyncMessage) ([]event.Event, error) {
		m.State = store.SyncIgnored
		return nil, refused
	}); !errors.Is(err, refused) {
		t.Errorf("UpdateSyncMessage with a failing mutation: error %v, want the mutation's", err)
	}
	if _, _, err := s.UpdateSyncMessage(ctx, sent[1].ID+100, func(*store.SyncMessage) ([]event.Event, error) { return nil, nil }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateSyncMessage(unknown) error = %v, want ErrNotFound", err)
	}

	for _, tc := range []struct {
		name string
		q    store.SyncQuery
		want []store.SyncMessage
	}{
		{"all", store.SyncQuery{}, sent},
		{"to one task", store.SyncQuery{TaskID: c.ID}, sent[1:]},
		{"from a task", store.SyncQuery{From: a.ID}, sent},
		{"of a learning", store.SyncQuery{LearningID: l.ID}, sent},
		{"of an injection", store.SyncQuery{InjectionID: 7}, sent[:1]},
		{"held", store.SyncQuery{States: []store.SyncState{store.SyncHeld}}, sent[1:]},
		{"newest, one", store.SyncQuery{Newest: true, Limit: 1}, sent[1:]},
		{"none", store.SyncQuery{TaskID: a.ID}, nil},
	} {
		got, err := s.SyncMessages(ctx, tc.q)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("SyncMessages(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
}

// testCounts covers Counts.
func testCounts(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openFresh(t, open)
	c, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tasks) != 0 || c.Events != 0 || c.LastID != 0 || c.Pending != 0 {
		t.Errorf("Counts of an empty store = %+v, want zeros", c)
	}
	a, b := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil)
	mustCreate(t, s, a)
	mustCreate(t, s, b)
	if _, _, err := s.UpdateTask(ctx, b.ID, transition(task.Paused, "held")); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		if _, _, err := s.Enqueue(ctx, inject.Injection{TaskID: a.ID, Source: "user", Text: text, CreatedAt: t0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	pending, err := s.Pending(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkDelivered(ctx, []int64{pending[0].ID}, t0); err != nil {
		t.Fatal(err)
	}
	last, err := s.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.ReadEvents(ctx, event.Query{})
	if err != nil {
		t.Fatal(err)
	}
	c, err = s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Counts{Tasks: map[task.Status]int{a.Status: 1, task.Paused: 1}, Events: int64(len(all)), LastID: last, Pending: 1}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Counts (-want +got):\n%s", diff)
	}
}
