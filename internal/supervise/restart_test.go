package supervise

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/supervisor/supervisortest"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// sqlRun is a Watcher over a real SQLite store, as in the daemon: the
// store publishes what it commits to the bus the Watcher follows.
type sqlRun struct {
	t   *testing.T
	st  *sqlite.Store
	bus *event.Bus
	act *supervisortest.Actions
	w   *Watcher
	obs testkit.Agent
	id  task.ID
	// sent counts the events the Watcher follows published since it started.
	sent uint64

	stop func()
}

func newSQLRun(t *testing.T, id task.ID) *sqlRun {
	bus := event.NewBus(event.Options{}, 0)
	st := testkit.OpenStore(t, sqlite.Options{Publish: bus.Publish})
	now := time.Now().UTC()
	tk := task.Task{ID: id, Description: "make the release check pass", Status: task.Queued, Persona: "junior", Engine: "native",
		Worktree: "/home/dev/.neuraphage/worktrees/" + string(id), CreatedAt: now, UpdatedAt: now}
	if _, err := st.CreateTask(t.Context(), tk); err != nil {
		t.Fatal(err)
	}
	r := &sqlRun{t: t, st: st, bus: bus, id: id, obs: testkit.Agent{ID: id, Tokens: 1200}}
	r.start()
	return r
}

// start runs a new Watcher over the store, as a daemon (re)start does.
func (r *sqlRun) start() {
	cfg := baseConfig()
	cfg.Interval = time.Hour // only the observations drive the ladder here
	r.act, r.sent = &supervisortest.Actions{}, 0
	r.w = New(Options{Config: cfg, Store: r.st, Bus: r.bus, Actions: r.act})
	ctx, cancel := context.WithCancel(r.t.Context())
	done := make(chan error, 1)
	go func() { done <- r.w.Run(ctx) }()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				r.t.Errorf("Run = %v", err)
			}
		})
	}
	r.t.Cleanup(r.stop)
	testkit.WaitFor(r.t, "the Watcher to follow the bus", func() bool { return r.bus.Stats().Subscribers > 0 })
}

// restart stops the Watcher and starts another over the same store.
func (r *sqlRun) restart() {
	r.stop()
	r.start()
}

func (r *sqlRun) status(to task.Status) {
	if _, _, err := r.st.UpdateTask(r.t.Context(), r.id, store.Transition(to, "test", time.Now())); err != nil {
		r.t.Fatal(err)
	}
	r.sent++
	r.settle()
}

func (r *sqlRun) pub(ps ...event.Payload) {
	r.t.Helper()
	evs := make([]event.Event, len(ps))
	for i, p := range ps {
		evs[i] = event.New(time.Now().UTC(), r.id, p)
	}
	if _, err := r.st.AppendEvents(r.t.Context(), evs...); err != nil {
		r.t.Fatal(err)
	}
	r.sent += uint64(len(ps))
	r.settle()
}

// settle waits until the Watcher has taken in every observation and
// status change published since it started (its loop handles them in
// order, one at a time).
func (r *sqlRun) settle() {
	r.t.Helper()
	testkit.WaitFor(r.t, "the Watcher to take in the events", func() bool { return r.w.Stats().Observations >= r.sent })
}

func (r *sqlRun) fail() {
	r.pub(r.obs.ToolTurn("bash", map[string]string{"command": "sh check.sh"},
		"check.sh: line 3: VERSION: No such file or directory\nrelease check FAILED", true)...)
}

func (r *sqlRun) edit(text string) {
	r.pub(r.obs.ToolTurn("edit_file", map[string]string{"path": "VERSION", "old_text": "TODO", "new_text": text}, "Edited VERSION.", false, "VERSION")...)
}

func (r *sqlRun) deliverLast() {
	ns := r.act.Of(r.id, inject.Nudge)
	if len(ns) == 0 {
		r.t.Fatal("no nudge to deliver")
	}
	r.pub(r.obs.Delivered([]int64{ns[len(ns)-1].ID}, []string{string(inject.Nudge)}))
}

// recordedNudges returns the severities of the nudges the store holds.
func (r *sqlRun) recordedNudges() []string {
	evs, err := r.st.ReadEvents(r.t.Context(), event.Query{Filter: event.Filter{TaskID: r.id, Kinds: []string{string(event.KindWatcherNudge)}}})
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Payload.(event.WatcherNudge).Severity)
	}
	return out
}

// A restarted daemon continues a task's ladder where it was: nudged twice
// (hint, warning), the task is restarted (a new Watcher over the same
// store, the task requeued and run again), and its next finding is met with
// the third rung, not a hint. A task that progressed after its nudge, or
// that its user paused and resumed (through the queue, across the
// restart), starts afresh as it would have without one.
func TestLadderSurvivesARestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		before func(r *sqlRun) // after the second nudge is read, before the restart
		want   []string        // severities of all the nudges recorded
	}{
		{name: "continues", want: []string{"hint", "warning", "critical"}},
		{name: "progress since", before: func(r *sqlRun) { r.edit("1.0.0") }, want: []string{"hint", "warning", "hint"}},
		{name: "resumed by its user", before: func(r *sqlRun) { r.status(task.Paused); r.status(task.Queued) },
			want: []string{"hint", "warning", "hint"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newSQLRun(t, "t-restart")
			r.status(task.Running)
			r.fail()
			r.fail()
			r.fail() // the third failure: a hint
			r.deliverLast()
			r.fail()
			r.fail() // two calls after it was read: a warning
			if diff := cmp.Diff([]string{"hint", "warning"}, r.recordedNudges()); diff != "" {
				t.Fatalf("nudges before the restart (-want +got):\n%s", diff)
			}
			r.deliverLast()
			if tc.before != nil {
				tc.before(r)
			}
			if tk, _ := r.st.GetTask(t.Context(), r.id); tk.Status == task.Running {
				r.status(task.Queued) // the daemon stops: its running task is requeued
			}
			r.restart()
			r.status(task.Running)
			if h, ok := r.w.Health(r.id); !ok || h.Steps != r.obs.Calls*2 {
				t.Fatalf("window after the restart: %+v, %t", h, ok)
			}
			for range 3 {
				r.fail()
			}
			if diff := cmp.Diff(tc.want, r.recordedNudges()); diff != "" {
				t.Errorf("nudges (-want +got):\n%s", diff)
			}
			if tc.name == "continues" {
				n := r.act.Of(r.id, inject.Nudge)
				if len(n) != 1 || n[0].Attrs["severity"] != "critical" {
					t.Errorf("nudges sent after the restart = %+v, want one critical", n)
				}
				h, _ := r.w.Health(r.id)
				if h.Ladder != "critical" || h.Unheeded != 2 {
					t.Errorf("health after the restart = %+v, want critical with 2 unheeded", h)
				}
			}
		})
	}
}
