package syncer

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// restart stops the Syncer and starts a new one on the same store, as a
// daemon restart does.
func (h *harness) restart(cfg Config) *Syncer {
	h.t.Helper()
	if err := h.stop(); err != nil {
		h.t.Fatal(err)
	}
	h.once, h.cancel, h.err = sync.Once{}, nil, nil
	return h.start(cfg, nil)
}

// Messages held when the daemon stops are sent after it starts again. The
// daemon's recovery moves the running tasks to queued before the Syncer
// starts, so it sees them start running afresh.
func TestHeldMessagesSurviveARestart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		cfg := baseConfig()
		h.start(cfg, nil)
		h.act.Fail(errors.New("the queue is busy"))
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		held := h.messages(store.SyncQuery{LearningID: l.ID, States: []store.SyncState{store.SyncHeld}})
		if len(held) != 2 {
			t.Fatalf("held before the restart: %+v; want the ui and tests tasks' messages", held)
		}
		for _, a := range []*agent{tm.api, tm.ui, tm.tests, tm.greeting} {
			a.status(task.Queued)
		}
		h.act.Fail(nil)
		h.restart(cfg)
		for _, a := range []*agent{tm.api, tm.ui, tm.tests, tm.greeting} {
			a.status(task.Running)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := len(tm.ui.syncs()) + len(tm.tests.syncs()); got != 2 {
			t.Errorf("%d messages queued after the restart, want 2", got)
		}
		if left := h.messages(store.SyncQuery{States: []store.SyncState{store.SyncHeld}}); len(left) != 0 {
			t.Errorf("still held: %+v", left)
		}
	})
}

// A held message of a task that finished while the Syncer did not track it
// is dropped at a sweep, with its reason.
func TestHeldMessagesOfATaskFinishedWhileUntracked(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		cfg := baseConfig()
		h.start(cfg, nil)
		h.act.Fail(errors.New("the queue is busy"))
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		h.stop()
		tm.ui.status(task.Cancelled)
		h.act.Fail(nil)
		h.restart(cfg)
		time.Sleep(cfg.Interval + time.Second)
		synctest.Wait()
		ms := h.messages(store.SyncQuery{LearningID: l.ID, TaskID: tm.ui.id})
		if len(ms) != 1 || ms[0].State != store.SyncIgnored || ms[0].Note == "" {
			t.Errorf("the finished task's message: %+v; want ignored, recipient-finished", ms)
		}
	})
}

// A briefing's rows wait for Brief to queue them: the loop's dispatch
// leaves them alone, so a learning is not sent twice.
func TestDispatchLeavesABriefingAlone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		h.start(baseConfig(), nil)
		// A learning in the store that was never relayed (recorded
		// straight into it).
		old, _, err := h.st.RecordLearning(t.Context(), store.Learning{TaskID: tm.api.id, Summary: "the session cookie is named np_session",
			CreatedAt: time.Now()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Brief is between storing its rows and queueing them.
		if _, _, err := h.st.AddSyncMessage(t.Context(), store.SyncMessage{LearningID: old.ID, From: tm.api.id, TaskID: tm.ui.id,
			Urgency: FYI, Message: "m", DecidedBy: briefing, State: store.SyncHeld, CreatedAt: time.Now()}, nil); err != nil {
			t.Fatal(err)
		}
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		got := tm.ui.syncs()
		if len(got) != 1 || got[0].Attrs["learning"] != itoa(l.ID) {
			t.Errorf("the ui task got %+v; want learning %d alone, not the briefing's row", got, l.ID)
		}
	})
}
