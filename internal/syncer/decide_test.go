package syncer

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/knowledge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// testCandidates are the tasks a decision may name.
var testCandidates = []Candidate{
	{TaskID: "t-bbbb2", Description: "Build login form with token refresh", Relations: []string{"shared-tags"}, Score: 0.5, Allowed: []string{Blocking, Helpful}},
	{TaskID: "t-cccc3", Description: "Write integration tests for auth flow", Relations: []string{"shared-tags"}, Score: 0.4, Allowed: []string{Blocking, Helpful}},
}

const validDecision = `{"learning-source": "t-aaaa1", "learning-summary": "JWT needs iat", "recipients": [
  {"task-id": "t-bbbb2", "relevance": "high", "urgency": "blocking", "message": "Set iat when issuing tokens."},
  {"task-id": "t-cccc3", "relevance": "medium", "urgency": "helpful", "message": "Issue test tokens with iat."}]}`

var validParsed = Decision{Source: "t-aaaa1", Summary: "JWT needs iat", Recipients: []Recipient{
	{TaskID: "t-bbbb2", Relevance: "high", Urgency: Blocking, Message: "Set iat when issuing tokens."},
	{TaskID: "t-cccc3", Relevance: "medium", Urgency: Helpful, Message: "Issue test tokens with iat."}}}

