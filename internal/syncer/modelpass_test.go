package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/knowledge"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// These tests drive the turn-end model pass (Config.LLMExtract with a
// ModelPass on the scripted model server): at each agent.turn.ended the
// Syncer sends the task's turn digest to the router tier and stores and
// relays what it answers. The model is real HTTP, so they run outside a
// synctest bubble and poll for what they expect.

// modelPassSystem matches knowledge.ModelPrompt, the system prompt of the
// model pass, and no other.
const modelPassSystem = `pick out what is worth remembering`

// iatReply is the model's answer to the JWT turn: one learning.
const iatReply = `{"learnings": [{"summary": "The JWT validator rejects tokens without an iat claim", ` +
	`"detail": "Set iat = now when issuing tokens in auth/token.go.", "tags": ["JWT", "tokens"], "files": ["./auth/token.go"]}]}`

// passScript answers the model pass: convs first (each already matching
// the pass's system prompt), then reply for any other turn.
func passScript(reply string, convs ...llmtest.Conversation) *llmtest.Script {
	for i := range convs {
		convs[i].Match.System = modelPassSystem
	}
	return &llmtest.Script{Conversations: append(convs, llmtest.Conversation{Name: "extract",
		Match: llmtest.Match{System: modelPassSystem}, Steps: []llmtest.Step{{Text: reply}}})}
}

// modelPass is the turn-end model pass on a scripted model server, built
// as personaDecider builds the syncer persona. Its costs go to *s once it
// is set.
func modelPass(t testing.TB, script *llmtest.Script, s **Syncer) (ModelPass, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(t, script)
	c, err := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Model: "claude-haiku-test", IdleTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p := ModelPass{Model: func() (llm.Client, string, error) { return c, "claude-haiku-test", nil }, Timeout: time.Minute}
	if s != nil {
		p.Spent = func(u llm.Usage, usd float64) { (*s).Spent(u, usd) }
	}
	return p, srv
}

// passConfig is baseConfig with the model pass on.
func passConfig() Config {
	cfg := baseConfig()
	cfg.LLMExtract = true
	return cfg
}

// say runs one turn as the native agent reports it: turn.started, the
// assistant's text, one tool call and its result when name is set, and
// turn.ended.
func (a *agent) say(text, name string, args map[string]string, out string) {
	a.h.t.Helper()
	a.Turn++
	a.h.pub(a.id, event.TurnStarted{Turn: a.Turn, Engine: "native", Model: "claude-test"})
	a.h.pub(a.id, event.Text{Turn: a.Turn, Text: text})
	if name != "" {
		a.Calls++
		raw, err := json.Marshal(args)
		if err != nil {
			a.h.t.Fatal(err)
		}
		callID := fmt.Sprintf("toolu_%s_%d", a.id, a.Calls)
		a.h.pub(a.id, event.ToolCall{Turn: a.Turn, CallID: callID, Name: name, Args: raw})
		a.h.pub(a.id, event.ToolResult{Turn: a.Turn, CallID: callID, Name: name, Size: len(out), Preview: out,
			Hash: event.ContentHash(out), DurationMs: 40})
	}
	a.h.pub(a.id, event.TurnEnded{Turn: a.Turn, StopReason: "end_turn", Attempts: 1, DurationMs: 900})
}

// iatTurn is the JWT turn of the source: it says what it found and edits
// the token code.
func (a *agent) iatTurn() {
	a.h.t.Helper()
	a.say("The token needs an iat claim, adding it", "edit_file",
		map[string]string{"path": "auth/token.go", "old_text": "claims{}", "new_text": "claims{IssuedAt: now}"}, "Edited auth/token.go.")
}

