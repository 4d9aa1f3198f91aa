package syncer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// These tests run in a synctest bubble: the Syncer's sweep ticker and its
// clock (time.Now) are the bubble's, so rate limits, cooldowns and sweeps
// are exercised by sleeping in fake time.

// burstSummary is the i-th of a burst of learnings, each distinct enough
// not to be merged with another.
func burstSummary(i int) string {
	return fmt.Sprintf("JWT endpoint /v1/r%03d needs header x-k%03d and scope s%03d for auth", i, i, i)
}

// A burst of 100 learnings from one task: all are kept, each recipient
// hears at most max_per_minute of them a minute, the backlog beyond
// max_pending is dropped with a reason, and the rest are delivered later.
func TestBurstRespectsRateLimits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		docs := h.task("t-gggg7", "Document the auth API for token clients", []string{"auth", "docs", "jwt"}, task.Running, nil)
		cfg := baseConfig()
		cfg.Interval, cfg.MaxPerMinute, cfg.Cooldown, cfg.MaxPending = 5*time.Second, 5, 10*time.Second, 20
		s := h.start(cfg, nil)
		start := time.Now()
		const n = 100
		for i := range n { // as fast as the store takes them: the Syncer catches up
			_, _, err := h.st.RecordLearning(context.Background(), store.Learning{TaskID: tm.api.id, Summary: burstSummary(i),
				Tags: []string{"auth", "jwt"}, CreatedAt: time.Now().UTC()},
				func(sl store.Learning) []event.Event {
					return []event.Event{event.New(sl.CreatedAt, tm.api.id, event.Learning{Turn: 1, LearningID: sl.ID, Summary: sl.Summary, Tags: sl.Tags})}
				})
			if err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if !time.Now().Equal(start) {
			t.Fatalf("the burst took %s of fake time", time.Since(start))
		}

		ls, err := h.st.Learnings(context.Background(), store.LearningQuery{TaskID: tm.api.id})
		if err != nil || len(ls) != n {
			t.Fatalf("%d learnings stored (%v), want %d", len(ls), err, n)
		}
		rs := []*agent{tm.ui, tm.tests, docs}
		for _, a := range rs {
			ms := h.messages(store.SyncQuery{TaskID: a.id})
			st := states(ms)
			if len(ms) != n || st[store.SyncHeld] > cfg.MaxPending || st[store.SyncQueued] != len(a.syncs()) || st[store.SyncQueued] == 0 {
				t.Errorf("%s after the burst: %d messages, %v; %d injections", a.id, len(ms), st, len(a.syncs()))
			}
		}

		time.Sleep(8 * time.Minute) // sweeps drain the held messages; the TTL is 10 minutes
		synctest.Wait()

		ignored := eventsOf[event.SyncIgnored](h, tm.api.id)
		byMsg := map[int64]event.SyncIgnored{}
		for _, ig := range ignored {
			if ig.MessageID != 0 {
				byMsg[ig.MessageID] = ig
			}
		}
		total := 0
		for _, a := range rs {
			ms := h.messages(store.SyncQuery{TaskID: a.id})
			st := states(ms)
			total += st[store.SyncIgnored]
			if len(ms) != n || st[store.SyncHeld] != 0 || st[store.SyncQueued]+st[store.SyncIgnored] != n {
				t.Errorf("%s in the end: %d messages, %v; want every one queued or ignored", a.id, len(ms), st)
			}
			if st[store.SyncQueued] != 1+cfg.MaxPending {
				t.Errorf("%s: %d queued, want the first and the %d held", a.id, st[store.SyncQueued], cfg.MaxPending)
			}
			if got := len(a.syncs()); got != st[store.SyncQueued] {
				t.Errorf("%s: %d injections for %d queued messages", a.id, got, st[store.SyncQueued])
			}
			for _, m := range ms {
				if m.State != store.SyncIgnored {
					continue
				}
				ig, ok := byMsg[m.ID]
				if !strings.HasPrefix(m.Note, "backlog-full: ") || !ok || ig.Reason != "backlog-full" || ig.To != string(a.id) || ig.Detail == "" {
					t.Errorf("ignored message %+v has event %+v, want backlog-full with a SyncIgnored event", m, ig)
				}
			}
			checkRate(t, a, start, cfg.MaxPerMinute)
		}
		if len(byMsg) != total {
			t.Errorf("%d SyncIgnored events for dropped messages, %d messages ignored", len(byMsg), total)
		}
		if st := s.Stats(); st.Ignored["backlog-full"] != uint64(total) || st.Sent != uint64(3*(1+cfg.MaxPending)) {
			t.Errorf("stats = %+v", st)
		}
		if got := h.act.To(tm.greeting.id); len(got) != 0 {
			t.Errorf("the unrelated task got %d injections", len(got))
		}
	})
}

