package llmtest

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

func TestParseOpenAIRequestGroupsToolResults(t *testing.T) {
	t.Parallel()
	r, err := parseOpenAIRequest([]byte(`{"model":"m","messages":[
		{"role":"developer","content":"dev"},
		{"role":"system","content":[{"type":"text","text":"sys"}]},
		{"role":"user","content":"go"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"b","arguments":"{\"x\":1}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"r1"},
		{"role":"tool","tool_call_id":"c2","content":"r2"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.System != "dev\nsys" || len(r.Messages) != 3 || r.assistantTurns() != 1 {
		t.Fatalf("parsed %+v", r)
	}
	res := r.Messages[2]
	if res.Role != llm.RoleUser || len(res.Parts) != 2 || res.Parts[1].ToolResult.CallID != "c2" {
		t.Errorf("tool results = %+v", res)
	}
	if calls := r.Messages[1].ToolCalls(); len(calls) != 2 || string(calls[1].Input) != `{"x":1}` {
		t.Errorf("tool calls = %+v", calls)
	}
}

var requestSeeds = []string{
	`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","system":"s","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}],"is_error":true}]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{"a":1}}]}],"tools":[{"name":"n","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}]}`,
	`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"s"},{"role":"tool","tool_call_id":"x","content":"r"},{"role":"assistant","tool_calls":[{"id":"x","function":{"name":"f","arguments":"{"}}]}],"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]}`,
	`{"messages":[{"role":"wizard","content":"x"}]}`,
	`{"messages":[{"role":"user","content":7}]}`,
	`{"system":null,"messages":null}`,
	`[]`, `{`, ``,
}

func FuzzParseAnthropicRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseAnthropicRequest(body)
		if err == nil {
			_ = r.textBytes() + r.assistantTurns() + len(r.firstUserText())
		}
	})
}

func FuzzParseOpenAIRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseOpenAIRequest(body)
		if err == nil {
			_ = r.textBytes() + r.assistantTurns() + len(r.firstUserText())
		}
	})
}

func TestSplitChunksKeepsRunes(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "abc", "ünïcödé and emoji 🎉🎉", "日本語のテキスト"} {
		for n := 1; n < 6; n++ {
			joined := ""
			for _, c := range splitChunks(s, n) {
				if len(c) == 0 {
					t.Fatalf("empty chunk for %q/%d", s, n)
				}
				joined += c
				for i, r := range c {
					if r == '\uFFFD' {
						t.Errorf("chunk %q of %q splits a rune at %d", c, s, i)
					}
				}
			}
			if joined != s {
				t.Errorf("chunks of %q/%d join to %q", s, n, joined)
			}
		}
	}
}
