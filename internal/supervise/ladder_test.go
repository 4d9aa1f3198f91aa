package supervise

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// actions returns the kinds of the watcher's actions recorded about a
// task, health checks left out.
func (a *agent) actions() []string {
	return slices.DeleteFunc(a.kinds(), func(k string) bool { return k == string(event.KindHealthCheck) })
}

func TestUnheededNudgesClimbTheLadder(t *testing.T) {
	t.Parallel()
	refused := &executor.EscalationRefusedError{ID: "t-ladder", Err: errors.New("junior is the top of its escalation chain")}
	for _, tc := range []struct {
		name       string
		cfg        func(*Config)
		refuse     error
		want       []string // watcher actions recorded, in order
		escalation bool     // an escalation was accepted
	}{
		{name: "escalate then pause",
			want:       []string{"watcher.nudge", "watcher.nudge", "watcher.nudge", "watcher.escalate", "watcher.pause"},
			escalation: true},
		{name: "escalate then abort", cfg: func(c *Config) { c.Pause, c.Abort = false, true },
			want:       []string{"watcher.nudge", "watcher.nudge", "watcher.nudge", "watcher.escalate", "watcher.abort"},
			escalation: true},
		{name: "refused escalation then pause", refuse: refused,
			want: []string{"watcher.nudge", "watcher.nudge", "watcher.nudge", "watcher.escalate", "watcher.pause"}},
		{name: "no escalation", cfg: func(c *Config) { c.Escalate = false },
			want: []string{"watcher.nudge", "watcher.nudge", "watcher.nudge", "watcher.pause"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cfg := baseConfig()
				if tc.cfg != nil {
					tc.cfg(&cfg)
				}
				h := start(t, true, cfg, nil)
				if tc.refuse != nil {
					h.act.RefuseEscalation(tc.refuse)
				}
				a := h.task("t-ladder", nil)
				a.status(task.Running)
				a.failN(3)
				for range 3 {
					a.deliver(a.lastNudge().ID)
					a.fail()
					if n := len(a.severities()); n != len(recordedOf[event.WatcherNudge](h.st, a.id)) {
						t.Fatalf("injected and recorded nudges differ")
					}
					before := len(a.actions())
					a.fail()
					if len(a.actions()) != before+1 {
						t.Fatalf("no action %d tool calls after the nudge was read: %v", cfg.StepsToHeed, a.actions())
					}
				}
				if cfg.Escalate {
					a.failN(2)
				}
				if diff := cmp.Diff(tc.want, a.actions()); diff != "" {
					t.Fatalf("actions (-want +got):\n%s", diff)
				}

				if diff := cmp.Diff([]string{"hint", "warning", "critical"}, a.severities()); diff != "" {
					t.Errorf("severities (-want +got):\n%s", diff)
				}
				var unheeded []int
				for _, n := range recordedOf[event.WatcherNudge](h.st, a.id) {
					unheeded = append(unheeded, n.Unheeded)
				}
				if diff := cmp.Diff([]int{0, 1, 2}, unheeded); diff != "" {
					t.Errorf("unheeded (-want +got):\n%s", diff)
				}
				if n := a.lastNudge(); !n.Urgent || !strings.HasPrefix(n.Text, "Critical, from the watcher") {
					t.Errorf("critical nudge = %+v", n)
				}

				escs, cancels := h.act.Calls()
				if cfg.Escalate {
					e := recordedOf[event.WatcherEscalate](h.st, a.id)
					if len(escs) != 1 || !strings.HasSuffix(escs[0], "|watcher") || len(e) != 1 || len(e[0].Evidence) == 0 {
						t.Errorf("escalations = %v, recorded %+v", escs, e)
					}
					switch {
					case tc.escalation && (e[0].From != "junior" || e[0].To != "senior" || e[0].Refused != ""):
						t.Errorf("recorded escalation = %+v", e[0])
					case !tc.escalation && e[0].Refused != "junior is the top of its escalation chain":
						t.Errorf("recorded refusal = %+v, want the reason", e[0])
					}
				}
				var signals []string
				if cfg.Abort {
					ab := recordedOf[event.WatcherAbort](h.st, a.id)
					if len(cancels) != 1 || !strings.HasPrefix(cancels[0], "t-ladder|aborted by the watcher: ") || len(ab) != 1 || ab[0].Reason != "configured" {
						t.Fatalf("cancels = %v, recorded %+v", cancels, ab)
					}
					if got := h.act.Of(a.id, inject.Pause); len(got) != 0 {
						t.Errorf("paused as well as aborted: %+v", got)
					}
					signals = ab[0].Signals
				} else {
					p := recordedOf[event.WatcherPause](h.st, a.id)
					inj := h.act.Of(a.id, inject.Pause)
					if len(p) != 1 || len(inj) != 1 || len(cancels) != 0 {
						t.Fatalf("pauses = %+v, recorded %+v, cancels %v", inj, p, cancels)
					}
					if !strings.Contains(inj[0].Text, "neuraphage task resume t-ladder") || inj[0].Source != "watcher" {
						t.Errorf("pause = %+v", inj[0])
					}
					signals = p[0].Signals
				}
				if len(signals) != 2 || !strings.HasPrefix(signals[0], "tier1:") || signals[1] != "persisted after 3 nudges" {
					t.Errorf("signals = %q, want tier 1's check and the unheeded nudges", signals)
				}

				type counts struct{ Nudges, Escalations, Pauses, Aborts uint64 }
				want := counts{Nudges: 3, Pauses: 1}
				if tc.escalation {
					want.Escalations = 1
				}
				if cfg.Abort {
					want.Pauses, want.Aborts = 0, 1
				}
				s := h.w.Stats()
				if diff := cmp.Diff(want, counts{s.Nudges, s.Escalations, s.Pauses, s.Aborts}); diff != "" {
					t.Errorf("stats (-want +got):\n%s", diff)
				}

				// Stopped: it is the user's now.
				acts := len(a.actions())
				a.failN(4)
				if len(a.actions()) != acts {
					t.Errorf("acted on a stopped task: %v", a.actions())
				}
			})
		})
	}
}