// modelLearnings returns the learnings of kind llm the store holds.
func modelLearnings(h *harness) []store.Learning {
	h.t.Helper()
	ls, err := h.st.Learnings(context.Background(), store.LearningQuery{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []store.Learning
	for _, l := range ls {
		if l.Kind == string(knowledge.Model) {
			out = append(out, l)
		}
	}
	return out
}

// pair is the source of a turn and a task related to it by its tags, with
// an unrelated one.
type pair struct {
	src, rel, other *agent
}

func newPair(h *harness) pair {
	return pair{
		src:   h.task("t-aaaa1", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil),
		rel:   h.task("t-bbbb2", "Build login form with token refresh", []string{"auth", "ui", "jwt"}, task.Running, nil),
		other: h.task("t-dddd4", "Make the greeting friendlier", []string{"ui"}, task.Running, nil),
	}
}

// A turn's digest goes to the model with the model pass's prompt; the
// learning it answers is stored (kind llm, with its LearningExtracted
// event) and relayed to the related task, helpful, decided by the rules.
func TestModelPassExtractsAndRelays(t *testing.T) {
	t.Parallel()
	var s *Syncer
	pass, srv := modelPass(t, passScript(iatReply), &s)
	h := newHarness(t, false)
	p := newPair(h)
	s = h.start(passConfig(), func(o *Options) { o.Extractor = pass })
	p.src.iatTurn()
	h.waitQueued(1)
	testkit.WaitFor(t, "the message counted", func() bool { return s.Stats().Sent == 1 })

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1: %+v", len(reqs), reqs)
	}
	if reqs[0].System != knowledge.ModelPrompt || reqs[0].Model != "claude-haiku-test" || reqs[0].Conversation != "extract" {
		t.Errorf("request = system %.60q…, model %q, conversation %q; want the model pass's", reqs[0].System, reqs[0].Model, reqs[0].Conversation)
	}
	if n := len(reqs[0].Messages); n != 1 {
		t.Fatalf("request has %d messages, want the digest alone", n)
	}
	user := reqs[0].Messages[0].Text()
	for _, want := range []string{
		"Task t-aaaa1's last turn:\n<task-data kind=\"turn\">\nturn 1:\n",
		"assistant: The token needs an iat claim, adding it\n",
		"call edit_file: auth/token.go\n",
		"result edit_file: ok — Edited auth/token.go.\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("the user message lacks %q:\n%s", want, user)
		}
	}

	ls := modelLearnings(h)
	if len(ls) != 1 {
		t.Fatalf("learnings of kind llm = %+v, want one", ls)
	}
	l := ls[0]
	want := store.Learning{TaskID: p.src.id, Kind: "llm", Summary: "The JWT validator rejects tokens without an iat claim",
		Detail: "Set iat = now when issuing tokens in auth/token.go.",
		Tags:   []string{"jwt", "tokens", "auth", "api"}, Files: []string{"auth/token.go"}}
	got := store.Learning{TaskID: l.TaskID, Kind: l.Kind, Summary: l.Summary, Detail: l.Detail, Tags: l.Tags, Files: l.Files}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("learning (-want +got):\n%s", diff)
	}
	if len(l.Sources) != 1 || l.Sources[0].TaskID != p.src.id {
		t.Errorf("sources = %+v, want the source task", l.Sources)
	}
	ex := eventsOf[event.LearningExtracted](h, p.src.id)
	if len(ex) != 1 || ex[0].LearningID != l.ID || ex[0].Kind != "llm" || ex[0].Summary != l.Summary || ex[0].Sources != 1 || ex[0].Merged {
		t.Errorf("LearningExtracted events = %+v, want one of kind llm for learning %d", ex, l.ID)
	}

	got1 := p.rel.syncs()
	if len(got1) != 1 {
		t.Fatalf("the related task got %d sync injections, want 1: %+v", len(got1), got1)
	}
	wantAttrs := map[string]string{"from": string(p.src.id), "urgency": Helpful, "learning": itoa(l.ID)}
	if diff := cmp.Diff(wantAttrs, got1[0].AttrMap()); diff != "" {
		t.Errorf("attrs (-want +got):\n%s", diff)
	}
	if !strings.Contains(got1[0].Text, l.Summary) || !strings.Contains(got1[0].Text, "Files: auth/token.go") {
		t.Errorf("message = %q, want the rules' message with the summary and files", got1[0].Text)
	}
	if n := len(h.act.To(p.src.id)) + len(h.act.To(p.other.id)); n != 0 {
		t.Errorf("the source or the unrelated task got %d injections", n)
	}
	ms := h.messages(store.SyncQuery{LearningID: l.ID})
	if len(ms) != 1 || ms[0].DecidedBy != "rules" || !strings.Contains(ms[0].Reason, "shared-tags") {
		t.Errorf("sync messages = %+v, want one by the rules, related by tags", ms)
	}
	sent := eventsOf[event.SyncMessageSent](h, p.rel.id)
	if len(sent) != 1 || sent[0].LearningID != l.ID || sent[0].LatencyMs < 0 {
		t.Errorf("SyncMessageSent events = %+v", sent)
	}

	st := s.Stats()
	if st.ExtractCalls != 1 || st.ExtractFailures != 0 || st.Learnings["llm"] != 1 || st.Sent != 1 || st.Panics != 0 {
		t.Errorf("stats = %+v, want one model pass, one llm learning, one message", st)
	}
	if st.ModelTokens <= 0 {
		t.Errorf("stats.ModelTokens = %d, want the pass's usage counted", st.ModelTokens)
	}
}

