package llmtest

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

func TestParseResponsesRequest(t *testing.T) {
	t.Parallel()
	r, err := parseResponsesRequest([]byte(`{"model":"gpt","instructions":"inst","max_output_tokens":9,"stream":true,"input":[
		{"type":"message","role":"developer","content":[{"type":"input_text","text":"dev"}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context/>"}]},
		{"role":"user","content":"do it"},
		{"type":"reasoning","summary":[],"encrypted_content":"x"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]},
		{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"},
		{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin Patch"},
		{"type":"function_call_output","call_id":"c1","output":"a.go"},
		{"type":"custom_tool_call_output","call_id":"c2","output":[{"type":"input_text","text":"applied"}]}],
		"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},{"type":"web_search"},
		{"type":"namespace","name":"ns","tools":[{"type":"function","name":"close_agent"}]},{"type":"custom","name":"apply_patch"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.System != "inst\ndev" || r.Model != "gpt" || r.MaxTokens != 9 || !r.Stream || r.API != APIResponses {
		t.Errorf("parsed %+v", r)
	}
	// The two user messages merge into one turn; text, calls and outputs
	// make one assistant turn and one user turn.
	if len(r.Messages) != 3 || r.assistantTurns() != 1 || r.firstUserText() != "<environment_context/>do it" {
		t.Fatalf("messages %+v", r.Messages)
	}
	calls := r.Messages[1].ToolCalls()
	if len(calls) != 2 || calls[0].ID != "c1" || string(calls[1].Input) != `{"input":"*** Begin Patch"}` || r.Messages[1].Text() != "ok" {
		t.Errorf("assistant turn %+v", r.Messages[1])
	}
	res := r.Messages[2].Parts
	if len(res) != 2 || res[0].ToolResult.Content != "a.go" || res[1].ToolResult.CallID != "c2" || res[1].ToolResult.Content != "applied" {
		t.Errorf("tool outputs %+v", res)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	if len(names) != 3 || names[1] != "close_agent" || names[2] != "apply_patch" {
		t.Errorf("tools %q", names)
	}
}

func TestParseResponsesRequestStringInput(t *testing.T) {
	t.Parallel()
	r, err := parseResponsesRequest([]byte(`{"model":"m","input":"hello"}`))
	if err != nil || len(r.Messages) != 1 || r.firstUserText() != "hello" {
		t.Fatalf("parsed %+v, %v", r, err)
	}
	if _, err := parseResponsesRequest([]byte(`{"input":[{"type":"message","role":"wizard","content":"x"}]}`)); err == nil {
		t.Error("unknown role accepted")
	}
}

func TestParseGeminiRequest(t *testing.T) {
	t.Parallel()
	r, err := parseGeminiRequest([]byte(`{"systemInstruction":{"parts":[{"text":"sys"}]},
		"generationConfig":{"maxOutputTokens":12,"thinkingConfig":{"includeThoughts":true}},
		"contents":[
		{"role":"user","parts":[{"text":"<session_context/>"},{"text":"do it"}]},
		{"role":"model","parts":[{"text":"thinking…","thought":true},{"text":"ok"},{"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}}]},
		{"role":"user","parts":[{"functionResponse":{"id":"x1","name":"run_shell_command","response":{"output":"a.go"}}},
		                         {"functionResponse":{"name":"read_file","response":{"error":"no such file"}}},
		                         {"functionResponse":{"name":"glob","response":{"files":["a"]}}}]}],
		"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{"type":"object"}},{"name":"old","parameters":{"type":"OBJECT"}}]}]}`),
		"gemini-2.5-flash", true)
	if err != nil {
		t.Fatal(err)
	}
	if r.System != "sys" || r.MaxTokens != 12 || r.Model != "gemini-2.5-flash" || !r.Stream || r.firstUserText() != "<session_context/>do it" {
		t.Errorf("parsed %+v", r)
	}
	if len(r.Messages) != 3 || r.Messages[1].Text() != "ok" {
		t.Fatalf("messages %+v (a thought is not text)", r.Messages)
	}
	if calls := r.Messages[1].ToolCalls(); len(calls) != 1 || calls[0].ID != "run_shell_command" || string(calls[0].Input) != `{"command":"ls"}` {
		t.Errorf("calls %+v: a call without id is named by its function", calls)
	}
	want := []llm.ToolResult{{CallID: "x1", Content: "a.go"}, {CallID: "read_file", Content: "no such file", IsError: true}, {CallID: "glob", Content: `{"files":["a"]}`}}
	for i, p := range r.Messages[2].Parts {
		if *p.ToolResult != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, *p.ToolResult, want[i])
		}
	}
	if len(r.Tools) != 2 || string(r.Tools[1].Schema) != `{"type":"OBJECT"}` {
		t.Errorf("tools %+v", r.Tools)
	}
	if _, err := parseGeminiRequest([]byte(`{"contents":[{"role":"system","parts":[]}]}`), "m", false); err == nil {
		t.Error("unknown role accepted")
	}
}

var newRequestSeeds = []string{
	`{"model":"m","input":"hi"}`,
	`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"r"}]}],"tools":[{"type":"namespace","tools":[{"type":"namespace"}]}]}`,
	`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":null}}]},{"parts":[{"functionResponse":{"name":"f","response":7}}]}]}`,
	`{"systemInstruction":{"parts":null},"contents":null}`,
	`{"input":7}`, `[]`, `{`, ``,
}

func FuzzParseResponsesRequest(f *testing.F) {
	for _, s := range newRequestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if r, err := parseResponsesRequest(body); err == nil {
			_ = r.textBytes() + r.assistantTurns() + len(r.firstUserText())
		}
	})
}

func FuzzParseGeminiRequest(f *testing.F) {
	for _, s := range newRequestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if r, err := parseGeminiRequest(body, "m", true); err == nil {
			_ = r.textBytes() + r.assistantTurns() + len(r.firstUserText())
		}
	})
}