func TestParseDecision(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 100)
	one := func(fields string) string { return `{"recipients": [{` + fields + `}]}` }
	for _, tc := range []struct {
		name, reply string
		want        Decision
		err         string // a part of the error; empty when the reply is valid
	}{
		{name: "valid", reply: validDecision, want: validParsed},
		{name: "fenced", reply: "```json\n" + validDecision + "\n```", want: validParsed},
		{name: "fenced without a language", reply: "```\n" + validDecision + "\n```", want: validParsed},
		{name: "underscore keys", reply: `{"recipients": [{"task_id": "t-bbbb2", "relevance": "low", "urgency": "fyi", "message": "m"}], "skip_reason": "x"}`,
			want: Decision{Recipients: []Recipient{{TaskID: "t-bbbb2", Relevance: "low", Urgency: FYI, Message: "m"}}, SkipReason: "x"}},
		{name: "words in any case", reply: one(`"task-id": " t-bbbb2 ", "relevance": " HIGH", "urgency": "Blocking ", "message": "  m  "`),
			want: Decision{Recipients: []Recipient{{TaskID: "t-bbbb2", Relevance: "high", Urgency: Blocking, Message: "m"}}}},
		{name: "long message clipped", reply: one(`"task-id": "t-bbbb2", "relevance": "high", "urgency": "fyi", "message": "` + long + `"`),
			want: Decision{Recipients: []Recipient{{TaskID: "t-bbbb2", Relevance: "high", Urgency: FYI, Message: strings.TrimSpace(long)[:100] + "…"}}}},
		{name: "a task named twice keeps its first", reply: `{"recipients": [
			{"task-id": "t-bbbb2", "relevance": "high", "urgency": "blocking", "message": "first"},
			{"task-id": "t-bbbb2", "relevance": "low", "urgency": "fyi", "message": "second"}]}`,
			want: Decision{Recipients: []Recipient{{TaskID: "t-bbbb2", Relevance: "high", Urgency: Blocking, Message: "first"}}}},
		{name: "nobody, with a reason on one line", reply: `{"recipients": [], "skip-reason": "  nobody\n\tworks on auth  "}`,
			want: Decision{SkipReason: "nobody works on auth"}},
		{name: "extra fields ignored", reply: `{"recipients": [], "confidence": 0.9}`, want: Decision{}},

		{name: "empty", reply: "", err: "not a JSON object"},
		{name: "prose", reply: "Tell the UI task.", err: "not a JSON object"},
		{name: "array", reply: "[" + validDecision + "]", err: "not a JSON object"},
		{name: "unclosed fence", reply: "```json\n" + validDecision, err: "never closes"},
		{name: "broken JSON", reply: `{"recipients": [{"task-id": "t-bbbb2", }`, err: "not valid JSON"},
		{name: "trailing prose", reply: validDecision + " Done!", err: "more after its JSON object"},
		{name: "recipients not a list", reply: `{"recipients": "t-bbbb2"}`, err: "not valid JSON"},
		{name: "no recipients", reply: `{"skip-reason": "x"}`, err: "no recipients list"},
		{name: "null recipients", reply: `{"recipients": null}`, err: "no recipients list"},
		{name: "unknown task", reply: one(`"task-id": "t-zzzz9", "relevance": "high", "urgency": "fyi", "message": "m"`), err: `"t-zzzz9" is not one of the candidate tasks`},
		{name: "the source", reply: one(`"task-id": "t-aaaa1", "relevance": "high", "urgency": "fyi", "message": "m"`), err: "not one of the candidate tasks"},
		{name: "no task", reply: one(`"relevance": "high", "urgency": "fyi", "message": "m"`), err: "not one of the candidate tasks"},
		{name: "bad relevance", reply: one(`"task-id": "t-bbbb2", "relevance": "vital", "urgency": "fyi", "message": "m"`), err: `relevance "vital"`},
		{name: "bad urgency", reply: one(`"task-id": "t-bbbb2", "relevance": "high", "urgency": "asap", "message": "m"`), err: `urgency "asap"`},
		{name: "empty message", reply: one(`"task-id": "t-bbbb2", "relevance": "high", "urgency": "fyi"`), err: "the message is empty"},
		{name: "blank message", reply: one(`"task-id": "t-bbbb2", "relevance": "high", "urgency": "fyi", "message": " \n\t"`), err: "the message is empty"},
		{name: "every recipient bad", reply: `{"recipients": [
			{"task-id": "t-zzzz9", "relevance": "high", "urgency": "blocking", "message": "ok"},
			{"task-id": "t-cccc3", "relevance": "high", "urgency": "now", "message": "ok"}]}`, err: "recipient 2:"},
		{name: "huge reply", reply: `{"recipients": [], "skip-reason": "` + strings.Repeat("x", maxDecisionReply) + `"}`, err: "a decision is under"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseDecision(tc.reply, testCandidates, 100)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("ParseDecision = %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("ParseDecision = %+v, %v; want an error with %q", got, err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// checkDecision reports what is wrong with an accepted decision.
func checkDecision(d Decision, cs []Candidate, maxMessage int) []string {
	var bad []string
	seen := map[task.ID]bool{}
	for _, r := range d.Recipients {
		if !slices.ContainsFunc(cs, func(c Candidate) bool { return c.TaskID == r.TaskID }) {
			bad = append(bad, "names "+string(r.TaskID))
		}
		if seen[r.TaskID] {
			bad = append(bad, "names "+string(r.TaskID)+" twice")
		}
		seen[r.TaskID] = true
		if !slices.Contains(relevances, r.Relevance) {
			bad = append(bad, "relevance "+r.Relevance)
		}
		if urgencyRank(r.Urgency) >= len(urgencies) {
			bad = append(bad, "urgency "+r.Urgency)
		}
		if strings.TrimSpace(r.Message) == "" || len(r.Message) > maxMessage+len("…") || !utf8.ValidString(r.Message) {
			bad = append(bad, "message "+r.Message)
		}
	}
	if strings.ContainsAny(d.SkipReason, "\n\r\t") || strings.ContainsAny(d.Summary, "\n\r\t") {
		bad = append(bad, "skip reason or summary not one line")
	}
	return bad
}

func FuzzParseDecision(f *testing.F) {
	for _, s := range []string{validDecision, "```json\n" + validDecision + "\n```", "", "{}", "```", `{"recipients":[]}`,
		`{"recipients":null}`, `{"recipients":[{"task_id":"t-cccc3","relevance":"LOW","urgency":"FYI","message":" é "}]}`,
		`{"recipients":[{"task-id":"t-bbbb2","task_id":"t-zzzz9","relevance":"high","urgency":"fyi","message":"m"}]}`,
		`{"recipients":[{"task-id":"t-bbbb2","relevance":"high","urgency":"fyi","message":"` + strings.Repeat("ü", 200) + `"}]}`,
		`{"recipients":[{"task-id":"t-bbbb2","relevance":"high","urgency":"fyi","message":"\ud800x"}]}`, validDecision + "]"} {
		f.Add(s, 100)
	}
	f.Fuzz(func(t *testing.T, reply string, maxMessage int) {
		maxMessage = 1 + abs(maxMessage)%2000
		d, err := ParseDecision(reply, testCandidates, maxMessage)
		if err != nil {
			if d.Recipients != nil || d.Source != "" || d.SkipReason != "" {
				t.Errorf("an error came with a decision: %+v", d)
			}
			return
		}
		if bad := checkDecision(d, testCandidates, maxMessage); len(bad) > 0 {
			t.Errorf("ParseDecision(%q) accepted %+v: %v", reply, d, bad)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

// A bad entry is left out; the good ones stand (one invented task id does
// not hand the decision to the rules, which would tell every candidate).
func TestParseDecisionKeepsTheGoodRecipients(t *testing.T) {
	t.Parallel()
	cands := []Candidate{{TaskID: "t-bbbb2"}, {TaskID: "t-cccc3"}}
	d, err := ParseDecision(`{"recipients": [
		{"task-id": "t-bbbb2", "relevance": "high", "urgency": "blocking", "message": "ok"},
		{"task-id": "t-zzzz9", "relevance": "high", "urgency": "blocking", "message": "invented"},
		{"task-id": "t-cccc3", "relevance": "high", "urgency": "now", "message": "bad urgency"}]}`, cands, 600)
	if err != nil || len(d.Recipients) != 1 || d.Recipients[0].TaskID != "t-bbbb2" || d.Dropped != 2 {
		t.Fatalf("ParseDecision = %+v, %v; want t-bbbb2 alone, 2 dropped", d, err)
	}
}

func TestRulesDecision(t *testing.T) {
	t.Parallel()
	ev := Evaluation{Source: Candidate{TaskID: "t-aaaa1", Description: "Implement JWT token validation endpoint"}, Candidates: []Candidate{
		{TaskID: "t-bbbb2", Score: 0.6, Relations: []string{"shared-tags"}, Allowed: []string{Blocking, Helpful}},
		{TaskID: "t-cccc3", Score: 0.35, Relations: []string{"same-files"}, Allowed: []string{Blocking, Helpful}},
		{TaskID: "t-dddd4", Score: 0.2, Allowed: []string{Blocking}},
		{TaskID: "t-eeee5", Score: 0.2, Relations: []string{"same-parent"}, Allowed: []string{Blocking, Helpful, FYI}},
	}}
	for _, tc := range []struct {
		kind knowledge.Kind
		want map[task.ID]string // urgency per recipient
	}{
		// A resolved error is blocking for those working on the same files.
		{kind: knowledge.ErrorResolution, want: map[task.ID]string{"t-bbbb2": Helpful, "t-cccc3": Blocking, "t-eeee5": Helpful}},
		{kind: knowledge.Explicit, want: map[task.ID]string{"t-bbbb2": Helpful, "t-cccc3": Helpful, "t-eeee5": Helpful}},
		{kind: knowledge.Model, want: map[task.ID]string{"t-bbbb2": Helpful, "t-cccc3": Helpful, "t-eeee5": Helpful}},
		{kind: knowledge.Discovery, want: map[task.ID]string{"t-bbbb2": Helpful, "t-eeee5": FYI}},
		{kind: knowledge.Statement, want: map[task.ID]string{"t-bbbb2": Helpful, "t-eeee5": FYI}},
	} {
		l := store.Learning{ID: 1, TaskID: "t-aaaa1", Kind: string(tc.kind), Summary: "JWT needs iat", Detail: "more\nlines", Files: []string{"auth/token.go"}}
		d := rulesDecision(l, ev, 600)
		got := map[task.ID]string{}
		for _, r := range d.Recipients {
			got[r.TaskID] = r.Urgency
			if r.Message != RulesMessage(l, ev.Source, 600) {
				t.Errorf("%s: message %q", tc.kind, r.Message)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: urgencies (-want +got):\n%s", tc.kind, diff)
		}
		if len(d.Recipients) > 0 && d.Recipients[0].Relevance != "high" {
			t.Errorf("%s: relevance of a 0.6 score = %q", tc.kind, d.Recipients[0].Relevance)
		}
	}
	msg := RulesMessage(store.Learning{Summary: "JWT  needs\niat", Detail: "a\nb", Files: []string{"a.go", "b.go"}}, ev.Source, 600)
	if want := "Task t-aaaa1 (\"Implement JWT token validation endpoint\") found: JWT needs iat\na b\nFiles: a.go, b.go"; msg != want {
		t.Errorf("RulesMessage = %q, want %q", msg, want)
	}
	if d := rulesDecision(store.Learning{Kind: "discovery"}, Evaluation{Candidates: []Candidate{{TaskID: "t-x", Score: 0.1, Allowed: []string{Blocking}}}}, 600); len(d.Recipients) != 0 || d.SkipReason == "" {
		t.Errorf("a decision nobody is allowed = %+v, want a skip reason", d)
	}
}

// A persona's urgency beyond what the thresholds allow a task is not
// sent; the refusal is recorded.
func TestPersonaUrgencyAboveTheThreshold(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, true)
		tm := newTeam(h)
		cfg := baseConfig()
		cfg.Relay[Blocking] = Never
		h.start(cfg, func(o *Options) { o.Decider = urgentDecider{} })
		l := tm.api.learn(jwtSummary, "", "auth", "jwt")
		if got := h.act.Count(); got != 0 {
			t.Errorf("%d injections, want none", got)
		}
		var to []string
		for _, ig := range eventsOf[event.SyncIgnored](h, tm.api.id) {
			if ig.Reason != "threshold" || ig.LearningID != l.ID || !strings.Contains(ig.Detail, "blocking is not allowed") {
				t.Errorf("SyncIgnored = %+v", ig)
			}
			to = append(to, ig.To)
		}
		if diff := cmp.Diff([]string{"t-bbbb2", "t-cccc3"}, to); diff != "" {
			t.Errorf("refused recipients (-want +got):\n%s", diff)
		}
	})
}

// urgentDecider makes every candidate's message blocking.
type urgentDecider struct{}

func (urgentDecider) Decide(_ context.Context, ev Evaluation) (Decision, error) {
	var out Decision
	for _, c := range ev.Candidates {
		out.Recipients = append(out.Recipients, Recipient{TaskID: c.TaskID, Relevance: "high", Urgency: Blocking, Message: "now"})
	}
	return out, nil
}

func TestPromptNamesTheCandidates(t *testing.T) {
	t.Parallel()
	ev := Evaluation{
		Learning: LearningView{ID: 4, Kind: "explicit", Summary: jwtSummary, Detail: "d", Tags: []string{"auth", "jwt"}, Files: []string{"auth/token.go"}},
		Source:   Candidate{TaskID: "t-aaaa1", Description: "Implement JWT token validation endpoint"},
		Candidates: []Candidate{{TaskID: "t-bbbb2", Description: "Build login form", Tags: []string{"ui"}, Focus: "edit_file web/login.tsx",
			Relations: []string{"shared-tags"}, Score: 0.5, Allowed: []string{Blocking, Helpful}}, {TaskID: "t-cccc3", Description: "Other", Score: 0.2, Allowed: []string{Blocking}}},
	}
	p := Prompt(ev)
	for _, want := range []string{
		`New learning #4 (explicit) from task t-aaaa1: <task-data kind="description">Implement JWT token validation endpoint</task-data>`,
		`Summary: <task-data kind="summary">` + jwtSummary + "</task-data>", "Detail:\n<task-data kind=\"detail\">\nd\n</task-data>",
		`Tags: <task-data kind="tags">auth, jwt</task-data>`, `Files: <task-data kind="files">auth/token.go</task-data>`,
		`- task t-bbbb2: <task-data kind="description">Build login form</task-data> [tags: <task-data kind="tags">ui</task-data>] [now: <task-data kind="focus">edit_file web/login.tsx</task-data>] [related: shared-tags; score 0.50; allowed: blocking, helpful]`,
		`- task t-cccc3: <task-data kind="description">Other</task-data> [related: none; score 0.20; allowed: blocking]`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
}
