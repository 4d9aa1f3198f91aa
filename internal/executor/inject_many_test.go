package executor

import (
	"context"
	"errors"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// InjectMany stores what passes in one commit, each message after its
// caller's events and before its receipt, reports each refusal in its
// place, and then wakes the tasks as Inject does: a quiet notice leaves a
// task waiting for its user waiting, a loud message wakes it.
func TestInjectManyStoresTogetherAndWakes(t *testing.T) {
	e := newExecEnv(t, Config{}, func(ctx context.Context, r engine.Run) engine.Outcome {
		inbox, _ := r.Host.Inbox(ctx)
		for _, inj := range inbox {
			if inj.Kind == inject.Message {
				if _, err := r.Host.Commit(ctx, engine.Step{Delivered: inbox}); err != nil {
					return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
				}
				return engine.Outcome{Status: engine.Completed, Reason: "answered"}
			}
		}
		return engine.Outcome{Status: engine.Waiting, Reason: "which file?"}
	})
	a, b, c := e.create("a", 2), e.create("b", 2), e.create("c", 2)
	if _, err := e.ex.Cancel(context.Background(), c.ID, ""); err != nil {
		t.Fatal(err)
	}
	e.start()
	e.waitStatus(a.ID, task.Waiting)
	e.waitStatus(b.ID, task.Waiting)

	injs := []inject.Injection{
		{TaskID: a.ID, Kind: inject.Rebase, Source: inject.FromMainWatcher, Urgency: inject.Helpful, Text: "main moved", Quiet: true},
		{TaskID: b.ID, Kind: inject.Message, Source: inject.FromUser, Text: "main.go"},
		{TaskID: c.ID, Kind: inject.Message, Source: inject.FromUser, Text: "too late"},
		{TaskID: a.ID, Kind: "shout", Text: "hi"},
	}
	record := func(i int, s inject.Injection) []event.Event {
		return []event.Event{event.New(s.CreatedAt, s.TaskID, event.RebaseRequired{Main: "main", MainCommit: "abc", CommitsBehind: i + 1})}
	}
	got, err := e.ex.InjectMany(context.Background(), injs, record, event.New(e.ex.now(), "", event.MainUpdated{Repo: e.dir, Branch: "main", NewCommit: "abc"}))
	if err != nil {
		t.Fatal(err)
	}
	var (
		fin *task.FinishedError
		inv *task.InvalidError
	)
	if got[0].Err != nil || got[1].Err != nil || got[0].Injection.ID == 0 || got[1].Injection.ID == 0 {
		t.Fatalf("results for a and b: %+v %+v", got[0], got[1])
	}
	if !errors.As(got[2].Err, &fin) || !errors.As(got[3].Err, &inv) {
		t.Errorf("refusals: cancelled task %v, bad kind %v", got[2].Err, got[3].Err)
	}
	// The quiet notice left a waiting; the message woke b (decided inside
	// InjectMany, so the status right after it tells).
	if s := e.get(a.ID).Status; s != task.Waiting {
		t.Errorf("a quiet notice moved the waiting task to %s", s)
	}
	if s := e.get(b.ID).Status; s == task.Waiting {
		t.Errorf("the message did not wake b")
	}
	e.waitStatus(b.ID, task.Completed)

	// One commit, in order: main.updated, then for each message its
	// caller's event and its receipt.
	evs, err := e.st.ReadEvents(context.Background(), event.Query{Filter: event.Filter{Kinds: []string{string(event.KindMainUpdated), string(event.KindRebaseRequired), string(event.KindTaskMessage)}}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, ev := range evs {
		kinds = append(kinds, string(ev.Kind)+":"+string(ev.TaskID))
		if i > 0 && ev.ID != evs[i-1].ID+1 {
			t.Errorf("event %d has id %d after %d: not logged together", i, ev.ID, evs[i-1].ID)
		}
	}
	want := []string{"main.updated:", "rebase.required:" + string(a.ID), "task.message:" + string(a.ID), "rebase.required:" + string(b.ID), "task.message:" + string(b.ID)}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
}
