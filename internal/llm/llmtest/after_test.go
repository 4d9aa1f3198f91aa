package llmtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

// nudge is an injected watcher nudge as the native agent renders it
// (engine.Render) into the user message after a tool result.
const nudge = "<system-nudge from=\"watcher\" severity=\"hint\">\ncheck.sh reads VERSION, which does not exist.\n</system-nudge>"

// afterScript answers the release task: a loop until the nudge arrives,
// then the recovery, whose steps count from the nudge on.
func afterScript() *llmtest.Script {
	return &llmtest.Script{Conversations: []llmtest.Conversation{
		{Name: "recovered", Match: llmtest.Match{User: "release", After: "<system-nudge"},
			Steps: []llmtest.Step{{Text: "creating VERSION"}, {Text: "rerunning the check"}}},
		{Name: "loop", Match: llmtest.Match{User: "release"},
			Steps: []llmtest.Step{{Text: "run 1"}, {Text: "run 2"}, {Text: "run 3"}, {Text: "run 4"}, {Text: "run 5"}}},
	}}
}

// block is an Anthropic content block.
type block struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Input     any    `json:"input,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// anthropicBody returns a Messages API request for the messages.
func anthropicBody(t *testing.T, msgs []message) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"model": "m", "max_tokens": 100, "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// turnWith returns an assistant message calling a tool and the user
// message with its result and the extra text parts (injections).
func turnWith(n int, result string, extra ...string) []message {
	id := fmt.Sprintf("toolu_%d", n)
	user := message{Role: "user", Content: []block{{Type: "tool_result", ToolUseID: id, Content: result}}}
	for _, x := range extra {
		user.Content = append(user.Content, block{Type: "text", Text: x})
	}
	return []message{
		{Role: "assistant", Content: []block{{Type: "text", Text: fmt.Sprintf("run %d", n)},
			{Type: "tool_use", ID: id, Name: "bash", Input: map[string]string{"command": "sh check.sh"}}}},
		user,
	}
}

// answer posts a request and returns the reply's text.
func answer(t *testing.T, srv *llmtest.Server, body string) string {
	t.Helper()
	resp, b := post(t, srv.URL()+"/v1/messages", body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var r struct {
		Content []block `json:"content"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("reply %s: %v", b, err)
	}
	var texts []string
	for _, c := range r.Content {
		texts = append(texts, c.Text)
	}
	return strings.Join(texts, "")
}

func TestAfterAnswersOnceTheMessageArrives(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, afterScript())
	msgs := []message{{Role: "user", Content: []block{{Type: "text", Text: "make the release check pass"}}}}
	var got []string
	ask := func() { got = append(got, answer(t, srv, anthropicBody(t, msgs))) }
	ask()
	msgs = append(msgs, turnWith(1, "VERSION: No such file")...)
	ask()
	msgs = append(msgs, turnWith(2, "VERSION: No such file", nudge)...)
	ask()
	msgs = append(msgs, turnWith(3, "Wrote 6 bytes to VERSION.")...)
	ask()
	// A second nudge does not move the count: it starts at the first.
	msgs = append(msgs, turnWith(4, "release check passed", nudge)...)
	ask()

	want := []string{"run 1", "run 2", "creating VERSION", "rerunning the check", "exhausted (step 2 of 2)"}
	if len(got) != len(want) {
		t.Fatalf("replies = %q", got)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("reply %d = %q, want %q", i, got[i], want[i])
		}
	}
	var steps []string
	for _, r := range srv.Requests() {
		steps = append(steps, fmt.Sprintf("%s/%d", r.Conversation, r.Step))
	}
	if diff := cmp.Diff([]string{"loop/0", "loop/1", "recovered/0", "recovered/1", "recovered/2"}, steps); diff != "" {
		t.Errorf("conversation/step (-want +got):\n%s", diff)
	}
}

func TestAfterMatchesOnlyLaterUserMessages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		msgs []message
		want string // conversation/step
	}{
		{name: "in the first user message",
			msgs: []message{{Role: "user", Content: []block{{Type: "text", Text: "release: " + nudge}}}},
			want: "loop/0"},
		{name: "in an assistant message",
			msgs: []message{
				{Role: "user", Content: []block{{Type: "text", Text: "release"}}},
				{Role: "assistant", Content: []block{{Type: "text", Text: "I saw " + nudge}}},
				{Role: "user", Content: []block{{Type: "text", Text: "go on"}}}},
			want: "loop/1"},
		{name: "a user message of its own",
			msgs: []message{
				{Role: "user", Content: []block{{Type: "text", Text: "release"}}},
				{Role: "assistant", Content: []block{{Type: "text", Text: "a"}}},
				{Role: "user", Content: []block{{Type: "text", Text: nudge}}}},
			want: "recovered/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, afterScript())
			answer(t, srv, anthropicBody(t, tc.msgs))
			r := srv.Requests()
			if len(r) != 1 || fmt.Sprintf("%s/%d", r[0].Conversation, r[0].Step) != tc.want {
				t.Errorf("requests = %+v, want one answered as %s", r, tc.want)
			}
		})
	}
}

