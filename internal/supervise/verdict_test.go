package supervise

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/stuck"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

const validReply = `{"status": "stuck", "confidence": 0.85, "diagnosis": "check.sh fails on a missing VERSION file", "recommendation": "nudge", "nudge-message": "Create VERSION, then rerun check.sh."}`

var validVerdict = Verdict{Status: "stuck", Confidence: 0.85, Diagnosis: "check.sh fails on a missing VERSION file",
	Recommendation: "nudge", NudgeMessage: "Create VERSION, then rerun check.sh."}

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 200)
	for _, tc := range []struct {
		name, reply string
		want        Verdict
		err         string // a part of the error; empty when the reply is valid
	}{
		{name: "valid", reply: validReply, want: validVerdict},
		{name: "fenced", reply: "```json\n" + validReply + "\n```", want: validVerdict},
		{name: "fenced without a language", reply: "  ```\n" + validReply + "\n```\n", want: validVerdict},
		{name: "underscore nudge key", reply: strings.Replace(validReply, "nudge-message", "nudge_message", 1), want: validVerdict},
		{name: "words in any case", reply: `{"status":"Runaway","confidence":1,"recommendation":"PAUSE"}`,
			want: Verdict{Status: "runaway", Confidence: 1, Recommendation: "pause"}},
		{name: "diagnosis on one line", reply: `{"status":"healthy","confidence":0,"diagnosis":"  moving\n\talong  fine ","recommendation":"continue"}`,
			want: Verdict{Status: "healthy", Diagnosis: "moving along fine", Recommendation: "continue"}},
		{name: "long diagnosis clipped", reply: `{"status":"struggling","confidence":0.5,"diagnosis":"` + long + `","recommendation":"continue"}`,
			want: Verdict{Status: "struggling", Confidence: 0.5, Diagnosis: strings.TrimSpace(long)[:maxDiagnosis] + "…", Recommendation: "continue"}},
		{name: "extra fields ignored", reply: `{"status":"stuck","confidence":0.7,"recommendation":"escalate","why":"x"}`,
			want: Verdict{Status: "stuck", Confidence: 0.7, Recommendation: "escalate"}},

		{name: "empty", reply: "", err: "not a JSON object"},
		{name: "prose", reply: "The task looks stuck to me.", err: "not a JSON object"},
		{name: "array", reply: `[` + validReply + `]`, err: "not a JSON object"},
		{name: "unclosed fence", reply: "```json\n" + validReply, err: "never closes"},
		{name: "broken JSON", reply: `{"status": "stuck", "confidence": }`, err: "not valid JSON"},
		{name: "confidence as a string", reply: `{"status":"stuck","confidence":"high","recommendation":"pause"}`, err: "not valid JSON"},
		{name: "missing status", reply: `{"confidence":0.9,"recommendation":"pause"}`, err: "no status"},
		{name: "null status", reply: `{"status":null,"confidence":0.9,"recommendation":"pause"}`, err: "no status"},
		{name: "missing recommendation", reply: `{"status":"stuck","confidence":0.9}`, err: "no recommendation"},
		{name: "missing confidence", reply: `{"status":"stuck","recommendation":"pause"}`, err: "no confidence"},
		{name: "bad status", reply: `{"status":"confused","confidence":0.9,"recommendation":"pause"}`, err: `status "confused" is not one of`},
		{name: "bad recommendation", reply: `{"status":"stuck","confidence":0.9,"recommendation":"reboot"}`, err: `recommendation "reboot" is not one of`},
		{name: "confidence above 1", reply: `{"status":"stuck","confidence":1.5,"recommendation":"pause"}`, err: "confidence 1.5 is not between 0 and 1"},
		{name: "confidence below 0", reply: `{"status":"stuck","confidence":-0.1,"recommendation":"pause"}`, err: "not between 0 and 1"},
		{name: "nudge without message", reply: `{"status":"stuck","confidence":0.9,"recommendation":"nudge"}`, err: "without a nudge-message"},
		{name: "nudge with a blank message", reply: `{"status":"stuck","confidence":0.9,"recommendation":"nudge","nudge-message":"  \n "}`, err: "without a nudge-message"},
		{name: "trailing prose", reply: validReply + " Hope this helps!", err: "more after its JSON object"},
		{name: "two objects", reply: validReply + validReply, err: "more after its JSON object"},
		{name: "text inside the fence", reply: "```json\n" + validReply + "\nthat is all\n```", err: "more after its JSON object"},
		{name: "huge reply", reply: `{"status":"stuck","confidence":0.9,"recommendation":"pause","diagnosis":"` + strings.Repeat("x", maxReply) + `"}`, err: "a verdict is under"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseVerdict(tc.reply)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("ParseVerdict = %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("ParseVerdict = %+v, %v; want an error with %q", got, err, tc.err)
			case tc.err != "" && got != (Verdict{}):
				t.Errorf("an error came with a verdict: %+v", got)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

// checkVerdict reports what is wrong with an accepted verdict.
func checkVerdict(v Verdict) []string {
	var bad []string
	if !slices.Contains(statuses, v.Status) {
		bad = append(bad, "status "+v.Status)
	}
	if !slices.Contains(recommendations, v.Recommendation) {
		bad = append(bad, "recommendation "+v.Recommendation)
	}
	if !(v.Confidence >= 0 && v.Confidence <= 1) {
		bad = append(bad, "confidence out of range")
	}
	if v.Recommendation == "nudge" && strings.TrimSpace(v.NudgeMessage) == "" {
		bad = append(bad, "a nudge without a message")
	}
	if len(v.Diagnosis) > maxDiagnosis+len("…") || strings.ContainsAny(v.Diagnosis, "\n\r\t") || v.Diagnosis != strings.TrimSpace(v.Diagnosis) {
		bad = append(bad, "diagnosis not one clipped line")
	}
	if len(v.NudgeMessage) > maxNudge+len("…") || strings.TrimLeft(v.NudgeMessage, " \t\r\n") != v.NudgeMessage {
		bad = append(bad, "nudge message not clipped and trimmed")
	}
	if !utf8.ValidString(v.Diagnosis) || !utf8.ValidString(v.NudgeMessage) {
		bad = append(bad, "invalid UTF-8")
	}
	return bad
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{validReply, "```json\n" + validReply + "\n```", "", "{}", "```", "```json\n{}",
		`{"status":"healthy","confidence":0,"recommendation":"continue"}`,
		`{"status":"STUCK","confidence":1e0,"recommendation":"Nudge","nudge_message":" é\u00e9 "}`,
		`{"status":"stuck","confidence":0.9,"recommendation":"nudge","nudge-message":" ","nudge_message":"x"}`,
		`{"status":"stuck","confidence":NaN,"recommendation":"pause"}`, validReply + "]", `{"diagnosis":"` + strings.Repeat("ü", 300) + `"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		v, err := ParseVerdict(reply)
		if err != nil {
			if v != (Verdict{}) {
				t.Errorf("an error came with a verdict: %+v", v)
			}
			return
		}
		if bad := checkVerdict(v); len(bad) > 0 {
			t.Fatalf("accepted %q as %+v: %v", reply, v, bad)
		}
		// What was accepted reads back the same, when short enough to
		// escape clipping.
		if len(v.Diagnosis) <= maxDiagnosis && len(v.NudgeMessage) <= maxNudge {
			b, err := json.Marshal(v)
			if err != nil || len(b) > maxReply {
				return
			}
			again, err := ParseVerdict(string(b))
			if err != nil || again != v {
				t.Errorf("%+v reads back as %+v, %v", v, again, err)
			}
		}
	})
}

func testSnapshot() Snapshot {
	return Snapshot{
		Task:     task.Task{ID: "t-prompt", Description: "make the release check pass", Persona: "junior"},
		Counters: stuck.Counters{Steps: 6, Calls: 3, Errors: 3, Turns: 3, StepsSinceProgress: 6, TokensSinceProgress: 3780},
		Window: []stuck.Step{
			{N: 1, Kind: "call", Tool: "bash", What: "bash sh check.sh"},
			{N: 2, Kind: "result", Tool: "bash", Error: true, What: "bash sh check.sh → error: VERSION: No such file"},
		},
		Finding: &stuck.Finding{Check: stuck.Failing, Status: "stuck", Diagnosis: "the same call failed 3 times in a row",
			Evidence: []event.Evidence{{Step: 2, Kind: "result", Tool: "bash", What: "bash sh check.sh → error: VERSION: No such file"}}},
		Ladder: "hint", Unheeded: 1, Excerpt: "assistant: Running it again.",
	}
}

func TestPromptShowsTheSnapshot(t *testing.T) {
	t.Parallel()
	p := Prompt(testSnapshot())
	for _, want := range []string{
		"Task t-prompt (persona <task-data kind=\"persona\">junior</task-data>):\n<task-data kind=\"description\">\nmake the release check pass\n</task-data>\n",
		"6 steps, 3 tool calls (3 failed)",
		"3780 tokens",
		"It has been nudged (hint); 1 nudges went unheeded.",
		"The deterministic checks found: failing (stuck): <task-data kind=\"diagnosis\">the same call failed 3 times in a row</task-data>\nEvidence:\n",
		"- step 2 result: <task-data kind=\"evidence\">bash sh check.sh → error: VERSION: No such file</task-data>\n",
		"1 call e0: <task-data kind=\"step\">bash sh check.sh</task-data>\n",
		"2 result e0 [error]: <task-data kind=\"step\">bash sh check.sh → error: VERSION: No such file</task-data>\n",
		"The end of its conversation:\n<task-data kind=\"conversation\">\nassistant: Running it again.\n</task-data>\n",
		"Reply with the JSON object only.",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}

	s := testSnapshot()
	s.Finding, s.Ladder, s.Excerpt, s.Task.Persona = nil, "none", "", ""
	p = Prompt(s)
	if !strings.Contains(p, "found nothing; this is a periodic look") || strings.Contains(p, "nudged") ||
		strings.Contains(p, "conversation:") || !strings.Contains(p, "(persona <task-data kind=\"persona\">default</task-data>)") {
		t.Errorf("prompt without a finding:\n%s", p)
	}
}

// A look asked because of a weak signal names the signal: what was seen,
// with its evidence, escaped like the task's other text; not "a periodic
// look".
func TestPromptNamesTheWeakSignal(t *testing.T) {
	t.Parallel()
	s := testSnapshot()
	s.Finding, s.Ladder = nil, "none"
	s.Signal = &stuck.Finding{Check: stuck.Wandering, Status: "struggling", Tier2Only: true,
		Diagnosis: "30 tool results without changing a file, 24 of them reads",
		Evidence:  []event.Evidence{{Step: 58, Kind: "result", Tool: "read_file", What: "read_file internal/pay/<ledger>.go → package pay"}}}
	p := Prompt(s)
	for _, want := range []string{
		"The deterministic checks found nothing to act on; you are asked because of a weak signal: wandering (struggling): " +
			"<task-data kind=\"signal\">30 tool results without changing a file, 24 of them reads</task-data>\nLast seen:\n",
		"- step 58 result: <task-data kind=\"evidence\">read_file internal/pay/&lt;ledger&gt;.go → package pay</task-data>\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "periodic look") || strings.Contains(p, "<ledger>") {
		t.Errorf("the prompt for a weak signal says it is periodic, or carries task text unescaped:\n%s", p)
	}
}

func TestModelJudgeAsksTheWatcherPersona(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, &llmtest.Script{Conversations: []llmtest.Conversation{
		{Name: "bad", Match: llmtest.Match{System: "task watcher", User: "t-bad"}, Steps: []llmtest.Step{{Text: "It is stuck, I think."}}},
		{Name: "watcher", Match: llmtest.Match{System: "task watcher"}, Steps: []llmtest.Step{{Text: "```json\n" + validReply + "\n```"}}},
	}})
	c, err := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Model: "claude-haiku-test", IdleTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var spent []task.ID
	j := ModelJudge{
		Model:   func() (llm.Client, string, error) { return c, "claude-haiku-test", nil },
		System:  "You are the task watcher.",
		Timeout: time.Minute,
		Spent: func(id task.ID, u llm.Usage, _ float64) {
			mu.Lock()
			defer mu.Unlock()
			if u.OutputTokens > 0 {
				spent = append(spent, id)
			}
		},
	}
	v, err := j.Judge(t.Context(), testSnapshot())
	if err != nil || v != validVerdict {
		t.Fatalf("Judge = %+v, %v", v, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].System != "You are the task watcher." || len(reqs[0].Messages) != 1 ||
		reqs[0].Messages[0].Text() != Prompt(testSnapshot()) || reqs[0].Model != "claude-haiku-test" {
		t.Errorf("request = %+v", reqs)
	}

	bad := testSnapshot()
	bad.Task.ID = "t-bad"
	if v, err := j.Judge(t.Context(), bad); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("Judge of an unusable reply = %+v, %v", v, err)
	}
	mu.Lock()
	if diff := cmp.Diff([]task.ID{"t-prompt", "t-bad"}, spent); diff != "" {
		t.Errorf("spent (-want +got):\n%s", diff)
	}
	mu.Unlock()

	j.Model = func() (llm.Client, string, error) { return nil, "", errors.New("no model for the watcher tier") }
	if _, err := j.Judge(t.Context(), testSnapshot()); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("Judge without a model = %v", err)
	}
}