func TestUnreadNudgeHoldsTheLadder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, baseConfig(), nil)
		a := h.task("t-unread", nil)
		a.status(task.Running)
		a.failN(9)
		if diff := cmp.Diff([]string{"hint"}, a.severities()); diff != "" {
			t.Fatalf("severities before the nudge is read (-want +got):\n%s", diff)
		}
		a.deliver(a.lastNudge().ID + 100) // another message's receipt
		a.failN(2)
		if n := len(a.severities()); n != 1 {
			t.Fatalf("climbed on another injection's receipt: %v", a.severities())
		}
		a.deliver(a.lastNudge().ID)
		a.fail()
		if n := len(a.severities()); n != 1 {
			t.Fatalf("climbed one call after the nudge was read: %v", a.severities())
		}
		a.fail()
		if diff := cmp.Diff([]string{"hint", "warning"}, a.severities()); diff != "" {
			t.Errorf("severities (-want +got):\n%s", diff)
		}
	})
}

func TestHardLimitAborts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := baseConfig()
		cfg.HardTokens = 5000
		h := start(t, true, cfg, nil)
		a := h.task("t-spend", nil)
		a.status(task.Running)
		a.failN(3) // 3 × 1260 tokens
		a.deliver(a.lastNudge().ID)
		a.failN(2) // 6300 tokens since progress

		_, cancels := h.act.Calls()
		ab := recordedOf[event.WatcherAbort](h.st, a.id)
		if len(cancels) != 1 || !strings.Contains(cancels[0], "passed the hard limit") || len(ab) != 1 || ab[0].Reason != "hard-limit" {
			t.Fatalf("cancels = %v, recorded %+v", cancels, ab)
		}
		if len(ab[0].Signals) != 2 || ab[0].Signals[1] != "persisted after 1 nudges" {
			t.Errorf("signals = %q", ab[0].Signals)
		}
		if s := h.w.Stats(); s.Aborts != 1 || s.Pauses != 0 || s.Nudges != 1 {
			t.Errorf("stats = %+v", s)
		}
	})
}

func TestTiersAgreeingPauseEarly(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		j := scripted(
			answer{v: Verdict{Status: "stuck", Confidence: 0.9, Recommendation: "nudge", NudgeMessage: "Create VERSION first."}},
			answer{v: Verdict{Status: "stuck", Confidence: 0.9, Diagnosis: "it ignores the nudge", Recommendation: "pause"}})
		cfg := baseConfig()
		cfg.Tier2 = true
		h := start(t, true, cfg, func(o *Options) { o.Judge = j })
		a := h.task("t-agree", nil)
		a.status(task.Running)
		a.failN(3)
		a.deliver(a.lastNudge().ID)
		a.failN(2)

		if diff := cmp.Diff([]string{"watcher.nudge", "watcher.pause"}, a.actions()); diff != "" {
			t.Fatalf("actions (-want +got):\n%s", diff)
		}
		p := recordedOf[event.WatcherPause](h.st, a.id)
		if len(p) != 1 || len(p[0].Signals) != 2 || !strings.HasPrefix(p[0].Signals[0], "tier1:") || p[0].Signals[1] != "tier2:stuck" {
			t.Errorf("pause = %+v, want tier 1 and tier 2 as its signals", p)
		}
		if s := h.w.Stats(); s.Pauses != 1 || s.Nudges != 1 || s.Tier2Calls != 2 {
			t.Errorf("stats = %+v", s)
		}
	})
}
