package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// FuzzAccumulator feeds arbitrary event sequences (one JSON event per
// line) to the stream accumulator: it must never panic, and a stream it
// accepts must yield tool calls with valid JSON objects as input.
func FuzzAccumulator(f *testing.F) {
	f.Add([]byte(`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":3}}}
{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}
{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}
{"type":"content_block_stop","index":0}
{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"read","input":{}}}
{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}
{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"1}"}}
{"type":"content_block_stop","index":1}
{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}
{"type":"message_stop"}`))
	f.Add([]byte(`{"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"x"}}`))
	f.Add([]byte(`{"type":"message_start","message":{}}
{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n"}}
{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"[1"}}
{"type":"content_block_stop","index":0}`))
	f.Add([]byte(`{"type":"message_start","message":{}}
{"type":"content_block_start","index":-1}
{"type":"message_stop"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var acc accumulator
		for _, line := range bytes.Split(data, []byte("\n")) {
			var ev streamEvent
			if json.Unmarshal(line, &ev) != nil {
				continue
			}
			if err := acc.add(&ev, func(llm.Event) {}); err != nil {
				if llm.ClassOf(err) != llm.ClassMalformed {
					t.Fatalf("error %v is not ClassMalformed", err)
				}
				return
			}
		}
		if !acc.stopped {
			return
		}
		for _, c := range acc.response().Message.ToolCalls() {
			var obj map[string]any
			if err := json.Unmarshal(c.Input, &obj); err != nil {
				t.Fatalf("tool call input %q is not an object: %v", c.Input, err)
			}
		}
	})
}

// Token counts decode when they are non-negative integers or null, and a
// stream event with any other count is malformed.
func TestTokenCounts(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]optInt{
		`0`: {0, true}, `17`: {17, true}, `123456789012345678`: {123456789012345678, true}, `null`: {},
	} {
		var o optInt
		if err := json.Unmarshal([]byte(in), &o); err != nil || o != want {
			t.Errorf("%s: %+v, %v; want %+v", in, o, err, want)
		}
	}
	for _, in := range []string{`-1`, `1.5`, `1e3`, `"3"`, `1234567890123456789`, `true`} {
		var ev streamEvent
		err := json.Unmarshal([]byte(`{"type":"message_delta","usage":{"output_tokens":`+in+`}}`), &ev)
		if err == nil {
			t.Errorf("%s: accepted as %+v", in, ev.Usage.OutputTokens)
		}
	}
}
