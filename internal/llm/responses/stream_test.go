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

func TestMessageWithoutDeltas(t *testing.T) {
	t.Parallel()
	var acc accumulator
	var streamed []byte
	h := func(ev llm.Event) { streamed = append(streamed, ev.Text...) }
	for _, line := range []string{
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"message"}}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"message","content":[{"type":"output_text","text":"whole"}]}}`,
		`{"type":"response.completed","response":{"status":"completed"}}`,
	} {
		if err := acc.add(sse.Event{Data: []byte(line)}, h); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := acc.response()
	if err != nil || resp.Message.Text() != "whole" || string(streamed) != "whole" {
		t.Fatalf("response %+v streamed %q err %v, want the whole text once", resp, streamed, err)
	}
}

func TestTextDeltaForACall(t *testing.T) {
	t.Parallel()
	var acc accumulator
	_ = acc.add(sse.Event{Data: []byte(`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":"f"}}`)}, nil)
	err := acc.add(sse.Event{Data: []byte(`{"type":"response.output_text.delta","output_index":0,"delta":"x"}`)}, nil)
	if llm.ClassOf(err) != llm.ClassMalformed {
		t.Fatalf("text delta for a call = %v, want malformed", err)
	}
}