// passResult is what one model pass returned.
type passResult struct {
	cs  []knowledge.Candidate
	err error
}

// recordingPass passes the model pass's results to done as they return.
type recordingPass struct {
	inner ModelExtractor
	done  chan passResult
}

func (r recordingPass) Extract(ctx context.Context, id task.ID, digest string) ([]knowledge.Candidate, error) {
	cs, err := r.inner.Extract(ctx, id, digest)
	r.done <- passResult{cs, err}
	return cs, err
}

// A model pass that answers nothing worth keeping stores nothing and is
// no failure.
func TestModelPassNothingWorthKeeping(t *testing.T) {
	t.Parallel()
	pass, srv := modelPass(t, passScript(`{"learnings": []}`), nil)
	rec := recordingPass{inner: pass, done: make(chan passResult, 4)}
	h := newHarness(t, false)
	p := newPair(h)
	s := h.start(passConfig(), func(o *Options) { o.Extractor = rec })
	p.src.iatTurn()
	select {
	case r := <-rec.done:
		if r.err != nil || len(r.cs) != 0 {
			t.Fatalf("the pass returned %+v, %v; want no learnings and no error", r.cs, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the pass did not return in 30s")
	}
	// The pass's (empty) result reaches the loop before this learning's
	// event, all but always; either way nothing may come of it.
	l := p.src.learn("Login form tests live in web/login_test.go", "", "auth", "jwt")
	h.waitQueued(1)
	if got := p.rel.syncs(); len(got) != 1 || got[0].Attrs["learning"] != itoa(l.ID) {
		t.Errorf("the related task got %+v, want the explicit learning only", got)
	}
	if ls := modelLearnings(h); len(ls) != 0 {
		t.Errorf("learnings of kind llm = %+v, want none", ls)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
	if st := s.Stats(); st.ExtractCalls != 1 || st.ExtractFailures != 0 || st.Learnings["llm"] != 0 {
		t.Errorf("stats = %+v, want one pass, no failure, no llm learning", st)
	}
}

// A model pass that fails or answers unusably stores nothing, is counted,
// and the Syncer goes on: a later explicit learning is relayed.
func TestModelPassFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		step llmtest.Step
	}{
		{name: "prose", step: llmtest.Step{Text: "The agent learned that tokens need an iat claim."}},
		{name: "learnings not a list", step: llmtest.Step{Text: `{"learnings": "x"}`}},
		{name: "no learnings key", step: llmtest.Step{Text: `{"summary": "tokens need iat"}`}},
		{name: "an empty summary", step: llmtest.Step{Text: `{"learnings": [{"summary": "  ", "tags": ["jwt"]}]}`}},
		{name: "six learnings", step: llmtest.Step{Text: `{"learnings": [{"summary": "a1"}, {"summary": "a2"}, {"summary": "a3"}, ` +
			`{"summary": "a4"}, {"summary": "a5"}, {"summary": "a6"}]}`}},
		{name: "server error", step: llmtest.Step{Text: iatReply, Fault: &llmtest.Fault{Kind: llmtest.FaultServerError, Always: true}}},
		{name: "overloaded", step: llmtest.Step{Text: iatReply, Fault: &llmtest.Fault{Kind: llmtest.FaultOverloaded, Always: true}}},
		{name: "reset mid-reply", step: llmtest.Step{Text: iatReply, Fault: &llmtest.Fault{Kind: llmtest.FaultReset, Always: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pass, srv := modelPass(t, &llmtest.Script{Conversations: []llmtest.Conversation{{Name: "extract",
				Match: llmtest.Match{System: modelPassSystem}, Steps: []llmtest.Step{tc.step}}}}, nil)
			h := newHarness(t, false)
			p := newPair(h)
			s := h.start(passConfig(), func(o *Options) { o.Extractor = pass })
			p.src.iatTurn()
			testkit.WaitFor(t, "the pass to fail", func() bool { return s.Stats().ExtractFailures == 1 })

			if ls := modelLearnings(h); len(ls) != 0 {
				t.Errorf("learnings of kind llm = %+v, want none", ls)
			}
			if ex := eventsOf[event.LearningExtracted](h, ""); len(ex) != 0 {
				t.Errorf("LearningExtracted events = %+v, want none", ex)
			}
			if n := h.act.Count(); n != 0 {
				t.Errorf("%d injections after a failed pass, want none", n)
			}
			if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Conversation != "extract" {
				t.Errorf("requests = %+v, want one (no retry in the pass)", reqs)
			}

			l := p.src.learn(jwtSummary, "", "auth", "jwt")
			h.waitQueued(1)
			if got := p.rel.syncs(); len(got) != 1 || got[0].Attrs["learning"] != itoa(l.ID) {
				t.Errorf("the related task got %+v, want the explicit learning", got)
			}
			st := s.Stats()
			if st.ExtractCalls != 1 || st.ExtractFailures != 1 || st.Learnings["llm"] != 0 || st.Learnings["explicit"] != 1 ||
				st.Panics != 0 || st.Restarts != 0 || !st.Running {
				t.Errorf("stats = %+v, want one failed pass and the Syncer running", st)
			}
		})
	}
}

// Without llm_extract, or without a model pass, a turn's end asks no
// model.
func TestModelPassOffByDefault(t *testing.T) {
	t.Parallel()
	if baseConfig().LLMExtract {
		t.Fatal("the default configuration has the model pass on")
	}
	for _, tc := range []struct {
		name      string
		llm, pass bool
	}{
		{name: "llm_extract off", llm: false, pass: true},
		{name: "no model pass", llm: true, pass: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pass, srv := modelPass(t, passScript(iatReply), nil)
			h := newHarness(t, false)
			p := newPair(h)
			cfg := baseConfig()
			cfg.LLMExtract = tc.llm
			s := h.start(cfg, func(o *Options) {
				if tc.pass {
					o.Extractor = pass
				}
			})
			p.src.iatTurn()
			// The loop handles events in order: once this learning is
			// relayed, the turn's end has been handled.
			l := p.src.learn(jwtSummary, "", "auth", "jwt")
			h.waitQueued(1)

			if got := p.rel.syncs(); len(got) != 1 || got[0].Attrs["learning"] != itoa(l.ID) {
				t.Errorf("the related task got %+v, want the explicit learning only", got)
			}
			if reqs := srv.Requests(); len(reqs) != 0 {
				t.Errorf("%d model requests, want none", len(reqs))
			}
			if ls := modelLearnings(h); len(ls) != 0 {
				t.Errorf("learnings of kind llm = %+v, want none", ls)
			}
			if st := s.Stats(); st.ExtractCalls != 0 || st.ExtractFailures != 0 {
				t.Errorf("stats = %+v, want no model pass", st)
			}
		})
	}
}

// One pass at a time per task: a turn that ends while the task's pass is
// in flight is not passed to the model (not then, not later: the next
// pass sees the next turn only); another task's pass runs meanwhile; and
// once the first pass is back, the task's next turn gets its pass.
func TestModelPassOneAtATimePerTask(t *testing.T) {
	t.Parallel()
	const latency = 2 * time.Second
	pass, srv := modelPass(t, passScript(`{"learnings": []}`,
		llmtest.Conversation{Name: "slow", Match: llmtest.Match{User: `Task t-aaaa1's last turn:\n<task-data kind="turn">\nturn 1:\n`},
			Steps: []llmtest.Step{{Text: iatReply, LatencyMs: int(latency / time.Millisecond)}}},
		llmtest.Conversation{Name: "third", Match: llmtest.Match{User: `Task t-aaaa1's last turn:\n<task-data kind="turn">\nturn 3:\n`},
			Steps: []llmtest.Step{{Text: `{"learnings": [{"summary": "The token validator also requires an exp claim within 24 hours", "tags": ["jwt"]}]}`}}},
	), nil)
	h := newHarness(t, false)
	p := newPair(h)
	s := h.start(passConfig(), func(o *Options) { o.Extractor = pass })
	p.src.iatTurn()
	testkit.WaitFor(t, "the first pass's request", func() bool { return len(srv.Requests()) == 1 })

	// Two more turn ends while the first pass waits for its reply: the
	// source's second turn, and a duplicate turn.ended of it.
	p.src.say("Also checking the exp claim handling", "", nil, "")
	h.pub(p.src.id, event.TurnEnded{Turn: p.src.Turn, StopReason: "end_turn", Attempts: 1, DurationMs: 10})
	// The related task's turn gets its own pass meanwhile.
	p.rel.say("Wiring the refresh button to the token endpoint", "", nil, "")
	// A barrier: once this learning is relayed, the loop has handled
	// every event before it.
	b := p.rel.learn("Login form fixtures live in web/testdata/login", "", "auth", "jwt")
	h.waitQueued(1)
	testkit.WaitFor(t, "the related task's pass", func() bool { return len(srv.Requests()) == 2 })
	// Handling the first pass's reply stores its learning: none yet means
	// the reply was not handled before the second turn's end was, so that
	// one found the pass in flight.
	if ls := modelLearnings(h); len(ls) != 0 {
		t.Fatalf("the first pass was back before the barrier (latency %v): %+v", latency, ls)
	}
	if st := s.Stats(); st.ExtractCalls != 2 || st.Panics != 0 {
		t.Errorf("stats while the first pass is in flight = %+v, want 2 passes (the source's first, the related task's)", st)
	}
	if got := p.src.syncs(); len(got) != 1 || got[0].Attrs["learning"] != itoa(b.ID) {
		t.Errorf("the source got %+v, want the barrier learning", got)
	}

	// The first pass comes back: its learning is stored and relayed.
	testkit.WaitFor(t, "the first pass's learning", func() bool { return len(p.rel.syncs()) == 1 })
	ls := modelLearnings(h)
	if len(ls) != 1 || ls[0].Summary != "The JWT validator rejects tokens without an iat claim" {
		t.Fatalf("learnings of kind llm = %+v, want the first pass's", ls)
	}

	// The next turn of the source gets a pass again; the second turn never
	// did.
	p.src.say("Token expiry is checked in the validator; adding a 24 hour limit", "", nil, "")
	testkit.WaitFor(t, "the third turn's learning", func() bool { return s.Stats().Learnings["llm"] == 2 })
	reqs := srv.Requests()
	var convs []string
	for _, r := range reqs {
		convs = append(convs, r.Conversation)
	}
	if diff := cmp.Diff([]string{"slow", "extract", "third"}, convs); diff != "" {
		t.Errorf("the requests' conversations (-want +got):\n%s", diff)
	}
	for _, r := range reqs {
		if strings.Contains(r.Messages[0].Text(), "exp claim handling") {
			t.Errorf("the second turn, which ended while a pass was in flight, reached the model:\n%s", r.Messages[0].Text())
		}
	}
	if st := s.Stats(); st.ExtractCalls != 3 || st.ExtractFailures != 0 || st.Learnings["llm"] != 2 || st.Panics != 0 {
		t.Errorf("stats = %+v, want 3 passes and 2 llm learnings", st)
	}
}

// The pass often repeats what the agent recorded in the same turn: the
// store merges it into the recorded learning, and nobody hears it twice.
func TestModelPassRepeatingARecordedLearning(t *testing.T) {
	t.Parallel()
	pass, srv := modelPass(t, passScript(`{"learnings": [{"summary": "`+jwtSummary+`", "tags": ["jwt"]}]}`), nil)
	h := newHarness(t, false)
	p := newPair(h)
	s := h.start(passConfig(), func(o *Options) { o.Extractor = pass })
	h.pub(p.src.id, event.TurnStarted{Turn: p.src.Turn + 1, Engine: "native", Model: "claude-test"})
	l := p.src.learn(jwtSummary, "", "auth", "jwt")
	h.pub(p.src.id, event.TurnEnded{Turn: p.src.Turn, StopReason: "end_turn", Attempts: 1, DurationMs: 900})
	// The merged learning is evaluated again and offered to nobody: the
	// Syncer is done with the pass once it says so.
	testkit.WaitFor(t, "the pass's learning evaluated", func() bool { return len(eventsOf[event.SyncIgnored](h, p.src.id)) == 1 })

	if reqs := srv.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Messages[0].Text(), "recorded learning: "+jwtSummary) {
		t.Errorf("requests = %+v, want one whose digest holds the recorded learning", reqs)
	}
	ex := eventsOf[event.LearningExtracted](h, p.src.id)[0]
	if ex.LearningID != l.ID || !ex.Merged || ex.Kind != "llm" || ex.Sources != 1 {
		t.Errorf("LearningExtracted = %+v, want learning %d merged", ex, l.ID)
	}
	if ls := modelLearnings(h); len(ls) != 0 {
		t.Errorf("learnings of kind llm = %+v, want the recorded one alone", ls)
	}
	if got := p.rel.syncs(); len(got) != 1 || got[0].Attrs["learning"] != itoa(l.ID) {
		t.Errorf("the related task got %+v, want the recorded learning once", got)
	}
	if ms := h.messages(store.SyncQuery{}); len(ms) != 1 {
		t.Errorf("sync messages = %+v, want one", ms)
	}
	if ig := eventsOf[event.SyncIgnored](h, p.src.id); ig[0].LearningID != l.ID || ig[0].Reason != "no-candidates" {
		t.Errorf("SyncIgnored = %+v, want learning %d offered to nobody", ig, l.ID)
	}
	if st := s.Stats(); st.ExtractCalls != 1 || st.Learnings["llm"] != 1 || st.Merged != 1 || st.Sent != 1 || st.Evaluated != 2 {
		t.Errorf("stats = %+v, want one pass merged into the recorded learning", st)
	}
}

