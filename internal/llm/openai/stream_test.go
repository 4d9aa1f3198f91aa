package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	oa "github.com/openai/openai-go/v3"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// FuzzAccumulator feeds arbitrary chunk sequences (one JSON chunk per
// line) to the stream accumulator: it must never panic, and a response it
// accepts must hold tool calls with ids, names and JSON-object inputs.
func FuzzAccumulator(f *testing.F) {
	f.Add([]byte(`{"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"read","arguments":""}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}
{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}`))
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":7,"id":"x"}]}}]}`))
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`))
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var acc accumulator
		for _, line := range bytes.Split(data, []byte("\n")) {
			var ch oa.ChatCompletionChunk
			if json.Unmarshal(line, &ch) != nil {
				continue
			}
			if err := acc.add(ch, func(llm.Event) {}); err != nil {
				if llm.ClassOf(err) != llm.ClassMalformed {
					t.Fatalf("error %v is not ClassMalformed", err)
				}
				return
			}
		}
		resp, err := acc.response()
		if err != nil {
			if c := llm.ClassOf(err); c != llm.ClassMalformed && c != llm.ClassNetwork {
				t.Fatalf("error %v has class %v", err, c)
			}
			return
		}
		for _, c := range resp.Message.ToolCalls() {
			var obj map[string]any
			if c.ID == "" || c.Name == "" || json.Unmarshal(c.Input, &obj) != nil {
				t.Fatalf("bad tool call %+v", c)
			}
		}
		if u := resp.Usage; u.InputTokens < 0 || u.OutputTokens < 0 {
			t.Fatalf("negative usage %+v", u)
		}
	})
}

func TestStopWithCallsFromCompatibleServers(t *testing.T) {
	t.Parallel()
	var acc accumulator
	for _, line := range []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	} {
		var ch oa.ChatCompletionChunk
		if err := json.Unmarshal([]byte(line), &ch); err != nil {
			t.Fatal(err)
		}
		if err := acc.add(ch, nil); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := acc.response()
	if err != nil {
		t.Fatal(err)
	}
	// Both calls arrived at index 0 with their own ids (as Ollama sends
	// them) and the reply finished with "stop".
	calls := resp.Message.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_a" || calls[1].ID != "call_b" || resp.StopReason != llm.StopToolUse {
		t.Errorf("calls %+v stop %q, want two calls and tool_use", calls, resp.StopReason)
	}
}
