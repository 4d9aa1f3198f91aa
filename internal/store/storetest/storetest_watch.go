package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func watchOf(id, name string, at time.Time) store.WatchSession {
	return store.WatchSession{ID: id, Name: name, Brief: "watch for SQL injection", Authority: "supervisor", Tier: "router",
		Target: store.WatchTarget{Tags: []string{"api"}}, Status: store.WatchActive, CreatedAt: at, UpdatedAt: at}
}

func testWatchSessions(t *testing.T, open Opener) {
	s, rec := openFresh(t, open)
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	a, b := watchOf("w-3f9a1c", "security", at), watchOf("w-3f0000", "tests", at.Add(time.Second))
	add := event.New(at, "", event.WatchSession{Session: a.ID, Name: a.Name, Action: "added", Status: "active"})
	evs, err := s.CreateWatchSession(ctx, a, add)
	if err != nil || len(evs) != 1 || evs[0].ID == 0 {
		t.Fatalf("CreateWatchSession = %v, %v; want the event with an ID", evs, err)
	}
	if _, err := s.CreateWatchSession(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateWatchSession(ctx, watchOf("w-999999", "security", at)); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second session named security: %v, want ErrExists", err)
	}
	if n := len(rec.events()); n != 1 {
		t.Errorf("%d events published, want 1", n)
	}
	for ref, want := range map[string]string{"security": a.ID, "w-3f9a1c": a.ID, "3f9": a.ID, "W-3F0": b.ID, "tests": b.ID} {
		got, err := s.ResolveWatchSession(ctx, ref)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %s", ref, got, err, want)
		}
	}
	if _, err := s.ResolveWatchSession(ctx, "3f"); err == nil {
		t.Error("an ambiguous prefix resolved")
	}
	if _, err := s.ResolveWatchSession(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve(nobody): %v, want ErrNotFound", err)
	}
	got, err := s.GetWatchSession(ctx, a.ID)
	if err != nil || got.Name != "security" || got.Target.Tags[0] != "api" || !got.CreatedAt.Equal(at) {
		t.Errorf("GetWatchSession = %+v, %v", got, err)
	}
	up, _, err := s.UpdateWatchSession(ctx, a.ID, func(w *store.WatchSession) ([]event.Event, error) {
		w.Status, w.Reason = store.WatchPaused, "by the user"
		return nil, nil
	})
	if err != nil || up.Status != store.WatchPaused {
		t.Fatalf("UpdateWatchSession = %+v, %v", up, err)
	}
	if _, _, err := s.UpdateWatchSession(ctx, a.ID, func(w *store.WatchSession) ([]event.Event, error) {
		w.ID = "w-other"
		return nil, nil
	}); err == nil {
		t.Error("an update changed the id")
	}
	if _, _, err := s.UpdateWatchSession(ctx, "w-gone", func(*store.WatchSession) ([]event.Event, error) { return nil, nil }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("updating an unknown session: %v, want ErrNotFound", err)
	}
	all, err := s.ListWatchSessions(ctx)
	if err != nil || len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID || all[0].Status != store.WatchPaused {
		t.Errorf("ListWatchSessions = %+v, %v", all, err)
	}
}

func testWatchEvaluations(t *testing.T, open Opener) {
	s, _ := openFresh(t, open)
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	ws := watchOf("w-aaaaaa", "security", at)
	if _, err := s.CreateWatchSession(ctx, ws); err != nil {
		t.Fatal(err)
	}
	tk := task.ID("t-watched")
	evals := []store.WatchEvaluation{
		{SessionID: ws.ID, TaskID: tk, At: at.Add(time.Minute), Decision: store.DecisionContinue, Note: "fine",
			Provider: "anthropic", Model: "m", InputTokens: 100, OutputTokens: 10, CostUSD: 0.25},
		{SessionID: ws.ID, TaskID: tk, At: at.Add(2 * time.Minute), Decision: store.DecisionInterject, Urgent: true, Content: "stop",
			InjectionID: 7, Provider: "anthropic", Model: "m", InputTokens: 200, OutputTokens: 20, CostUSD: 0.5},
	}
	for i, e := range evals {
		got, evs, err := s.RecordEvaluation(ctx, e, func(e store.WatchEvaluation) []event.Event {
			return []event.Event{event.New(e.At, e.TaskID, event.WatchEvaluation{Session: e.SessionID, EvaluationID: e.ID, Decision: e.Decision})}
		})
		if err != nil || got.ID == 0 || len(evs) != 1 || evs[0].Payload.(event.WatchEvaluation).EvaluationID != got.ID {
			t.Fatalf("RecordEvaluation %d = %+v, %v, %v", i, got, evs, err)
		}
	}
	if _, _, err := s.RecordEvaluation(ctx, store.WatchEvaluation{SessionID: "w-gone", TaskID: tk, At: at}, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an evaluation of an unknown session: %v, want ErrNotFound", err)
	}
	got, err := s.GetWatchSession(ctx, ws.ID)
	if err != nil || got.Evaluations != 2 || got.Interjections != 1 || got.SpentUSD != 0.75 {
		t.Errorf("session after two evaluations = %+v, %v; want 2 evaluations, 1 interjection, $0.75", got, err)
	}
	list, err := s.WatchEvaluations(ctx, store.WatchQuery{SessionID: ws.ID})
	if err != nil || len(list) != 2 || list[0].Decision != store.DecisionContinue || list[1].Content != "stop" {
		t.Fatalf("WatchEvaluations = %+v, %v", list, err)
	}
	newest, err := s.WatchEvaluations(ctx, store.WatchQuery{SessionID: ws.ID, Limit: 1})
	if err != nil || len(newest) != 1 || newest[0].ID != list[1].ID {
		t.Errorf("Limit 1 = %+v, %v; want the newest", newest, err)
	}
	after, err := s.WatchEvaluations(ctx, store.WatchQuery{AfterID: list[0].ID})
	if err != nil || len(after) != 1 || after[0].ID != list[1].ID {
		t.Errorf("AfterID = %+v, %v", after, err)
	}
	rows, err := s.Costs(ctx, store.CostQuery{By: "watcher"})
	if err != nil || len(rows) != 1 || rows[0].Key != ws.ID || rows[0].Calls != 2 || rows[0].CostUSD != 0.75 {
		t.Errorf("Costs by watcher = %+v, %v; want one row for the session", rows, err)
	}
}
