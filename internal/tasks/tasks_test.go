package tasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/store/storetest"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/tasks"
)

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// newControl returns a service over a new SQLite store, with an executor
// that is not running (so queued tasks stay queued) and the built-in
// personas; randomness is the source of task IDs.
func newControl(t *testing.T, randomness []byte) (*tasks.Service, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.DiscardHandler)
	svc := tasks.New(tasks.Options{Store: st, Records: st, Personas: persona.Defaults(), Engine: "native",
		Now: func() time.Time { return t0 }, Rand: bytes.NewReader(randomness), Logger: log})
	bus := event.NewBus(event.Options{Buffer: 64}, 0)
	t.Cleanup(bus.Close)
	ex := executor.New(executor.Options{Tasks: st, Runs: st, Bus: bus, Engines: []engine.Engine{idle{}}, Logger: log})
	svc.Bind(tasks.Runtime{Runner: ex})
	return svc, st
}

// idle is an engine that is never run here: the executor is not started.
type idle struct{}

func (idle) Name() string { return "native" }
func (idle) Ready() error { return nil }
func (idle) Run(context.Context, engine.Run) engine.Outcome {
	return engine.Outcome{Status: engine.Failed, Reason: "not run in these tests"}
}

func TestCreateRetriesOnIDCollision(t *testing.T) {
	t.Parallel()
	// The first two draws give the same ID; the third a new one.
	same := []byte{1, 2, 3, 4, 5}
	c, _ := newControl(t, append(append(append([]byte{}, same...), same...), 9, 9, 9, 9, 9))
	ctx := context.Background()
	a, err := c.Create(ctx, task.Spec{Description: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Create(ctx, task.Spec{Description: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == b.ID || b.ID != "t-99999" {
		t.Errorf("ids %s and %s: want a retry to t-99999 after the collision", a.ID, b.ID)
	}
	if a.Engine != "native" {
		t.Errorf("engine = %q, want the default", a.Engine)
	}
}

func TestSendAndMoves(t *testing.T) {
	t.Parallel()
	c, st := newControl(t, counting(200))
	ctx := context.Background()
	tk, err := c.Create(ctx, task.Spec{Description: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var inv *task.InvalidError
	if _, err := c.Send(ctx, tk.ID, "   ", false); !errors.As(err, &inv) {
		t.Errorf("empty message error = %v, want *task.InvalidError", err)
	}
	if _, err := c.Send(ctx, "t-zzzzz", "hi", false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("message to unknown task error = %v, want ErrNotFound", err)
	}
	id, err := c.Resolve(ctx, string(tk.ID)[2:4])
	if err != nil || id != tk.ID {
		t.Fatalf("Resolve by prefix = %s, %v", id, err)
	}
	inj, err := c.Send(ctx, id, " hello ", false)
	if err != nil || inj.Text != "hello" || inj.Source != "user" {
		t.Fatalf("Send by prefix = %+v, %v", inj, err)
	}
	if got, err := c.Pause(ctx, tk.ID, ""); err != nil || got.Status != task.Paused || got.CloseReason != "paused by user" {
		t.Fatalf("Pause = %+v, %v", got, err)
	}
	if _, err := c.Pause(ctx, tk.ID, ""); err == nil {
		t.Error("pausing a paused task succeeded")
	}
	if _, err := c.Cancel(ctx, tk.ID, "done with it"); err != nil {
		t.Fatal(err)
	}
	var fin *task.FinishedError
	if _, err := c.Send(ctx, tk.ID, "too late", false); !errors.As(err, &fin) {
		t.Errorf("message to a cancelled task error = %v, want *FinishedError", err)
	}
	evs, err := st.ReadEvents(ctx, event.Query{Filter: event.Filter{TaskID: tk.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []event.Kind
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	// The message the cancelled task never saw is reported back.
	want := []event.Kind{event.KindTaskCreated, event.KindTaskMessage, event.KindTaskStatus, event.KindTaskStatus, event.KindTaskReturned}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
}

func TestRecoverLeavesWaitingAndPausedAlone(t *testing.T) {
	t.Parallel()
	c, st := newControl(t, counting(200))
	ctx := context.Background()
	var ids []task.ID
	for _, to := range [][]task.Status{{task.Running}, {task.Running, task.Waiting}, {task.Paused}, {}} {
		tk, err := c.Create(ctx, task.Spec{Description: "x"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range to {
			if _, _, err := st.UpdateTask(ctx, tk.ID, store.Transition(s, "", t0)); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, tk.ID)
	}
	got, err := c.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != ids[0] {
		t.Fatalf("Recover = %v, want only the running task %s", got, ids[0])
	}
	want := []task.Status{task.Queued, task.Waiting, task.Paused, task.Queued}
	for i, id := range ids {
		tk, err := st.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status != want[i] || tk.ResumePending != (i == 0) {
			t.Errorf("task %d: %s resume=%v, want %s resume=%v", i, tk.Status, tk.ResumePending, want[i], i == 0)
		}
	}
}

// TestCreateChecksPersonaAndEngine: a persona a task cannot be given, an
// unknown engine and a workflow with an unknown persona are the user's to
// fix, and nothing is stored.
func TestCreateChecksPersonaAndEngine(t *testing.T) {
	t.Parallel()
	c, st := newControl(t, counting(200))
	ctx := context.Background()
	tests := []struct {
		name  string
		spec  task.Spec
		field string
		want  string
	}{
		{"unknown persona", task.Spec{Description: "x", Persona: "principal"}, "persona", `persona "principal": no such persona`},
		{"internal persona", task.Spec{Description: "x", Persona: "router"}, "persona", "internal to Neuraphage"},
		{"unknown engine", task.Spec{Description: "x", Engine: "nope"}, "engine", `"nope": no such engine; engines: native`},
		{"workflow with an unknown persona", task.Spec{Description: "x", Workflow: []task.Phase{{Name: "build", Personas: []string{"principal"}}}},
			"workflow", `"principal"`},
	}
	for _, tt := range tests {
		_, err := c.Create(ctx, tt.spec)
		var inv *task.InvalidError
		if !errors.As(err, &inv) || inv.Field != tt.field || !strings.Contains(inv.Msg, tt.want) {
			t.Errorf("%s: error %v, want a *task.InvalidError on %s saying %q", tt.name, err, tt.field, tt.want)
		}
	}
	if all, err := st.ListTasks(ctx, store.ListOptions{}); err != nil || len(all) != 0 {
		t.Errorf("refused creates stored %d tasks (%v)", len(all), err)
	}
	tk, err := c.Create(ctx, task.Spec{Description: "x", Persona: "senior"})
	if err != nil || tk.Persona != "senior" || tk.Engine != "native" {
		t.Errorf("Create with a known persona = %+v, %v", tk, err)
	}
}

// TestQueuedTaskLife: a queued task pauses and resumes at once, a second
// resume is refused, and a cancelled one takes no more messages.
func TestQueuedTaskLife(t *testing.T) {
	t.Parallel()
	c, _ := newControl(t, counting(200))
	ctx := context.Background()
	tk, err := c.Create(ctx, task.Spec{Description: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Pause(ctx, tk.ID, "not now"); err != nil || got.Status != task.Paused || got.CloseReason != "not now" {
		t.Fatalf("Pause = %+v, %v", got, err)
	}
	if got, err := c.Resume(ctx, tk.ID, ""); err != nil || got.Status != task.Queued {
		t.Fatalf("Resume = %+v, %v", got, err)
	}
	var tr *task.TransitionError
	if _, err := c.Resume(ctx, tk.ID, ""); !errors.As(err, &tr) {
		t.Errorf("resuming a queued task: %v, want a *task.TransitionError", err)
	}
	if got, err := c.Cancel(ctx, tk.ID, ""); err != nil || got.Status != task.Cancelled || got.CloseReason != "cancelled by user" {
		t.Fatalf("Cancel = %+v, %v", got, err)
	}
	var fin *task.FinishedError
	if _, err := c.Send(ctx, tk.ID, "still there?", false); !errors.As(err, &fin) || fin.Status != task.Cancelled {
		t.Errorf("message to a cancelled task: %v, want a *task.FinishedError", err)
	}
	if _, err := c.Nudge(ctx, tk.ID, "hint"); !errors.As(err, &fin) {
		t.Errorf("nudge to a cancelled task: %v, want a *task.FinishedError", err)
	}
}

// TestCancelCascadesToPhases: cancelling a workflow task cancels its
// unfinished phase tasks; a finished phase and an unrelated child stay as
// they are.
func TestCancelCascadesToPhases(t *testing.T) {
	t.Parallel()
	c, st := newControl(t, counting(200))
	ctx := context.Background()
	wf, err := c.Add(ctx, task.Spec{Description: "w", Workflow: []task.Phase{{Name: "build", Personas: []string{"mid"}}, {Name: "check", Personas: []string{"reviewer"}}}})
	if err != nil {
		t.Fatal(err)
	}
	phase := func(i int) task.Task {
		k, err := c.Add(ctx, task.Spec{Description: "p", ParentID: wf.ID, Phase: &task.PhaseRef{Index: i, Name: "p"}, Hold: true})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	done, held, queued := phase(0), phase(1), phase(1)
	if _, err := c.Resume(ctx, queued.ID, ""); err != nil {
		t.Fatal(err)
	}
	for _, to := range []task.Status{task.Queued, task.Running, task.Completed} {
		if _, _, err := st.UpdateTask(ctx, done.ID, store.Transition(to, "", t0)); err != nil {
			t.Fatal(err)
		}
	}
	other, err := c.Add(ctx, task.Spec{Description: "not a phase", ParentID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Cancel(ctx, wf.ID, "enough"); err != nil || got.Status != task.Cancelled {
		t.Fatalf("Cancel = %+v, %v", got, err)
	}
	want := map[task.ID]task.Status{done.ID: task.Completed, held.ID: task.Cancelled, queued.ID: task.Cancelled, other.ID: task.Queued}
	for id, w := range want {
		got, err := st.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != w {
			t.Errorf("task %s is %s, want %s", id, got.Status, w)
		}
		if w == task.Cancelled && got.CloseReason != "its workflow "+string(wf.ID)+" was cancelled" {
			t.Errorf("task %s: reason %q", id, got.CloseReason)
		}
	}
}

// counting returns n bytes 0, 1, 2, …: distinct IDs for n/5 draws.
func counting(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// TestListPages: List pages through the tasks with Next, keeps to the
// default filter (unfinished), takes a prefix as the cursor and refuses a
// negative limit or an unknown cursor.
func TestListPages(t *testing.T) {
	t.Parallel()
	c, _ := newControl(t, counting(200))
	ctx := context.Background()
	var want []task.ID
	for i := range 7 {
		tk, err := c.Create(ctx, task.Spec{Description: "task\nnumber " + string(rune('a'+i)), Hold: true})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, tk.ID)
	}
	if _, err := c.Cancel(ctx, want[3], ""); err != nil {
		t.Fatal(err)
	}
	for _, q := range []tasks.ListQuery{{}, {All: true}} {
		var got []task.ID
		q.Limit = 2
		for pages := 0; ; pages++ {
			p, err := c.List(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			sms := summaries(t, p)
			if len(sms) > 2 || pages > 5 {
				t.Fatalf("page %d of %d tasks", pages, len(sms))
			}
			for _, sm := range sms {
				got = append(got, sm.ID)
				if sm.Description != "task number "+string(rune('a'+slices.Index(want, sm.ID))) {
					t.Errorf("%s: description %q", sm.ID, sm.Description)
				}
			}
			if p.Next == "" {
				break
			}
			if p.Next != got[len(got)-1] {
				t.Fatalf("Next = %s, want the page's last %s", p.Next, got[len(got)-1])
			}
			q.After = string(p.Next)
		}
		exp := want
		if !q.All {
			exp = slices.Concat(want[:3], want[4:])
		}
		if !slices.Equal(got, exp) {
			t.Errorf("List(%+v) in pages: %v, want %v", q, got, exp)
		}
	}
	// A page that holds exactly the rest says there is no next one.
	if p, err := c.List(ctx, tasks.ListQuery{All: true, Limit: 7}); err != nil || len(summaries(t, p)) != 7 || p.Next != "" {
		t.Errorf("List(limit 7 of 7) = %d tasks, next %q, %v", p.N, p.Next, err)
	}
	if p, err := c.List(ctx, tasks.ListQuery{All: true, After: strings.TrimPrefix(string(want[5]), "t-")}); err != nil || p.N != 1 || summaries(t, p)[0].ID != want[6] {
		t.Errorf("List(after a prefix of the 6th) = %s, %v", p.JSON, err)
	}
	var inv *task.InvalidError
	if _, err := c.List(ctx, tasks.ListQuery{Limit: -1}); !errors.As(err, &inv) {
		t.Errorf("List(limit -1) error = %v, want *task.InvalidError", err)
	}
	if _, err := c.List(ctx, tasks.ListQuery{After: "zzzzz"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("List(after unknown) error = %v, want ErrNotFound", err)
	}
}

// summaries decodes a page.
func summaries(t *testing.T, p tasks.Page) []task.Summary {
	t.Helper()
	var out []task.Summary
	if err := json.Unmarshal([]byte("["+string(p.JSON)+"]"), &out); err != nil {
		t.Fatalf("page: %v\n%s", err, p.JSON)
	}
	if len(out) != p.N {
		t.Fatalf("page of %d summaries says N = %d", len(out), p.N)
	}
	return out
}

// BenchmarkList10k measures the daemon's share of `ps --all --json` with
// 10,000 tasks: the service's List over the SQLite store, and the page of
// 50 that `ps --limit 50` asks for.
func BenchmarkList10k(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	storetest.PopulateHeld(b, st, 10_000)
	svc := tasks.New(tasks.Options{Store: st, Records: st, Personas: persona.Defaults(), Engine: "native",
		Now: time.Now, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		q    tasks.ListQuery
		want int
	}{
		{"all", tasks.ListQuery{All: true}, 10_000},
		{"unfinished", tasks.ListQuery{}, 10_000},
		{"page50", tasks.ListQuery{After: "t-005000", Limit: 50}, 50},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := svc.List(ctx, bc.q)
				if err != nil || p.N != bc.want {
					b.Fatalf("List = %d tasks, %v", p.N, err)
				}
			}
		})
	}
}

// TestRecoverWakesAWaitingTaskWithAMessage: a daemon that died between a
// waiting task's message being stored and the task being woken leaves it
// waiting with the message unread; the next start queues it. A notice
// that holds no end (a rebase notice) leaves a waiting task waiting.
func TestRecoverWakesAWaitingTaskWithAMessage(t *testing.T) {
	t.Parallel()
	c, st := newControl(t, counting(200))
	ctx := context.Background()
	var ids []task.ID
	for _, inj := range []inject.Injection{
		{Kind: inject.Message, Source: inject.FromUser, Text: "use main.go"},
		{Kind: inject.Rebase, Source: inject.FromMainWatcher, Urgency: inject.FYI, Text: "main moved"},
	} {
		tk, err := c.Create(ctx, task.Spec{Description: "x"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []task.Status{task.Running, task.Waiting} {
			if _, _, err := st.UpdateTask(ctx, tk.ID, store.Transition(s, "", t0)); err != nil {
				t.Fatal(err)
			}
		}
		inj.TaskID = tk.ID
		if _, _, err := st.Enqueue(ctx, inj, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	if _, err := c.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	for i, want := range []task.Status{task.Queued, task.Waiting} {
		tk, err := st.GetTask(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status != want {
			t.Errorf("task %d after Recover: %s, want %s", i, tk.Status, want)
		}
	}
}