// checkRate checks that a task got at most max sync injections in its
// first minute, and in any minute.
func checkRate(t *testing.T, a *agent, start time.Time, max int) {
	t.Helper()
	got := a.syncs()
	first := 0
	for i, inj := range got {
		if inj.At.Before(start.Add(time.Minute)) {
			first++
		}
		window := 0
		for _, o := range got[i:] {
			if o.At.Sub(inj.At) < time.Minute {
				window++
			}
		}
		if window > max {
			t.Errorf("%s got %d sync injections in the minute from %s", a.id, window, inj.At.Sub(start))
		}
	}
	if first == 0 || first > max {
		t.Errorf("%s got %d sync injections in the first minute, want 1 to %d", a.id, first, max)
	}
}

// A receipt naming a sync injection marks its message delivered; a
// receipt of another kind of injection does nothing.
func TestDeliveryReceipt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		s := h.start(baseConfig(), nil)
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		inj := tm.ui.syncs()[0]

		time.Sleep(3 * time.Second)
		tm.ui.deliver([]int64{inj.ID, 999}, []string{string(inject.Nudge), string(inject.Message)})
		if got := eventsOf[event.SyncDelivered](h, ""); len(got) != 0 {
			t.Fatalf("a receipt of other kinds delivered %+v", got)
		}
		if st := states(h.messages(store.SyncQuery{})); st[store.SyncQueued] != 2 {
			t.Fatalf("states = %v, want both still queued", st)
		}

		tm.ui.deliver([]int64{inj.ID}, []string{string(inject.Sync)})
		tm.ui.deliver([]int64{inj.ID}, []string{string(inject.Sync)}) // a duplicate receipt
		ms := h.messages(store.SyncQuery{TaskID: tm.ui.id})
		if len(ms) != 1 || ms[0].State != store.SyncDelivered || ms[0].DeliveredAt == nil || ms[0].DeliveredAt.Sub(ms[0].CreatedAt) != 3*time.Second {
			t.Fatalf("the UI task's message = %+v, want delivered 3s after it was made", ms)
		}
		want := []event.SyncDelivered{{MessageID: ms[0].ID, LearningID: l.ID, From: string(tm.api.id), Urgency: Helpful,
			InjectionID: inj.ID, Turn: tm.ui.Turn + 1, LatencyMs: 3000}}
		if diff := cmp.Diff(want, eventsOf[event.SyncDelivered](h, tm.ui.id)); diff != "" {
			t.Errorf("SyncDelivered events (-want +got):\n%s", diff)
		}
		if m := h.messages(store.SyncQuery{TaskID: tm.tests.id}); m[0].State != store.SyncQueued {
			t.Errorf("the test task's message = %+v, want still queued", m[0])
		}
		if st := s.Stats(); st.Delivered != 1 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// A message the executor's door refuses stays held and goes at a later
// sweep.
func TestRefusedInjectionIsRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		cfg := baseConfig()
		cfg.Interval = 5 * time.Second
		h.start(cfg, nil)
		h.act.Fail(errors.New("the executor is busy"))
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		if st := states(h.messages(store.SyncQuery{LearningID: l.ID})); st[store.SyncHeld] != 2 || h.act.Count() != 0 {
			t.Fatalf("states = %v with %d injections, want both held", st, h.act.Count())
		}
		h.act.Fail(nil)
		time.Sleep(cfg.Interval)
		synctest.Wait()
		tm.checkRelayed(t, l, Helpful)
	})
}

// Messages held for a task that finishes are dropped with a reason.
func TestHeldMessagesOfAFinishedTaskAreDropped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		s := h.start(baseConfig(), nil)
		h.act.Fail(errors.New("the executor is busy"))
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		tm.ui.status(task.Completed)
		h.act.Fail(nil)
		time.Sleep(time.Minute)
		synctest.Wait()

		ms := h.messages(store.SyncQuery{TaskID: tm.ui.id})
		if len(ms) != 1 || ms[0].State != store.SyncIgnored || !strings.HasPrefix(ms[0].Note, "recipient-finished: ") {
			t.Fatalf("the finished task's message = %+v, want ignored: recipient-finished", ms)
		}
		ig := eventsOf[event.SyncIgnored](h, tm.api.id)
		if len(ig) != 1 || ig[0].Reason != "recipient-finished" || ig[0].To != string(tm.ui.id) || ig[0].MessageID != ms[0].ID || ig[0].LearningID != l.ID {
			t.Errorf("SyncIgnored = %+v", ig)
		}
		if got := len(tm.ui.syncs()); got != 0 {
			t.Errorf("the finished task got %d injections", got)
		}
		if got := len(tm.tests.syncs()); got != 1 {
			t.Errorf("the test task got %d injections, want its held one", got)
		}
		if st := s.Stats(); st.Ignored["recipient-finished"] != 1 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// thresholdTeam: a source and its sibling under one (not running) parent,
