package supervise

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/stuck"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// findingOf rebuilds the finding a nudge was sent for, to render the
// tier-1 message it should carry.
func findingOf(n event.WatcherNudge) *stuck.Finding {
	return &stuck.Finding{Check: stuck.Check(n.Check), Diagnosis: n.Diagnosis, Evidence: n.Evidence}
}

func TestRepeatedFailureIsNudgedWithEvidence(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		a := h.task("t-fail", nil)
		a.status(task.Running)
		a.failN(2)
		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Fatalf("nudged after two failures: %+v", got)
		}
		a.fail()

		inj := a.lastNudge()
		recs := recordedOf[event.WatcherNudge](h.st, a.id)
		if len(recs) != 1 {
			t.Fatalf("recorded nudges = %+v, want one", recs)
		}
		n := recs[0]
		if n.Severity != "hint" || n.Check != string(stuck.Failing) || n.Tier != 1 || n.Unheeded != 0 || n.InjectionID != inj.ID {
			t.Errorf("recorded nudge = %+v (injection %d)", n, inj.ID)
		}
		if len(n.Evidence) != 3 {
			t.Fatalf("evidence = %+v, want the three failed results", n.Evidence)
		}
		for _, ev := range n.Evidence {
			if ev.Kind != "result" || ev.Tool != "bash" || !strings.Contains(ev.What, "check.sh") || !strings.Contains(ev.What, "error: ") {
				t.Errorf("evidence step = %+v", ev)
			}
		}
		want := Message(findingOf(n), hint)
		if inj.Text != want || n.Message != want {
			t.Errorf("nudge text = %q, recorded %q, want %q", inj.Text, n.Message, want)
		}
		if !strings.HasPrefix(inj.Text, "A note from the watcher: ") || !strings.Contains(inj.Text, n.Evidence[2].What) {
			t.Errorf("nudge text %q does not show what was seen", inj.Text)
		}
		if inj.Source != "watcher" || inj.Urgent || inj.Attrs["severity"] != "hint" || inj.Attrs["check"] != "failing" {
			t.Errorf("injection = %+v", inj)
		}
		if diff := cmp.Diff([]string{"watcher.health", "watcher.nudge", "watcher.health"}, a.kinds()); diff != "" {
			t.Errorf("recorded (-want +got):\n%s", diff)
		}
		hl, ok := h.w.Health(a.id)
		if !ok || hl.Status != "stuck" || hl.Ladder != "hint" || hl.Check != "failing" || hl.Tier != 1 || len(hl.Evidence) != 3 {
			t.Errorf("health = %+v, %t", hl, ok)
		}
		if s := h.w.Stats(); s.Nudges != 1 || s.Degraded || s.Tier2Calls != 0 {
			t.Errorf("stats = %+v", s)
		}
	})
}

func TestTier2WritesTheNudge(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		j := scripted(answer{v: Verdict{Status: "stuck", Confidence: 0.9, Diagnosis: "check.sh needs a VERSION file",
			Recommendation: "nudge", NudgeMessage: "check.sh reads VERSION, which does not exist. Create it."}})
		cfg := baseConfig()
		cfg.Tier2 = true
		h := start(t, true, cfg, func(o *Options) { o.Judge = j })
		a := h.task("t-tier2", nil)
		a.status(task.Running)
		a.failN(3)

		if got := a.lastNudge().Text; got != "check.sh reads VERSION, which does not exist. Create it." {
			t.Errorf("nudge text = %q, want the judge's", got)
		}
		n := recordedOf[event.WatcherNudge](h.st, a.id)
		if len(n) != 1 || n[0].Tier != 2 || n[0].Diagnosis != "check.sh needs a VERSION file" || n[0].Check != "failing" {
			t.Errorf("recorded = %+v", n)
		}
		snaps := j.calls()
		if len(snaps) != 1 {
			t.Fatalf("judged %d times, want once", len(snaps))
		}
		if s := snaps[0]; s.Finding == nil || s.Finding.Check != stuck.Failing || s.Task.ID != a.id || s.Ladder != "none" || len(s.Window) == 0 {
			t.Errorf("snapshot = %+v", s)
		}
		if s := h.w.Stats(); s.Tier2Calls != 1 || s.Tier2Failures != 0 || s.Degraded {
			t.Errorf("stats = %+v", s)
		}
		if hl, _ := h.w.Health(a.id); hl.Tier != 2 || hl.Confidence != 0.9 || hl.Diagnosis != "check.sh needs a VERSION file" {
			t.Errorf("health = %+v", hl)
		}
	})
}

