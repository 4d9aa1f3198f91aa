package sqlite

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// syncT0 has nanoseconds: times must round-trip exactly.
var syncT0 = time.Date(2026, 11, 21, 9, 0, 0, 123456789, time.UTC)

func syncMsg(learning int64, from, to task.ID, state store.SyncState) store.SyncMessage {
	return store.SyncMessage{LearningID: learning, From: from, TaskID: to, Urgency: "helpful", Relevance: "medium", Score: 0.625,
		Message: "the JWT library rejects tokens without an iat claim", Reason: "same parent; shared tags auth",
		DecidedBy: "persona", State: state, CreatedAt: syncT0}
}

func addSync(t *testing.T, s *Store, m store.SyncMessage) store.SyncMessage {
	t.Helper()
	got, _, err := s.AddSyncMessage(context.Background(), m, nil)
	if err != nil {
		t.Fatalf("AddSyncMessage(%d to %s): %v", m.LearningID, m.TaskID, err)
	}
	return got
}

func getSync(t *testing.T, s *Store, id int64) store.SyncMessage {
	t.Helper()
	ms, err := s.SyncMessages(context.Background(), store.SyncQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("sync message %d is not stored", id)
	return store.SyncMessage{}
}

func TestAddSyncMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, log := openKnowledgeStore(t)
	queued, delivered := syncT0.Add(time.Second), syncT0.Add(2*time.Second+7)
	var seen []store.SyncMessage
	record := func(m store.SyncMessage) []event.Event {
		seen = append(seen, m)
		return []event.Event{event.New(m.CreatedAt, m.TaskID, event.SyncMessageSent{MessageID: m.ID, LearningID: m.LearningID,
			From: string(m.From), Urgency: m.Urgency, Message: m.Message, DecidedBy: m.DecidedBy, InjectionID: m.InjectionID})}
	}
	full := syncMsg(1, "t-aaaaa", "t-ccccc", store.SyncDelivered)
	full.Note, full.InjectionID, full.QueuedAt, full.DeliveredAt = "delivered at turn 4", 42, &queued, &delivered
	for i, m := range []store.SyncMessage{syncMsg(1, "t-aaaaa", "t-bbbbb", store.SyncHeld), full} {
		got, evs, err := s.AddSyncMessage(ctx, m, record)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != int64(i+1) {
			t.Errorf("message %d has id %d; want %d", i, got.ID, i+1)
		}
		m.ID = got.ID
		if diff := cmp.Diff(m, got); diff != "" {
			t.Errorf("AddSyncMessage returned (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(m, seen[i]); diff != "" {
			t.Errorf("record saw (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(m, getSync(t, s, got.ID)); diff != "" {
			t.Errorf("stored (-want +got):\n%s", diff)
		}
		if len(evs) != 1 || evs[0].ID <= 0 || evs[0].Payload.(event.SyncMessageSent).MessageID != got.ID {
			t.Errorf("AddSyncMessage events = %+v; want one committed, naming message %d", evs, got.ID)
		}
	}
	if m := getSync(t, s, 1); m.QueuedAt != nil || m.DeliveredAt != nil {
		t.Errorf("unset times read back as %v, %v; want nil", m.QueuedAt, m.DeliveredAt)
	}

	// A learning reaches a task once; another task, or another learning,
	// is a new message.
	published := len(log.all())
	for _, m := range []store.SyncMessage{syncMsg(1, "t-aaaaa", "t-bbbbb", store.SyncQueued), syncMsg(1, "t-zzzzz", "t-ccccc", store.SyncHeld)} {
		if _, evs, err := s.AddSyncMessage(ctx, m, record); !errors.Is(err, store.ErrExists) || len(evs) != 0 {
			t.Errorf("AddSyncMessage(learning 1 to %s again) = %v, %v; want ErrExists", m.TaskID, evs, err)
		}
	}
	if n := len(log.all()); n != published || len(seen) != 2 {
		t.Errorf("refused messages published %d events and called record %d times", n-published, len(seen)-2)
	}
	addSync(t, s, syncMsg(2, "t-aaaaa", "t-bbbbb", store.SyncHeld))
	addSync(t, s, syncMsg(1, "t-aaaaa", "t-ddddd", store.SyncHeld))

	noTime := syncMsg(3, "t-aaaaa", "t-bbbbb", store.SyncHeld)
	noTime.CreatedAt = time.Time{}
	if _, _, err := s.AddSyncMessage(ctx, noTime, nil); err == nil {
		t.Error("AddSyncMessage accepted a message without a creation time")
	}
	if ms, err := s.SyncMessages(ctx, store.SyncQuery{}); err != nil || len(ms) != 4 {
		t.Errorf("%d messages stored (%v); want 4", len(ms), err)
	}
}

func TestUpdateSyncMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, log := openKnowledgeStore(t)
	m := addSync(t, s, syncMsg(1, "t-aaaaa", "t-bbbbb", store.SyncHeld))
	other := addSync(t, s, syncMsg(1, "t-aaaaa", "t-ccccc", store.SyncHeld))

	queued, delivered := syncT0.Add(time.Minute), syncT0.Add(2*time.Minute+3)
	got, evs, err := s.UpdateSyncMessage(ctx, m.ID, func(m *store.SyncMessage) ([]event.Event, error) {
		m.State, m.InjectionID, m.QueuedAt, m.Note = store.SyncQueued, 7, &queued, "released after cooldown"
		m.Urgency, m.Relevance, m.Score, m.Message, m.Reason, m.DecidedBy = "blocking", "high", 0.9, "new text", "new reason", "hook"
		return []event.Event{event.New(queued, m.TaskID, event.SyncMessageSent{MessageID: m.ID, InjectionID: m.InjectionID})}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := m
	want.State, want.InjectionID, want.QueuedAt, want.Note = store.SyncQueued, 7, &queued, "released after cooldown"
	want.Urgency, want.Relevance, want.Score, want.Message, want.Reason, want.DecidedBy = "blocking", "high", 0.9, "new text", "new reason", "hook"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UpdateSyncMessage returned (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, getSync(t, s, m.ID)); diff != "" {
		t.Errorf("stored after update (-want +got):\n%s", diff)
	}
	if len(evs) != 1 || evs[0].ID <= 0 {
		t.Errorf("UpdateSyncMessage events = %+v; want one committed", evs)
	}
	if pub := log.all(); len(pub) != 1 || pub[0].ID != evs[0].ID {
		t.Errorf("published %+v; want the update's event", pub)
	}

	got, _, err = s.UpdateSyncMessage(ctx, m.ID, func(m *store.SyncMessage) ([]event.Event, error) {
		m.State, m.DeliveredAt = store.SyncDelivered, &delivered
		return nil, nil
	})
	want.State, want.DeliveredAt = store.SyncDelivered, &delivered
	if err != nil || !cmp.Equal(want, getSync(t, s, m.ID)) || !cmp.Equal(want, got) {
		t.Errorf("delivering = %+v, %v; stored %+v; want %+v", got, err, getSync(t, s, m.ID), want)
	}
	// Times can be cleared again.
	if _, _, err := s.UpdateSyncMessage(ctx, m.ID, func(m *store.SyncMessage) ([]event.Event, error) {
		m.QueuedAt, m.DeliveredAt = nil, nil
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := getSync(t, s, m.ID); got.QueuedAt != nil || got.DeliveredAt != nil {
		t.Errorf("cleared times read back as %v, %v", got.QueuedAt, got.DeliveredAt)
	}
	want.QueuedAt, want.DeliveredAt = nil, nil

	// A failing mutation, or an event the log refuses, changes nothing.
	published := len(log.all())
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		mut     func(*store.SyncMessage) ([]event.Event, error)
		wantErr error
	}{
		{"mutation error", func(m *store.SyncMessage) ([]event.Event, error) {
			m.State, m.Note = store.SyncIgnored, "should not stick"
			return []event.Event{event.New(syncT0, m.TaskID, event.SyncIgnored{LearningID: m.LearningID, Reason: "stale"})}, boom
		}, boom},
		{"refused event", func(m *store.SyncMessage) ([]event.Event, error) {
			m.State, m.Note = store.SyncIgnored, "should not stick"
			return []event.Event{event.New(syncT0, m.TaskID, transientPayload{})}, nil
		}, nil},
	} {
		got, evs, err := s.UpdateSyncMessage(ctx, m.ID, tc.mut)
		if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
			t.Errorf("%s: UpdateSyncMessage = %+v, %v; want an error (%v)", tc.name, got, err, tc.wantErr)
		}
		if len(evs) != 0 {
			t.Errorf("%s: events %+v returned", tc.name, evs)
		}
		if diff := cmp.Diff(want, getSync(t, s, m.ID)); diff != "" {
			t.Errorf("%s: the message changed (-want +got):\n%s", tc.name, diff)
		}
	}
	if n := len(log.all()); n != published {
		t.Errorf("failed updates published %d events", n-published)
	}
	if diff := cmp.Diff(other, getSync(t, s, other.ID)); diff != "" {
		t.Errorf("updates changed another message (-want +got):\n%s", diff)
	}
	if _, _, err := s.UpdateSyncMessage(ctx, 99, func(*store.SyncMessage) ([]event.Event, error) { return nil, nil }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateSyncMessage(99) error = %v; want ErrNotFound", err)
	}
}

// TestUpdateSyncMessageKeepsIdentity checks the documented rule that a
// mutation does not change the learning, the tasks or the creation time:
// the update either refuses, or stores and returns the message with them
// unchanged. It must never return what was not stored.
func TestUpdateSyncMessageKeepsIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openKnowledgeStore(t)
	m := addSync(t, s, syncMsg(1, "t-aaaaa", "t-bbbbb", store.SyncHeld))
	got, _, err := s.UpdateSyncMessage(ctx, m.ID, func(x *store.SyncMessage) ([]event.Event, error) {
		x.ID, x.LearningID, x.From, x.TaskID, x.CreatedAt = 77, 2, "t-yyyyy", "t-zzzzz", syncT0.Add(time.Hour)
		x.State = store.SyncQueued
		return nil, nil
	})
	stored := getSync(t, s, m.ID)
	if stored.LearningID != m.LearningID || stored.From != m.From || stored.TaskID != m.TaskID || !stored.CreatedAt.Equal(m.CreatedAt) {
		t.Errorf("the identity of message %d changed: stored %+v", m.ID, stored)
	}
	if err == nil && !cmp.Equal(stored, got) {
		t.Errorf("UpdateSyncMessage returned a message that was not stored:\n%s", cmp.Diff(stored, got))
	}
}

func TestSyncMessagesQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openKnowledgeStore(t)
	withInj := func(m store.SyncMessage, inj int64) store.SyncMessage { m.InjectionID = inj; return m }
	var all []store.SyncMessage
	for _, m := range []store.SyncMessage{
		withInj(syncMsg(1, "t-aaaaa", "t-bbbbb", store.SyncQueued), 10),
		syncMsg(1, "t-aaaaa", "t-ccccc", store.SyncHeld),
		withInj(syncMsg(2, "t-bbbbb", "t-aaaaa", store.SyncDelivered), 11),
		syncMsg(2, "t-bbbbb", "t-ccccc", store.SyncIgnored),
		withInj(syncMsg(3, "t-ccccc", "t-bbbbb", store.SyncQueued), 10),
		syncMsg(3, "t-ccccc", "t-aaaaa", store.SyncBlocked),
	} {
		all = append(all, addSync(t, s, m))
	}
	pick := func(idx ...int) []store.SyncMessage {
		var out []store.SyncMessage
		for _, i := range idx {
			out = append(out, all[i])
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    store.SyncQuery
		want []store.SyncMessage
	}{
		{"all, oldest first", store.SyncQuery{}, all},
		{"newest first", store.SyncQuery{Newest: true}, pick(5, 4, 3, 2, 1, 0)},
		{"limit", store.SyncQuery{Limit: 2}, pick(0, 1)},
		{"newest, limit", store.SyncQuery{Newest: true, Limit: 2}, pick(5, 4)},
		{"recipient", store.SyncQuery{TaskID: "t-bbbbb"}, pick(0, 4)},
		{"source", store.SyncQuery{From: "t-bbbbb"}, pick(2, 3)},
		{"learning", store.SyncQuery{LearningID: 3}, pick(4, 5)},
		{"injection", store.SyncQuery{InjectionID: 10}, pick(0, 4)},
		{"one state", store.SyncQuery{States: []store.SyncState{store.SyncHeld}}, pick(1)},
		{"open states", store.SyncQuery{States: []store.SyncState{store.SyncHeld, store.SyncQueued}}, pick(0, 1, 4)},
		{"recipient and state", store.SyncQuery{TaskID: "t-ccccc", States: []store.SyncState{store.SyncIgnored}}, pick(3)},
		{"recipient and source", store.SyncQuery{TaskID: "t-aaaaa", From: "t-ccccc"}, pick(5)},
		{"recipient, newest, limit", store.SyncQuery{TaskID: "t-ccccc", Newest: true, Limit: 1}, pick(3)},
		{"learning and injection", store.SyncQuery{LearningID: 1, InjectionID: 10}, pick(0)},
		{"nothing matches", store.SyncQuery{TaskID: "t-zzzzz"}, nil},
		{"unknown state", store.SyncQuery{States: []store.SyncState{"lost"}}, nil},
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

// TestKnowledgeSurvivesRestart closes the store and opens the same file:
// learnings, their sources, the search and the sync messages are there,
// and deduplication and the once-per-task rule still hold.
func TestKnowledgeSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openKnowledgeStore(t, "t-aaaaa", "t-bbbbb", "t-ccccc")
	path := s.Path()
	jwt := recordL(t, s, store.Learning{TaskID: "t-aaaaa", Kind: "error-resolution", Summary: "The JWT library rejects tokens without an iat claim",
		Detail: "seen in the auth middleware", Tags: []string{"auth"}, Files: []string{"internal/auth/jwt.go"}, CreatedAt: syncT0})
	jwt = recordL(t, s, store.Learning{TaskID: "t-bbbbb", Summary: "Note: the jwt library rejects tokens that have no iat claim",
		Tags: []string{"jwt"}, CreatedAt: syncT0.Add(time.Second)})
	ci := recordL(t, s, store.Learning{TaskID: "t-bbbbb", Summary: "gofmt runs in CI", CreatedAt: syncT0})
	msg := syncMsg(jwt.ID, "t-aaaaa", "t-ccccc", store.SyncQueued)
	queued := syncT0.Add(time.Minute)
	msg.QueuedAt, msg.InjectionID = &queued, 3
	msg = addSync(t, s, msg)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jwt.Merged = false
	if diff := cmp.Diff([]store.Learning{jwt, ci}, allLearnings(t, s)); diff != "" || len(jwt.Sources) != 2 {
		t.Errorf("learnings after reopening (-before +after):\n%s", diff)
	}
	for q, want := range map[string][]int64{"rejected": {jwt.ID}, "middleware": {jwt.ID}, "gofmt": {ci.ID}, "jwt": {jwt.ID}} {
		if ls, err := s.Learnings(ctx, store.LearningQuery{Search: q}); err != nil || !slices.Equal(learningIDs(ls), want) {
			t.Errorf("Learnings(Search: %q) after reopening = %v, %v; want %v", q, learningIDs(ls), err, want)
		}
	}
	if ls, err := s.Learnings(ctx, store.LearningQuery{TaskID: "t-bbbbb"}); err != nil || !slices.Equal(learningIDs(ls), []int64{jwt.ID, ci.ID}) {
		t.Errorf("Learnings(TaskID: t-bbbbb) after reopening = %v, %v", learningIDs(ls), err)
	}
	if ms, err := s.SyncMessages(ctx, store.SyncQuery{}); err != nil || !cmp.Equal([]store.SyncMessage{msg}, ms) {
		t.Errorf("sync messages after reopening = %+v, %v; want %+v", ms, err, msg)
	}
	if _, _, err := s.AddSyncMessage(ctx, syncMsg(jwt.ID, "t-bbbbb", "t-ccccc", store.SyncHeld), nil); !errors.Is(err, store.ErrExists) {
		t.Errorf("sending the learning to t-ccccc again after reopening: %v; want ErrExists", err)
	}
	again, _, err := s.RecordLearning(ctx, store.Learning{TaskID: "t-ccccc", Summary: "gofmt runs in CI.", CreatedAt: syncT0.Add(time.Hour)}, nil)
	if err != nil || again.ID != ci.ID || !again.Merged || len(again.Sources) != 2 {
		t.Errorf("recording a known learning after reopening = %+v, %v; want learning %d merged", again, err, ci.ID)
	}
	s.Close()
	checkFTS(t, path)
}
