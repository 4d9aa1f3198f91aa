package syncer

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/knowledge"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The seed 004 scenario: three auth tasks; the API task finds that the JWT
// library rejects tokens without an iat claim; the UI and test tasks hear
// it, the unrelated task and the source do not.

const jwtSummary = "The JWT library rejects tokens without an iat claim; set iat when issuing tokens"

// team is the scenario's running tasks.
type team struct {
	api, ui, tests, greeting *agent
}

func newTeam(h *harness) team {
	return team{
		api:      h.task("t-aaaa1", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil),
		ui:       h.task("t-bbbb2", "Build login form with token refresh", []string{"auth", "ui", "jwt"}, task.Running, nil),
		tests:    h.task("t-cccc3", "Write integration tests for auth flow", []string{"auth", "tests", "jwt"}, task.Running, nil),
		greeting: h.task("t-dddd4", "Make the greeting friendlier", []string{"ui"}, task.Running, nil),
	}
}

// checkRelayed checks that the UI and test tasks got one sync injection
// each about learning l, at urgency, and nobody else got any.
func (tm team) checkRelayed(t *testing.T, l store.Learning, urgency string) {
	t.Helper()
	for _, a := range []*agent{tm.ui, tm.tests} {
		got := a.syncs()
		if len(got) != 1 {
			t.Fatalf("%s got %d sync injections, want 1: %+v", a.id, len(got), got)
		}
		inj := got[0]
		want := map[string]string{"from": string(tm.api.id), "urgency": urgency, "learning": itoa(l.ID)}
		if diff := cmp.Diff(want, inj.AttrMap()); diff != "" {
			t.Errorf("%s: attrs (-want +got):\n%s", a.id, diff)
		}
		if inj.Source != "syncer" || inj.Urgent != (urgency == Blocking) || inj.Quiet == (urgency == Blocking) {
			t.Errorf("%s: injection = %+v", a.id, inj)
		}
	}
	for _, a := range []*agent{tm.api, tm.greeting} {
		if got := a.h.act.To(a.id); len(got) != 0 {
			t.Errorf("%s got %+v, want nothing", a.id, got)
		}
	}
	ms := tm.api.h.messages(store.SyncQuery{LearningID: l.ID})
	if diff := cmp.Diff([]task.ID{tm.ui.id, tm.tests.id}, recipients(ms)); diff != "" {
		t.Errorf("sync messages' recipients (-want +got):\n%s", diff)
	}
	for _, m := range ms {
		if m.State != store.SyncQueued || m.From != tm.api.id || m.Urgency != urgency || m.InjectionID == 0 || m.QueuedAt == nil {
			t.Errorf("sync message = %+v", m)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestJWTRelayedByTheRules(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		s := h.start(baseConfig(), nil)
		l := tm.api.learn(jwtSummary, "Issue tokens with iat = now; the validator refuses them otherwise.", "auth", "jwt")

		tm.checkRelayed(t, l, Helpful)
		for _, m := range h.messages(store.SyncQuery{LearningID: l.ID}) {
			if m.DecidedBy != "rules" || !strings.Contains(m.Reason, "shared-tags") || !strings.Contains(m.Message, jwtSummary) ||
				!strings.Contains(m.Message, "Issue tokens with iat = now") {
				t.Errorf("sync message = %+v, want the rules' message with the detail", m)
			}
		}
		sent := eventsOf[event.SyncMessageSent](h, "")
		if len(sent) != 2 || sent[0].DecidedBy != "rules" || sent[0].LearningID != l.ID || sent[0].InjectionID == 0 {
			t.Errorf("SyncMessageSent events = %+v", sent)
		}
		if st := s.Stats(); st.Sent != 2 || st.Learnings["explicit"] != 1 || st.PersonaCalls != 0 || st.Panics != 0 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// personaScript answers the syncer persona: conversations for learnings
// whose prompt matches a pattern, else a reply naming the UI and test
// tasks (captured from the prompt) as blocking.
func personaScript(special ...llmtest.Conversation) *llmtest.Script {
	const blocking = `{"learning-source": "t-aaaa1", "learning-summary": "JWT needs iat", "recipients": [
  {"task-id": "${ui}", "relevance": "high", "urgency": "blocking", "message": "Set iat when issuing tokens: the JWT library rejects tokens without it."},
  {"task-id": "${tests}", "relevance": "high", "urgency": "blocking", "message": "Expect tokens without iat to be rejected; issue test tokens with iat."}]}`
	return &llmtest.Script{
		Conversations: special,
		Default: &llmtest.Conversation{Name: "syncer", Match: llmtest.Match{Capture: map[string]string{
			"ui": `task (t-[0-9a-z]+): <task-data kind="description">Build login`, "tests": `task (t-[0-9a-z]+): <task-data kind="description">Write integration`}},
			Steps: []llmtest.Step{{Text: "```json\n" + blocking + "\n```"}}},
	}
}

// personaDecider is the syncer persona on a scripted model server.
func personaDecider(t testing.TB, script *llmtest.Script) (ModelDecider, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(t, script)
	c, err := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Model: "claude-haiku-test", IdleTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return ModelDecider{Model: func() (llm.Client, string, error) { return c, "claude-haiku-test", nil },
		System: "You are the syncer.", Timeout: time.Minute, MaxMessage: 600}, srv
}

func TestJWTRelayedByThePersona(t *testing.T) {
	t.Parallel()
	d, srv := personaDecider(t, personaScript())
	h := newHarness(t, false)
	tm := newTeam(h)
	s := h.start(baseConfig(), func(o *Options) { o.Decider = d })
	l := tm.api.learn(jwtSummary, "", "auth", "jwt")
	h.waitQueued(2)

	tm.checkRelayed(t, l, Blocking)
	if got := tm.ui.syncs()[0].Text; got != "Set iat when issuing tokens: the JWT library rejects tokens without it." {
		t.Errorf("the UI task's message = %q, want the persona's", got)
	}
	for _, m := range h.messages(store.SyncQuery{LearningID: l.ID}) {
		if m.DecidedBy != "persona" || m.Relevance != "high" {
			t.Errorf("sync message = %+v, want the persona's decision", m)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].System != "You are the syncer." {
		t.Fatalf("requests = %+v, want one to the syncer persona", reqs)
	}
	prompt := reqs[0].Messages[0].Text()
	if !strings.Contains(prompt, jwtSummary) || !strings.Contains(prompt, string(tm.ui.id)) || !strings.Contains(prompt, string(tm.tests.id)) ||
		strings.Contains(prompt, string(tm.greeting.id)) || strings.Contains(prompt, "- task "+string(tm.api.id)) {
		t.Errorf("prompt offers the wrong candidates:\n%s", prompt)
	}
	if st := s.Stats(); st.PersonaCalls != 1 || st.PersonaFailures != 0 || st.Degraded {
		t.Errorf("stats = %+v", st)
	}
}

// A persona that replies unusably leaves the decision to the rules, and
// says the Syncer is degraded until it answers well again.
func TestPersonaFailureFallsBackToTheRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reply, reason string
	}{
		{name: "invalid JSON", reply: `{"recipients": [{"task-id": "t-bbbb2", `, reason: "not valid JSON"},
		{name: "prose", reply: "The UI task should hear this.", reason: "not a JSON object"},
		{name: "unknown task", reply: `{"recipients": [{"task-id": "t-zzzz9", "relevance": "high", "urgency": "blocking", "message": "x"}]}`,
			reason: "not one of the candidate tasks"},
		{name: "the source", reply: `{"recipients": [{"task-id": "t-aaaa1", "relevance": "high", "urgency": "blocking", "message": "x"}]}`,
			reason: "not one of the candidate tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, srv := personaDecider(t, personaScript(llmtest.Conversation{Name: "first", Match: llmtest.Match{User: `New learning #1 `},
				Steps: []llmtest.Step{{Text: tc.reply}}}))
			h := newHarness(t, false)
			tm := newTeam(h)
			s := h.start(baseConfig(), func(o *Options) { o.Decider = d })
			l := tm.api.learn(jwtSummary, "", "auth", "jwt")
			h.waitQueued(2)

			tm.checkRelayed(t, l, Helpful)
			for _, m := range h.messages(store.SyncQuery{LearningID: l.ID}) {
				if m.DecidedBy != "rules" {
					t.Errorf("sync message = %+v, want the rules' decision", m)
				}
			}
			st := s.Stats()
			if st.PersonaCalls != 1 || st.PersonaFailures != 1 || !st.Degraded || !strings.Contains(st.DegradedReason, tc.reason) {
				t.Errorf("stats = %+v, want one failure, degraded with %q", st, tc.reason)
			}

			// The next learning gets a usable reply: no longer degraded.
			tm.api.learn("Token refresh requires the refresh_token grant enabled on the JWT issuer", "", "auth", "jwt")
			h.waitQueued(4)
			if st := s.Stats(); st.PersonaCalls != 2 || st.PersonaFailures != 1 || st.Degraded || st.DegradedReason != "" {
				t.Errorf("stats after a good reply = %+v", st)
			}
			if got := tm.ui.syncs(); string(got[1].Urgency) != Blocking || !got[1].Urgent {
				t.Errorf("second relay = %+v, want the persona's blocking one", got[1])
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}

// A model that cannot be reached is a persona failure too.
func TestPersonaWithoutAModelFallsBackToTheRules(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		d := ModelDecider{Model: func() (llm.Client, string, error) { return nil, "", errors.New("no model for the router tier") }}
		s := h.start(baseConfig(), func(o *Options) { o.Decider = d })
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		tm.checkRelayed(t, l, Helpful)
		if st := s.Stats(); st.PersonaFailures != 1 || !st.Degraded || !strings.Contains(st.DegradedReason, "no model") {
			t.Errorf("stats = %+v", st)
		}
	})
}

// An error resolved by a file change is a learning, stored with its event
// and relayed, blocking, to a task working in the same directory.
func TestErrorResolutionRelayed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		api := h.task("t-aaaa1", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil)
		flow := h.task("t-eeee5", "Write integration tests for the login flow", []string{"tests"}, task.Running, nil)
		greet := h.task("t-dddd4", "Make the greeting friendlier", []string{"ui"}, task.Running, nil)
		s := h.start(baseConfig(), nil)
		flow.edit("auth/flow_test.go")
		greet.edit("web/greeting.go")

		const fail = "--- FAIL: TestValidate (0.00s)\n    token_test.go:21: token has no iat claim\nFAIL\nFAIL\texample.com/app/auth\t0.012s"
		api.tool("bash", map[string]string{"command": "go test ./auth"}, fail+"\n[exit code 1]", true)
		api.edit("auth/token.go")
		if got := h.act.Count(); got != 0 {
			t.Fatalf("%d injections before the error was resolved", got)
		}
		api.tool("bash", map[string]string{"command": "go test ./auth"}, "ok  \texample.com/app/auth\t0.010s", false)

		ls, err := h.st.Learnings(context.Background(), store.LearningQuery{TaskID: api.id})
		if err != nil || len(ls) != 1 {
			t.Fatalf("learnings = %+v, %v; want one", ls, err)
		}
		l := ls[0]
		if l.Kind != string(knowledge.ErrorResolution) || !strings.Contains(l.Summary, "go test ./auth") ||
			!strings.Contains(l.Summary, "token has no iat claim") || !strings.Contains(l.Summary, "auth/token.go") ||
			!cmp.Equal(l.Files, []string{"auth/token.go"}) {
			t.Errorf("learning = %+v", l)
		}
		ex := eventsOf[event.LearningExtracted](h, api.id)
		if len(ex) != 1 || ex[0].LearningID != l.ID || ex[0].Kind != string(knowledge.ErrorResolution) || ex[0].Sources != 1 {
			t.Errorf("LearningExtracted events = %+v", ex)
		}

		got := flow.syncs()
		if len(got) != 1 || got[0].Attrs["from"] != string(api.id) || string(got[0].Urgency) != Blocking || !got[0].Urgent ||
			!strings.Contains(got[0].Text, "token has no iat claim") {
			t.Fatalf("the related task got %+v, want one blocking message", got)
		}
		ms := h.messages(store.SyncQuery{TaskID: flow.id})
		if len(ms) != 1 || !strings.Contains(ms[0].Reason, "same-files") {
			t.Errorf("sync messages = %+v, want one related by its files", ms)
		}
		if n := len(h.act.To(greet.id)) + len(h.act.To(api.id)); n != 0 {
			t.Errorf("the source or the unrelated task got %d injections", n)
		}
		if st := s.Stats(); st.Learnings[string(knowledge.ErrorResolution)] != 1 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// A learning reaches a task once, and never goes back to any of its
// sources, however often it is found again.
func TestNeverTwiceNeverBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		s := h.start(baseConfig(), nil)
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		tm.checkRelayed(t, l, Helpful)

		time.Sleep(time.Second)
		again := tm.api.learn(jwtSummary, "", "auth", "jwt")
		if again.ID != l.ID || !again.Merged || len(again.Sources) != 1 {
			t.Errorf("the source recorded it again: %+v, want the same learning", again)
		}
		time.Sleep(time.Second)
		second := tm.ui.learn(jwtSummary+".", "", "jwt")
		if second.ID != l.ID || !second.Merged || len(second.Sources) != 2 {
			t.Fatalf("a second task recorded it: %+v, want one learning with two sources", second)
		}
		time.Sleep(2 * time.Minute) // sweeps for late joiners
		synctest.Wait()

		tm.checkRelayed(t, l, Helpful)
		if got := h.messages(store.SyncQuery{}); len(got) != 2 {
			t.Errorf("sync messages = %+v, want the first two only", got)
		}
		_, _, err := h.st.AddSyncMessage(context.Background(), store.SyncMessage{LearningID: l.ID, From: tm.api.id, TaskID: tm.ui.id,
			Urgency: FYI, Message: "again", DecidedBy: "rules", State: store.SyncHeld, CreatedAt: time.Now()}, nil)
		if !errors.Is(err, store.ErrExists) {
			t.Errorf("adding the same learning for the same task again = %v, want ErrExists", err)
		}
		if st := s.Stats(); st.Learnings["explicit"] != 3 || st.Sent != 2 || st.Ignored["no-candidates"] != 2 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// The Syncer relays nothing of a task marked --no-supervision, and nothing
// to it.
func TestNoSupervisionTaskIsLeftAlone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		quiet := h.task("t-ffff6", "Rotate the JWT signing keys", []string{"auth", "jwt"}, task.Running,
			func(t *task.Task) { t.NoSupervision = true })
		h.start(baseConfig(), nil)
		tm.api.learn(jwtSummary, "", "auth", "jwt")
		if got := h.act.To(quiet.id); len(got) != 0 {
			t.Errorf("a task without supervision got %+v", got)
		}
		if got := h.act.Count(); got != 2 {
			t.Errorf("%d injections, want the UI and test tasks'", got)
		}
	})
}