func TestTier2FailureFallsBackToTier1(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		j := scripted(answer{err: errors.New("model overloaded")},
			answer{v: Verdict{Status: "stuck", Confidence: 0.8, Recommendation: "nudge", NudgeMessage: "Create VERSION."}})
		cfg := baseConfig()
		cfg.Tier2 = true
		h := start(t, true, cfg, func(o *Options) { o.Judge = j })
		a := h.task("t-degraded", nil)
		a.status(task.Running)
		a.failN(3)

		n := recordedOf[event.WatcherNudge](h.st, a.id)
		if len(n) != 1 || n[0].Tier != 1 {
			t.Fatalf("recorded = %+v, want one tier-1 nudge", n)
		}
		if got, want := a.lastNudge().Text, Message(findingOf(n[0]), hint); got != want {
			t.Errorf("nudge text = %q, want tier 1's %q", got, want)
		}
		s := h.w.Stats()
		if !s.Degraded || s.Tier2Failures != 1 || s.Tier2Calls != 1 || !strings.Contains(s.DegradedReason, "model overloaded") {
			t.Errorf("stats = %+v, want degraded by the failure", s)
		}
		hs := recordedOf[event.HealthCheck](h.st, a.id)
		if last := hs[len(hs)-1]; !last.Degraded || last.Ladder != "hint" {
			t.Errorf("last health = %+v, want degraded at hint", last)
		}

		// The next judgement works: degraded mode ends.
		a.deliver(a.lastNudge().ID)
		a.edit("VERSION", "0.2.0")
		a.failN(3)
		if got := a.lastNudge().Text; got != "Create VERSION." {
			t.Errorf("second nudge = %q, want the judge's", got)
		}
		if s := h.w.Stats(); s.Degraded || s.Tier2Calls != 2 || s.Tier2Failures != 1 {
			t.Errorf("stats = %+v, want tier 2 back", s)
		}
	})
}

func TestTier2WithoutAJudgeIsDegraded(t *testing.T) {
	t.Parallel()
	cfg := baseConfig()
	cfg.Tier2 = true
	w := New(Options{Config: cfg})
	if s := w.Stats(); !s.Degraded || s.DegradedReason == "" || !s.Enabled {
		t.Errorf("stats = %+v, want degraded from the start", s)
	}
}

func TestSpentAddsUpTier2Cost(t *testing.T) {
	t.Parallel()
	w := New(Options{Config: baseConfig()})
	w.Spent("t-a", llm.Usage{InputTokens: 900, OutputTokens: 80, CacheReadTokens: 15, CacheWriteTokens: 5}, 0.002)
	w.Spent("t-b", llm.Usage{InputTokens: 100}, 0.001)
	if s := w.Stats(); s.Tier2Tokens != 1100 || s.Tier2USD < 0.0029 || s.Tier2USD > 0.0031 {
		t.Errorf("tier 2 cost = %d tokens, $%g; want 1100, $0.003", s.Tier2Tokens, s.Tier2USD)
	}
}

func TestProgressAfterANudgeResetsTheLadder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		a := h.task("t-progress", nil)
		a.status(task.Running)
		a.failN(3)
		a.deliver(a.lastNudge().ID)
		a.edit("VERSION", "0.2.0")

		hl, _ := h.w.Health(a.id)
		if hl.Status != "healthy" || hl.Ladder != "none" || hl.Unheeded != 0 {
			t.Errorf("health after progress = %+v", hl)
		}
		hs := recordedOf[event.HealthCheck](h.st, a.id)
		if last := hs[len(hs)-1]; last.Status != "healthy" || last.Ladder != "none" || last.Check != "" {
			t.Errorf("last health = %+v, want healthy", last)
		}

		// A new loop starts at a hint again, with nothing held against it.
		a.failN(3)
		if diff := cmp.Diff([]string{"hint", "hint"}, a.severities()); diff != "" {
			t.Errorf("severities (-want +got):\n%s", diff)
		}
		n := recordedOf[event.WatcherNudge](h.st, a.id)
		if last := n[len(n)-1]; last.Unheeded != 0 {
			t.Errorf("second nudge = %+v, want nothing unheeded", last)
		}
	})
}

func TestProgressBeforeTheNudgeIsReadCountsOnceRead(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		a := h.task("t-early", nil)
		a.status(task.Running)
		a.failN(3)
		a.edit("VERSION", "0.2.0")
		if hl, _ := h.w.Health(a.id); hl.Ladder != "hint" {
			t.Errorf("ladder = %q before the nudge is read, want hint", hl.Ladder)
		}
		a.deliver(a.lastNudge().ID)
		if hl, _ := h.w.Health(a.id); hl.Ladder != "none" || hl.Status != "healthy" {
			t.Errorf("health once read = %+v, want healthy", hl)
		}
	})
}