// A task's last turn ends just before the task leaves running (to the
// merge queue, or finished): its pass comes back after that, and its
// learning is kept, tagged with the source's topics, and relayed as if the
// source were still running. The model's learning here shares no word or
// tag with the related task: the source's topic tags are what make it
// relevant enough.
func TestModelPassOfAFinishedTask(t *testing.T) {
	t.Parallel()
	const reply = `{"learnings": [{"summary": "The validator rejects credentials lacking an issued-at field", "tags": ["validation"]}]}`
	for _, to := range []task.Status{task.Merging, task.Completed, task.Failed, task.Cancelled} {
		t.Run(string(to), func(t *testing.T) {
			t.Parallel()
			if to.Terminal() {
			}
			pass, srv := modelPass(t, passScript(`{"learnings": []}`, llmtest.Conversation{Name: "last", Match: llmtest.Match{User: `Task t-aaaa1's`},
				Steps: []llmtest.Step{{Text: reply, LatencyMs: 300}}}), nil)
			h := newHarness(t, false)
			p := newPair(h)
			s := h.start(passConfig(), func(o *Options) { o.Extractor = pass })
			p.src.iatTurn()
			testkit.WaitFor(t, "the pass's request", func() bool { return len(srv.Requests()) == 1 })
			p.src.status(to)
			testkit.WaitFor(t, "the pass's learning relayed or ignored", func() bool {
				return len(p.rel.syncs()) > 0 || len(eventsOf[event.SyncIgnored](h, "")) > 0
			})

			ls := modelLearnings(h)
			if len(ls) != 1 {
				t.Fatalf("learnings of kind llm = %+v, want one", ls)
			}
			l := ls[0]
			if diff := cmp.Diff([]string{"validation", "auth", "api", "jwt"}, l.Tags); diff != "" {
				t.Errorf("tags (-want +got), as a running source's learning has them:\n%s", diff)
			}
			if got := p.rel.syncs(); len(got) != 1 || got[0].Attrs["learning"] != itoa(l.ID) || got[0].Attrs["from"] != string(p.src.id) {
				t.Errorf("the related task got %+v, want the learning; ignored: %+v", got, eventsOf[event.SyncIgnored](h, ""))
			}
			if st := s.Stats(); st.ExtractCalls != 1 || st.ExtractFailures != 0 || st.Panics != 0 {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

// A learning of the model pass says which turn it came from, as the other
// extracted learnings do.
func TestModelPassLearningCarriesItsTurn(t *testing.T) {
	t.Parallel()
	pass, _ := modelPass(t, passScript(iatReply), nil)
	h := newHarness(t, false)
	p := newPair(h)
	h.start(passConfig(), func(o *Options) { o.Extractor = pass })
	p.src.Turn = 3 // the source's fourth turn
	p.src.iatTurn()
	h.waitQueued(1)
	ex := eventsOf[event.LearningExtracted](h, p.src.id)
	if len(ex) != 1 || ex[0].Turn != 4 {
		t.Errorf("LearningExtracted events = %+v, want one of turn 4", ex)
	}
}