// and a task that only shares a tag with the source.
type thresholdTeam struct {
	src, sibling, tagged *agent
}

func newThresholdTeam(h *harness) thresholdTeam {
	h.task("t-pppp0", "Harden the auth service", []string{"auth"}, task.Waiting, nil)
	child := func(t *task.Task) { t.ParentID = "t-pppp0" }
	return thresholdTeam{
		src:     h.task("t-pppp1", "Add JWT validation to the auth middleware", []string{"auth", "jwt"}, task.Running, child),
		sibling: h.task("t-pppp2", "Add token refresh to the auth middleware", []string{"session"}, task.Running, child),
		tagged:  h.task("t-qqqq3", "Review auth error messages", []string{"auth"}, task.Running, nil),
	}
}

// discover has the source find where ValidateToken is: an fyi learning.
func (tt thresholdTeam) discover() {
	tt.src.tool("grep", map[string]string{"pattern": "ValidateToken"},
		"auth/jwt.go:42:func ValidateToken(raw string) (*Claims, error) {", false)
}

func TestRelayThresholds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		cfg     func(*Config)
		sibling []string // urgencies the sibling gets
		tagged  []string
		ignored string // the SyncIgnored reason recorded for the learning
	}{
		{name: "fyi to the same parent only", cfg: func(*Config) {}, sibling: []string{FYI}},
		{name: "fyi to related tasks", cfg: func(c *Config) { c.Relay[FYI] = Related }, sibling: []string{FYI}, tagged: []string{FYI}},
		{name: "fyi to nobody", cfg: func(c *Config) { c.Relay[FYI] = Never }, ignored: "not-relevant"},
		{name: "relay never", cfg: func(c *Config) {
			c.Relay = map[string]Policy{Blocking: Never, Helpful: Never, FYI: Never}
		}, ignored: "no-candidates"},
		{name: "min relevance high", cfg: func(c *Config) { c.MinRelevance = 1 }, ignored: "no-candidates"},
		{name: "same parent off", cfg: func(c *Config) { c.SameParent = false }, ignored: "not-relevant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, true)
				tt := newThresholdTeam(h)
				cfg := baseConfig()
				tc.cfg(&cfg)
				h.start(cfg, nil)
				tt.discover()
				ls, err := h.st.Learnings(context.Background(), store.LearningQuery{})
				if err != nil || len(ls) != 1 || ls[0].Kind != "discovery" || ls[0].Summary != "`ValidateToken` is in auth/jwt.go" {
					t.Fatalf("learnings = %+v, %v; want the discovery", ls, err)
				}
				urgencies := func(a *agent) []string {
					var out []string
					for _, i := range a.syncs() {
						out = append(out, string(i.Urgency))
					}
					return out
				}
				if diff := cmp.Diff(tc.sibling, urgencies(tt.sibling)); diff != "" {
					t.Errorf("the sibling's urgencies (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.tagged, urgencies(tt.tagged)); diff != "" {
					t.Errorf("the tagged task's urgencies (-want +got):\n%s", diff)
				}
				var reasons []string
				for _, ig := range eventsOf[event.SyncIgnored](h, tt.src.id) {
					reasons = append(reasons, ig.Reason)
				}
				want := []string(nil)
				if tc.ignored != "" {
					want = []string{tc.ignored}
				}
				if diff := cmp.Diff(want, reasons); diff != "" {
					t.Errorf("SyncIgnored reasons (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// A task that starts running after a learning was relayed hears it at the
// first sweep after the cooldown, once.
func TestLateJoinerHearsItOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		api := h.task("t-aaaa1", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil)
		ui := h.task("t-bbbb2", "Build login form with token refresh", []string{"auth", "ui", "jwt"}, task.Running, nil)
		late := h.task("t-cccc3", "Write integration tests for auth flow", []string{"auth", "tests", "jwt"}, task.Queued, nil)
		cfg := baseConfig()
		cfg.Interval, cfg.Cooldown = 4*time.Second, 10*time.Second
		h.start(cfg, nil)
		start := time.Now()
		l := api.learn(jwtSummary, "", "auth", "jwt")
		if len(ui.syncs()) != 1 || len(late.syncs()) != 0 {
			t.Fatalf("at once: ui %+v, late %+v", ui.syncs(), late.syncs())
		}

		time.Sleep(2 * time.Second)
		late.status(task.Running)
		time.Sleep(7 * time.Second) // sweeps at 4s and 8s: within the cooldown
		synctest.Wait()
		if got := late.syncs(); len(got) != 0 {
			t.Fatalf("the late joiner got %+v within the cooldown", got)
		}
		time.Sleep(4 * time.Second) // the sweep at 12s
		synctest.Wait()
		got := late.syncs()
		if len(got) != 1 || got[0].Attrs["learning"] != itoa(l.ID) || got[0].Attrs["from"] != string(api.id) {
			t.Fatalf("the late joiner got %+v, want the learning", got)
		}
		if at := got[0].At.Sub(start); at != 12*time.Second {
			t.Errorf("the late joiner got it at %s, want at the sweep of 12s", at)
		}

		time.Sleep(3 * time.Minute)
		synctest.Wait()
		if len(late.syncs()) != 1 || len(ui.syncs()) != 1 || len(api.syncs()) != 0 {
			t.Errorf("after more sweeps: late %d, ui %d, source %d injections; want 1, 1, 0",
				len(late.syncs()), len(ui.syncs()), len(api.syncs()))
		}
	})
}

// A new task starts with the most relevant learnings, recorded as sent so
// that the Syncer does not relay them to it again.
func TestBriefStartsNewTasksInformed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		api := h.task("t-aaaa1", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil)
		greet := h.task("t-dddd4", "Make the greeting friendlier", []string{"ui"}, task.Running, nil)
		cfg := baseConfig()
		cfg.Brief = 3
		s := h.start(cfg, nil)
		jwt := []string{jwtSummary,
			"JWT tokens signed with HS256 must use the key from AUTH_SECRET, not the default",
			"The token validator caches JWKS keys for ten minutes; restart it after rotating keys",
			"Expired JWT tokens return 401 with error code token_expired, not 403"}
		for _, sum := range jwt {
			api.learn(sum, "", "auth", "jwt")
		}
		greet.learn("The greeting copy lives in web/i18n/en.json; edit it there, not in the template", "", "ui")

		nt := h.task("t-hhhh8", "Add JWT expiry checks to the token validator", []string{"auth", "jwt"}, task.Queued, nil)
		tk, err := h.st.GetTask(context.Background(), nt.id)
		if err != nil {
			t.Fatal(err)
		}
		s.Brief(context.Background(), tk)

		got := nt.syncs()
		if len(got) != 1 {
			t.Fatalf("the new task got %d sync injections, want its briefing", len(got))
		}
		b := got[0]
		if b.Attrs["from"] != "knowledge" || string(b.Urgency) != FYI || b.Urgent || !b.Quiet ||
			!strings.HasPrefix(b.Text, "Other tasks in this repository found out") || strings.Contains(b.Text, "greeting") {
			t.Errorf("briefing = %+v", b)
		}
		listed := strings.Count(b.Text, "\n- ")
		ms := h.messages(store.SyncQuery{TaskID: nt.id})
		if listed == 0 || listed > cfg.Brief || len(ms) != listed {
			t.Fatalf("the briefing lists %d learnings with %d sync messages, want 1 to %d:\n%s", listed, len(ms), cfg.Brief, b.Text)
		}
		briefed := map[string]bool{}
		for _, m := range ms {
			briefed[itoa(m.LearningID)] = true
			if m.DecidedBy != "brief" || m.State != store.SyncQueued || m.InjectionID != b.ID || m.Urgency != FYI || !strings.Contains(b.Text, m.Message) {
				t.Errorf("briefing message = %+v", m)
			}
		}
		sent := eventsOf[event.SyncMessageSent](h, nt.id)
		if len(sent) != listed || sent[0].DecidedBy != "brief" {
			t.Errorf("SyncMessageSent events = %+v", sent)
		}

		// It starts; the sweeps offer it what it was not briefed on; the
		// source finds a briefed learning again.
		nt.status(task.Running)
		time.Sleep(time.Minute)
		api.learn(jwt[0], "", "auth", "jwt")
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, i := range nt.syncs()[1:] {
			if briefed[i.Attrs["learning"]] {
				t.Errorf("briefed learning %s relayed again: %+v", i.Attrs["learning"], i)
			}
		}
		seen := map[int64]bool{}
		for _, m := range h.messages(store.SyncQuery{TaskID: nt.id}) {
			if seen[m.LearningID] {
				t.Errorf("learning %d sent twice to the new task", m.LearningID)
			}
			seen[m.LearningID] = true
		}
		if st := s.Stats(); st.Briefed != 1 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// Brief does nothing when it is off or nothing is relevant.
func TestBriefWithNothingToSay(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		api := h.task("t-aaaa1", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil)
		cfg := baseConfig()
		s := h.start(cfg, nil)
		api.learn(jwtSummary, "", "auth", "jwt")
		other := task.Task{ID: "t-kkkk9", Description: "Translate the greeting into French", Tags: []string{"i18n"}, Status: task.Queued}
		h.task(other.ID, other.Description, other.Tags, task.Queued, nil)
		s.Brief(context.Background(), other)
		jwtTask := task.Task{ID: "t-mmmm9", Description: "Add JWT expiry checks", Tags: []string{"jwt"}, Status: task.Queued, NoSupervision: true}
		h.task(jwtTask.ID, jwtTask.Description, jwtTask.Tags, task.Queued, nil)
		s.Brief(context.Background(), jwtTask)
		if got := h.act.Count(); got != 0 {
			t.Errorf("%d injections, want none", got)
		}
	})
}

