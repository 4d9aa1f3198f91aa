package syncer

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// These tests pin defects of the Syncer found while testing it, since
// fixed.

// A briefing lists only learnings not yet sent to the task. The executor
// moves a task to running before it prepares its worktree and briefs it
// (internal/executor/executor.go), so a learning may reach the task in
// between.
func TestBriefOmitsLearningsAlreadySent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		api := h.task("t-aaaa1", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil)
		nt := h.task("t-hhhh8", "Add JWT expiry checks to the token validator", []string{"auth", "jwt"}, task.Queued, nil)
		s := h.start(baseConfig(), nil)
		api.learn("JWT tokens signed with HS256 must use the key from AUTH_SECRET, not the default", "", "auth", "jwt")
		nt.status(task.Running)
		b := api.learn(jwtSummary, "", "auth", "jwt")
		if got := nt.syncs(); len(got) != 1 || got[0].Attrs["learning"] != itoa(b.ID) {
			t.Fatalf("the new task got %+v, want learning %d relayed", got, b.ID)
		}
		tk, err := h.st.GetTask(context.Background(), nt.id)
		if err != nil {
			t.Fatal(err)
		}
		s.Brief(context.Background(), tk)
		got := nt.syncs()
		if len(got) != 2 || got[1].Attrs["from"] != "knowledge" {
			t.Fatalf("the new task got %+v, want the relay and a briefing", got)
		}
		if strings.Contains(got[1].Text, "iat claim") {
			t.Errorf("the briefing repeats the learning already relayed:\n%s", got[1].Text)
		}
	})
}

// The sweep offers a learning again only to tasks that joined after it
// was evaluated.
func TestSweepDoesNotReevaluateForKnownTasks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		s := h.start(baseConfig(), nil)
		tm.api.learn(jwtSummary, "", "auth", "jwt")
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if st := s.Stats(); st.Evaluated != 1 || st.Sweeps != 8 {
			t.Errorf("after 8 sweeps with no late joiner: evaluated %d times, want once (stats %+v)", st.Evaluated, st)
		}
	})
}

// A record_learning call that joins a known learning counts as merged.
func TestMergedExplicitLearningIsCounted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		s := h.start(baseConfig(), nil)
		tm.api.learn(jwtSummary, "", "auth", "jwt")
		if l := tm.ui.learn(jwtSummary, "", "auth", "jwt"); !l.Merged {
			t.Fatalf("the store did not merge the second recording: %+v", l)
		}
		if st := s.Stats(); st.Merged != 1 {
			t.Errorf("stats = %+v, want one merged learning", st)
		}
	})
}

// A persona that relays to nobody is recorded with its reason.
func TestPersonaSkipIsRecorded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		h.start(baseConfig(), func(o *Options) { o.Decider = skipDecider{} })
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		if got := h.act.Count(); got != 0 {
			t.Errorf("%d injections, want none", got)
		}
		ig := eventsOf[event.SyncIgnored](h, tm.api.id)
		if len(ig) != 1 || ig[0].LearningID != l.ID || ig[0].Reason != "persona-skipped" || ig[0].Detail != "they already know" {
			t.Errorf("SyncIgnored = %+v", ig)
		}
		if ms := h.messages(store.SyncQuery{}); len(ms) != 0 {
			t.Errorf("sync messages = %+v", ms)
		}
	})
}

// skipDecider relays to nobody.
type skipDecider struct{}

func (skipDecider) Decide(context.Context, Evaluation) (Decision, error) {
	return Decision{SkipReason: "they already know"}, nil
}