func TestAfterOnTheOpenAIWire(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, afterScript())
	msgs := []map[string]any{
		{"role": "system", "content": "You are an agent."},
		{"role": "user", "content": "make the release check pass"},
		{"role": "assistant", "content": "run 1", "tool_calls": []map[string]any{{"id": "call_1", "type": "function",
			"function": map[string]string{"name": "bash", "arguments": `{"command":"sh check.sh"}`}}}},
		{"role": "tool", "tool_call_id": "call_1", "content": "VERSION: No such file"},
		{"role": "user", "content": nudge},
		{"role": "assistant", "content": "creating VERSION"},
		{"role": "user", "content": "go on"},
	}
	b, err := json.Marshal(map[string]any{"model": "gpt-x", "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	resp, body := post(t, srv.OpenAIBaseURL()+"/chat/completions", string(b))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "rerunning the check") {
		t.Errorf("reply = %d %s, want the recovery's second step", resp.StatusCode, body)
	}
}

func TestAfterParses(t *testing.T) {
	t.Parallel()
	src := "conversations:\n  - name: recovered\n    match: {user: release, after: \"<system-nudge\"}\n    steps: [{text: a}]\n"
	s, err := llmtest.ParseScript("s.yaml", []byte(src))
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}
	if got := s.Conversations[0].Match; got.After != "<system-nudge" || got.User != "release" {
		t.Errorf("match = %+v", got)
	}

	bad := "conversations:\n  - name: ok\n    steps: [{text: a}]\n  - name: x\n    match: {after: \"(nudge\"}\n    steps: [{text: a}]\n"
	_, err = llmtest.ParseScript("s.yaml", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), `s.yaml:4: conversation "x": match.after: error parsing regexp`) {
		t.Errorf("ParseScript = %v, want the bad regexp named with its file and line", err)
	}
	if err := (&llmtest.Script{Default: &llmtest.Conversation{Match: llmtest.Match{After: "["},
		Steps: []llmtest.Step{{Text: "a"}}}}).Validate(); err == nil || !strings.Contains(err.Error(), "match.after") {
		t.Errorf("Validate = %v, want the bad regexp", err)
	}
}

// A capture puts what the first user message names into the reply.
func TestCaptureFillsTheReply(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, &llmtest.Script{Conversations: []llmtest.Conversation{
		{Name: "relay", Match: llmtest.Match{User: "Candidates", Capture: map[string]string{
			"ui": `task (t-[0-9a-z]+): "Build`, "missing": `nothing (here)`}},
			Steps: []llmtest.Step{{Text: `{"recipients": [{"task-id": "${ui}"}], "other": "${missing}"}`}}},
	}})
	msgs := []message{{Role: "user", Content: []block{{Type: "text", Text: "Candidates:\n- task t-ab12c: \"Build the login form\"\n"}}}}
	got := answer(t, srv, anthropicBody(t, msgs))
	if want := `{"recipients": [{"task-id": "t-ab12c"}], "other": "${missing}"}`; got != want {
		t.Fatalf("reply = %q, want %q", got, want)
	}
}

func TestCaptureNeedsOneGroup(t *testing.T) {
	t.Parallel()
	_, err := llmtest.ParseScript("s.yaml", []byte(`
conversations:
  - match: {capture: {x: 'no group', "bad name": '(a)'}}
    steps: [{text: hi}]
`))
	if err == nil || !strings.Contains(err.Error(), "want one group, have 0") || !strings.Contains(err.Error(), `name "bad name"`) {
		t.Fatalf("err = %v, want the group count and the bad name", err)
	}
}

// A capture the first user message does not match is taken from the newest
// tool result that does, and fills a tool call's input as well as the text:
// a scripted host waits for the task id a tool returned.
func TestCaptureFromAToolResultFillsAToolCall(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, &llmtest.Script{Conversations: []llmtest.Conversation{
		{Name: "host", Match: llmtest.Match{User: "spawn", Capture: map[string]string{"id": `"id":"(t-[0-9a-z]+)"`}},
			Steps: []llmtest.Step{
				{ToolCalls: []llmtest.ToolCall{{Name: "spawn_task", Input: map[string]any{"description": "x"}}}},
				{Text: "waiting for ${id}", ToolCalls: []llmtest.ToolCall{{Name: "wait_tasks", Input: map[string]any{"ids": []any{"${id}"}}}}},
			}},
	}})
	msgs := []message{
		{Role: "user", Content: []block{{Type: "text", Text: "spawn a task"}}},
		{Role: "assistant", Content: []block{{Type: "tool_use", ID: "toolu_1", Name: "spawn_task", Input: map[string]any{"description": "x"}},
			{Type: "tool_use", ID: "toolu_2", Name: "spawn_task", Input: map[string]any{"description": "y"}}}},
		{Role: "user", Content: []block{{Type: "tool_result", ToolUseID: "toolu_1", Content: `{"id":"t-old00"}`},
			{Type: "tool_result", ToolUseID: "toolu_2", Content: `{"id":"t-ab12c","status":"queued"}`}}},
	}
	resp, b := post(t, srv.URL()+"/v1/messages", anthropicBody(t, msgs))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var r struct {
		Content []block `json:"content"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var text string
	var input any
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			text += c.Text
		case "tool_use":
			input = c.Input
		}
	}
	if text != "waiting for t-ab12c" {
		t.Errorf("text = %q, want the id of the newest tool result", text)
	}
	got, _ := json.Marshal(input)
	if string(got) != `{"ids":["t-ab12c"]}` {
		t.Errorf("tool input = %s, want the captured id", got)
	}
}