// A briefing the executor's door refuses leaves its messages ignored,
// with the reason.
func TestRefusedBriefIsRecorded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		api := h.task("t-aaaa1", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil)
		s := h.start(baseConfig(), nil)
		api.learn(jwtSummary, "", "auth", "jwt")
		nt := task.Task{ID: "t-hhhh8", Description: "Add JWT expiry checks to the token validator", Tags: []string{"auth", "jwt"}, Status: task.Queued}
		h.task(nt.ID, nt.Description, nt.Tags, task.Queued, nil)
		h.act.Fail(errors.New("the task's queue is full"))
		s.Brief(context.Background(), nt)
		synctest.Wait()
		ms := h.messages(store.SyncQuery{TaskID: nt.ID})
		if len(ms) != 1 || ms[0].State != store.SyncIgnored || ms[0].Note != "brief-failed: the task's queue is full" {
			t.Fatalf("briefing messages = %+v, want one ignored: brief-failed", ms)
		}
		var ig []event.SyncIgnored
		for _, e := range eventsOf[event.SyncIgnored](h, api.id) {
			if e.To != "" {
				ig = append(ig, e)
			}
		}
		if len(ig) != 1 || ig[0].Reason != "brief-failed" || ig[0].To != string(nt.ID) || ig[0].MessageID != ms[0].ID {
			t.Errorf("SyncIgnored about the new task = %+v", ig)
		}
		if st := s.Stats(); st.Briefed != 0 || st.Ignored["brief-failed"] != 1 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// panickyDecider panics on its first call, then relays to every candidate.