func TestHealthyRunIsLeftAlone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		j := scripted(answer{v: Verdict{Status: "stuck", Confidence: 1, Recommendation: "pause"}})
		cfg := baseConfig()
		cfg.Tier2 = true
		h := start(t, true, cfg, func(o *Options) { o.Judge = j })
		a := h.task("t-healthy", nil)
		a.status(task.Running)
		tests := []string{"TestParse", "TestLoad", "TestMerge", "TestRender", "TestServe", "TestClose"}
		for i, name := range tests {
			a.edit("internal/pkg"+name+".go", "func "+name+"Helper() {}")
			out := "--- FAIL: " + name + " (0.0" + string(rune('1'+i)) + "s)\n    want " + name + " fixed\nFAIL"
			a.tool("bash", map[string]string{"command": "go test ./internal/..."}, out, true)
			time.Sleep(30 * time.Second)
		}
		a.tool("bash", map[string]string{"command": "go test ./internal/..."}, "ok  \tgithub.com/x/internal/pkg\t0.4s", false)

		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Errorf("nudged a healthy run: %+v", got)
		}
		if got := a.kinds(); len(got) != 0 {
			t.Errorf("recorded %v about a healthy run, want nothing", got)
		}
		if n := len(j.calls()); n != 0 {
			t.Errorf("judged a healthy run %d times", n)
		}
		s := h.w.Stats()
		if len(s.Tier1) != 0 || s.Nudges != 0 || s.Cycles == 0 {
			t.Errorf("stats = %+v", s)
		}
		if hl, _ := h.w.Health(a.id); hl.Status != "healthy" || hl.Ladder != "none" || hl.Steps != 2*len(tests)*2+2 {
			t.Errorf("health = %+v", hl)
		}
	})
}

func TestUnsupervisedAndFinishedTasks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		free := h.task("t-free", func(t *task.Task) { t.NoSupervision = true })
		free.status(task.Running)
		free.failN(6)
		if got := h.act.Of(free.id, inject.Nudge); len(got) != 0 {
			t.Errorf("nudged an unsupervised task: %+v", got)
		}
		if got := free.kinds(); len(got) != 0 {
			t.Errorf("recorded %v about an unsupervised task", got)
		}
		if hl, ok := h.w.Health(free.id); !ok || hl.Status != "unsupervised" {
			t.Errorf("health = %+v", hl)
		}
		if s := h.w.Stats(); s.Tier1["failing"] != 0 {
			t.Errorf("tier 1 ran on an unsupervised task: %+v", s.Tier1)
		}

		a := h.task("t-done", nil)
		a.status(task.Running)
		a.failN(2)
		if _, ok := h.w.Health(a.id); !ok {
			t.Fatal("a running task is not watched")
		}
		a.status(task.Completed)
		if _, ok := h.w.Health(a.id); ok {
			t.Error("a completed task is still watched")
		}
		// Late observations of a finished task start no window.
		a.fail()
		if _, ok := h.w.Health(a.id); ok {
			t.Error("a late observation brought the finished task back")
		}
		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Errorf("nudged a finished task: %+v", got)
		}
	})
}

func TestPanickingActionsAreContained(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		h.act.PanicOn("t-bad")
		bad, good := h.task("t-bad", nil), h.task("t-good", nil)
		bad.status(task.Running)
		good.status(task.Running)
		for range 3 {
			bad.fail()
			good.fail()
		}
		s := h.w.Stats()
		if s.Panics != 1 || s.Restarts != 0 || !s.Running {
			t.Errorf("stats = %+v, want one recovered panic and no restart", s)
		}
		if got := good.severities(); len(got) != 1 {
			t.Errorf("the other task's nudges = %v, want one", got)
		}
		// The panicking task's window was dropped: the observation after
		// the panic (its turn's end) started a fresh one.
		if hl, ok := h.w.Health(bad.id); !ok || hl.Steps != 0 || hl.Status != "healthy" || hl.Ladder != "none" {
			t.Errorf("the panicking task's health = %+v, %t; want a fresh window", hl, ok)
		}
	})
}

