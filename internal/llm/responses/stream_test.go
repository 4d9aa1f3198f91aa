package responses

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/sse"
)

// FuzzAccumulator feeds arbitrary event sequences (one JSON event per
// line) to the stream accumulator: it must never panic, fail only with
// classified errors, and a response it accepts must hold tool calls with
// ids, names and JSON-object inputs, and no negative usage.
func FuzzAccumulator(f *testing.F) {
	f.Add([]byte(`{"type":"response.created","response":{"model":"m","status":"in_progress"}}
{"type":"response.output_item.added","output_index":0,"item":{"type":"message"}}
{"type":"response.output_text.delta","output_index":0,"delta":"hi"}
{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"c","name":"read"}}
{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"a\":"}
{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","call_id":"c","name":"read","arguments":"{\"a\":1}"}}
{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5,"output_tokens":2,"input_tokens_details":{"cached_tokens":9}}}}`))
	f.Add([]byte(`{"type":"response.output_text.delta","output_index":300,"delta":"x"}`))
	f.Add([]byte(`{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"slow down"}}}`))
	f.Add([]byte(`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}`))
	f.Add([]byte(`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":"f"}}
{"type":"response.completed","response":{"status":"completed"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var acc accumulator
		for _, line := range bytes.Split(data, []byte("\n")) {
			if err := acc.add(sse.Event{Data: line}, func(llm.Event) {}); err != nil {
				if llm.ClassOf(err) == llm.ClassUnknown {
					t.Fatalf("unclassified error %v", err)
				}
				return
			}
			if acc.finished {
				break
			}
		}
		resp, err := acc.response()
		if err != nil {
			if llm.ClassOf(err) == llm.ClassUnknown {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		for _, c := range resp.Message.ToolCalls() {
			var obj map[string]any
			if c.ID == "" || c.Name == "" || json.Unmarshal(c.Input, &obj) != nil {
				t.Fatalf("bad tool call %+v", c)
			}
		}
		if u := resp.Usage; u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 {
			t.Fatalf("negative usage %+v", u)
		}
	})
}