type panickyDecider struct{ calls atomic.Int32 }

func (d *panickyDecider) Decide(_ context.Context, ev Evaluation) (Decision, error) {
	if d.calls.Add(1) == 1 {
		panic("the syncer persona blew up")
	}
	out := Decision{Source: ev.Source.TaskID, Summary: ev.Learning.Summary}
	for _, c := range ev.Candidates {
		out.Recipients = append(out.Recipients, Recipient{TaskID: c.TaskID, Relevance: "high", Urgency: c.Allowed[0], Message: "Heads up: " + ev.Learning.Summary})
	}
	return out, nil
}

// A Decider that panics is recovered and counted; the next learning is
// relayed.
func TestDeciderPanicIsRecovered(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		d := &panickyDecider{}
		s := h.start(baseConfig(), func(o *Options) { o.Decider = d })
		tm.api.learn(jwtSummary, "", "auth", "jwt")
		if st := s.Stats(); st.Panics != 1 || !st.Running || st.Restarts != 0 {
			t.Fatalf("stats = %+v, want one panic, still running", st)
		}
		if got := h.act.Count(); got != 0 {
			t.Fatalf("%d injections after the panic", got)
		}
		l := tm.api.learn("Token refresh requires the refresh_token grant enabled on the JWT issuer", "", "auth", "jwt")
		for _, a := range []*agent{tm.ui, tm.tests} {
			got := a.syncs()
			if len(got) != 1 || got[0].Attrs["learning"] != itoa(l.ID) || !strings.HasPrefix(got[0].Text, "Heads up: ") {
				t.Errorf("%s got %+v, want the second learning", a.id, got)
			}
		}
		if st := s.Stats(); st.Panics != 1 || st.PersonaCalls != 2 {
			t.Errorf("stats = %+v", st)
		}
		if !slices.Equal(tm.greeting.froms(), nil) {
			t.Errorf("the unrelated task got %v", tm.greeting.froms())
		}
	})
}