func TestPanickingJudgeIsContained(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		j := &fakeJudge{fn: func(_ context.Context, _ int, s Snapshot) (Verdict, error) {
			if s.Task.ID == "t-bad" {
				panic("judge blew up")
			}
			return Verdict{}, errors.New("no model")
		}}
		cfg := baseConfig()
		cfg.Tier2 = true
		h := start(t, true, cfg, func(o *Options) { o.Judge = j })
		bad, good := h.task("t-bad", nil), h.task("t-good", nil)
		bad.status(task.Running)
		good.status(task.Running)
		bad.failN(3)
		good.failN(3)
		if s := h.w.Stats(); s.Panics != 1 {
			t.Errorf("panics = %d, want 1", s.Panics)
		}
		if got := good.severities(); len(got) != 1 {
			t.Errorf("the other task's nudges = %v, want one", got)
		}
	})
}

func TestLoopRestartsAfterAPanic(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), func(o *Options) { o.Store.(*fakeStore).panicList.Store(1) })
		if s := h.w.Stats(); s.Restarts != 1 || s.Panics != 0 {
			t.Errorf("stats after the crash = %+v", s)
		}
		time.Sleep(2 * time.Second) // the loop restarts a second later
		synctest.Wait()
		a := h.task("t-after", nil)
		a.status(task.Running)
		a.failN(3)
		if got := a.severities(); len(got) != 1 {
			t.Errorf("nudges after the restart = %v, want one", got)
		}
	})
}

func TestStatsCount(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		if s := h.w.Stats(); !s.Running || !s.Enabled || s.Cycles != 0 || s.Started.IsZero() {
			t.Errorf("stats at start = %+v", s)
		}
		time.Sleep(16 * time.Second)
		synctest.Wait()
		if s := h.w.Stats(); s.Cycles != 3 || !s.LastCycle.Equal(s.Started.Add(15*time.Second)) {
			t.Errorf("after 16s of 5s ticks: cycles %d, last %v (started %v)", s.Cycles, s.LastCycle, s.Started)
		}

		a := h.task("t-stats", nil)
		a.status(task.Running) // 1 observation
		a.failN(3)             // 5 each
		s := h.w.Stats()
		if s.Observations != 16 || s.Watched != 1 || s.Nudges != 1 {
			t.Errorf("stats = %+v, want 16 observations, 1 watched, 1 nudge", s)
		}
		if diff := cmp.Diff(map[string]uint64{"failing": 1}, s.Tier1); diff != "" {
			t.Errorf("tier 1 (-want +got):\n%s", diff)
		}
		a.fail() // failing again, and now 4 identical results: repeat too
		if diff := cmp.Diff(map[string]uint64{"failing": 2, "repeat": 1}, h.w.Stats().Tier1); diff != "" {
			t.Errorf("tier 1 (-want +got):\n%s", diff)
		}
		if err := h.stop(); err != nil {
			t.Fatal(err)
		}
		if s := h.w.Stats(); s.Running {
			t.Error("still running after Run returned")
		}
	})
}

func TestSilenceIsFoundOnTheClock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := baseConfig()
		cfg.Stuck.NoProgress = 2 * time.Minute
		h := start(t, true, cfg, nil)
		a := h.task("t-quiet", nil)
		a.status(task.Running)
		for _, cmd := range []string{"make", "make all", "make build"} {
			a.tool("bash", map[string]string{"command": cmd}, "make: *** No rule to make target '"+cmd+"'.", true)
		}
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Fatalf("nudged after a minute of silence: %+v", got)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		n := recordedOf[event.WatcherNudge](h.st, a.id)
		if len(n) != 1 || n[0].Check != string(stuck.NoProgress) || n[0].Severity != "hint" {
			t.Errorf("recorded = %+v, want one no-progress hint", n)
		}
		if h.w.Stats().Tier1["no-progress"] == 0 {
			t.Errorf("tier 1 = %v", h.w.Stats().Tier1)
		}
	})
}

func TestRunReturnsWithJudgementsInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		j := &fakeJudge{fn: func(ctx context.Context, _ int, _ Snapshot) (Verdict, error) {
			close(started)
			<-ctx.Done()
			return Verdict{}, ctx.Err()
		}}
		cfg := baseConfig()
		cfg.Tier2 = true
		h := start(t, true, cfg, func(o *Options) { o.Judge = j })
		a := h.task("t-slow", nil)
		a.status(task.Running)
		a.failN(3)
		<-started
		t0 := time.Now()
		if err := h.stop(); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
		if d := time.Since(t0); d != 0 {
			t.Errorf("Run took %v to return", d)
		}
		if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
			t.Errorf("nudged after the context ended: %+v", got)
		}
	})
}

func TestDisabledRunWaitsForItsContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := baseConfig()
		cfg.Enabled = false
		h := start(t, true, cfg, nil)
		if s := h.w.Stats(); s.Running || s.Enabled {
			t.Errorf("stats = %+v", s)
		}
		if err := h.stop(); err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}

func TestEditTestCycleIsNotAnAlternation(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		a := h.task("t-edit-test", nil)
		a.status(task.Running)
		for i := range 4 {
			a.tool("edit_file", map[string]string{"path": "version.go", "old_text": "v0", "new_text": "v" + string(rune('1'+i))},
				"Edited version.go.", false, "version.go")
			a.tool("bash", map[string]string{"command": "go test ./..."}, "--- FAIL: TestVersion\nFAIL", true)
		}
		if got := recordedOf[event.WatcherNudge](h.st, a.id); len(got) != 0 {
			t.Errorf("nudged an edit/test cycle whose every edit changed a file: %+v", got)
		}
	})
}

// A long read without a change (a Confirm finding) is acted on only when
// tier 2, shown the finding, agrees; when it says the task is surveying,
// or cannot be asked, nothing happens.
func TestReadWithoutChangeActsOnlyOnceTier2Agrees(t *testing.T) {
	t.Parallel()
	read := func(a *agent, n int) {
		for i := range n {
			path := fmt.Sprintf("internal/pkg%03d/doc.go", i)
			a.tool("read_file", map[string]string{"path": path}, "// Package pkg"+fmt.Sprint(i)+" does thing "+fmt.Sprint(i)+".", false)
		}
	}
	stuckReply := answer{v: Verdict{Status: "stuck", Confidence: 0.9, Diagnosis: "reads file after file and writes nothing",
		Recommendation: "nudge", NudgeMessage: "You have read 60 files without changing one: write the change now."}}
	tests := []struct {
		name   string
		judge  *fakeJudge
		tier2  bool
		nudged bool
	}{
		// At 30 results tier 2 takes a look with no finding and lets the
		// survey go on; at 60 it is shown the finding and agrees.
		{"tier 2 agrees", &fakeJudge{fn: func(_ context.Context, _ int, s Snapshot) (Verdict, error) {
			if s.Finding == nil {
				return Verdict{Status: "healthy", Confidence: 0.8, Recommendation: "continue"}, nil
			}
			return stuckReply.v, nil
		}}, true, true},
		{"tier 2 says it is surveying", scripted(answer{v: Verdict{Status: "healthy", Confidence: 0.9, Recommendation: "continue"}}), true, false},
		{"tier 2 fails", scripted(answer{err: errors.New("overloaded")}), true, false},
		{"tier 2 off", scripted(stuckReply), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cfg := baseConfig()
				cfg.Tier2 = tt.tier2
				cfg.Stuck = stuck.Config{Wandering: 30, WanderingAct: 60}
				h := start(t, true, cfg, func(o *Options) { o.Judge = tt.judge })
				a := h.task("t-reader", nil)
				a.status(task.Running)
				read(a, 59)
				if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
					t.Fatalf("nudged before the budget: %+v", got)
				}
				read(a, 1)
				got := h.act.Of(a.id, inject.Nudge)
				if tt.nudged != (len(got) == 1) {
					t.Fatalf("nudges %+v, want nudged=%v", got, tt.nudged)
				}
				if !tt.tier2 {
					if n := len(tt.judge.calls()); n != 0 {
						t.Errorf("judged %d times with tier 2 off", n)
					}
					return
				}
				var shown, named bool
				for _, s := range tt.judge.calls() {
					shown = shown || s.Finding != nil && s.Finding.Check == stuck.Wandering && s.Finding.Confirm
					// The look at 30 is asked because of the signal, and says so.
					named = named || s.Finding == nil && s.Signal != nil && s.Signal.Check == stuck.Wandering &&
						strings.Contains(Prompt(s), "because of a weak signal: wandering (struggling): <task-data kind=\"signal\">30 tool results without changing a file, 30 of them reads")
				}
				if !named {
					t.Errorf("tier 2's look at the first count did not name the signal: %+v", tt.judge.calls())
				}
				if !shown {
					t.Errorf("tier 2 was never shown the finding to confirm: %+v", tt.judge.calls())
				}
				if tt.nudged {
					n := recordedOf[event.WatcherNudge](h.st, a.id)
					if len(n) != 1 || n[0].Check != string(stuck.Wandering) || n[0].Tier != 2 || n[0].Severity != "hint" {
						t.Errorf("recorded = %+v", n)
					}
				}
			})
		})
	}
}
