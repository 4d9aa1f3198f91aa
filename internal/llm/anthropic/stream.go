package anthropic

import (
	"bytes"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// streamEvent is one Messages API stream event: the fields the accumulator
// reads, decoded by encoding/json. The SDK still reads the stream (SSE
// framing, error events); decoding each event into the SDK's full event
// union instead cost about 20 allocations an event.
type streamEvent struct {
	Type    string `json:"type"`
	Index   int64  `json:"index"`
	Message struct {
		Model string     `json:"model"`
		Usage eventUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage eventUsage `json:"usage"`
}

type eventUsage struct {
	InputTokens              optInt `json:"input_tokens"`
	OutputTokens             optInt `json:"output_tokens"`
	CacheCreationInputTokens optInt `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     optInt `json:"cache_read_input_tokens"`
}

// optInt is a token count that may be absent or null (valid is false
// then). A count is a non-negative integer.
type optInt struct {
	n     int64
	valid bool
}

func (o *optInt) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*o = optInt{}
		return nil
	}
	// By hand: strconv.ParseInt(string(b)) allocates the string.
	var n int64
	for i, c := range b {
		if c < '0' || c > '9' || i >= 18 {
			return &llm.Error{Class: llm.ClassMalformed, Message: fmt.Sprintf("token count %.40s is not a count", b)}
		}
		n = n*10 + int64(c-'0')
	}
	if len(b) == 0 {
		return &llm.Error{Class: llm.ClassMalformed, Message: "empty token count"}
	}
	*o = optInt{n: n, valid: true}
	return nil
}

// accumulator builds a response from Messages API stream events. It
// checks the event order it relies on and reports violations as
// ClassMalformed instead of trusting the indexes it is sent.
type accumulator struct {
	model   string
	usage   llm.Usage
	stop    llm.StopReason
	blocks  []block
	started bool
	stopped bool
}

type block struct {
	kind string // "text", "tool_use" or another type we ignore
	text []byte
	call llm.ToolCall
	args []byte
	done bool
}

func malformed(format string, args ...any) error {
	return &llm.Error{Class: llm.ClassMalformed, Message: fmt.Sprintf(format, args...)}
}

func (a *accumulator) add(ev *streamEvent, h func(llm.Event)) error {
	if !a.started && ev.Type != "message_start" {
		return malformed("event %q before message_start", ev.Type)
	}
	switch ev.Type {
	case "message_start":
		if a.started {
			return malformed("second message_start")
		}
		a.started = true
		a.model = ev.Message.Model
		u := ev.Message.Usage
		a.usage = llm.Usage{InputTokens: u.InputTokens.n, OutputTokens: u.OutputTokens.n,
			CacheWriteTokens: u.CacheCreationInputTokens.n, CacheReadTokens: u.CacheReadInputTokens.n}
	case "content_block_start":
		if ev.Index != int64(len(a.blocks)) {
			return malformed("content_block_start for index %d, want %d", ev.Index, len(a.blocks))
		}
		b := block{kind: ev.ContentBlock.Type}
		if b.kind == "tool_use" {
			b.call = llm.ToolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}
		}
		if b.kind == "text" && ev.ContentBlock.Text != "" {
			b.text = append(b.text, ev.ContentBlock.Text...)
			if h != nil {
				h(llm.Event{Kind: llm.EventText, Text: ev.ContentBlock.Text})
			}
		}
		a.blocks = append(a.blocks, b)
	case "content_block_delta":
		b, err := a.open(ev.Index, ev.Type)
		if err != nil {
			return err
		}
		switch ev.Delta.Type {
		case "text_delta":
			if b.kind != "text" {
				return malformed("text_delta for a %s block", b.kind)
			}
			b.text = append(b.text, ev.Delta.Text...)
			if h != nil && ev.Delta.Text != "" {
				h(llm.Event{Kind: llm.EventText, Text: ev.Delta.Text})
			}
		case "input_json_delta":
			if b.kind != "tool_use" {
				return malformed("input_json_delta for a %s block", b.kind)
			}
			b.args = append(b.args, ev.Delta.PartialJSON...)
		}
	case "content_block_stop":
		b, err := a.open(ev.Index, ev.Type)
		if err != nil {
			return err
		}
		b.done = true
		if b.kind == "tool_use" {
			input, err := llm.ParseToolInput(b.args)
			if err != nil {
				return err
			}
			b.call.Input = input
		}
	case "message_delta":
		a.stop = stopReason(sdk.StopReason(ev.Delta.StopReason))
		a.usage.OutputTokens = ev.Usage.OutputTokens.n
		if ev.Usage.InputTokens.valid {
			a.usage.InputTokens = ev.Usage.InputTokens.n
		}
		if ev.Usage.CacheCreationInputTokens.valid {
			a.usage.CacheWriteTokens = ev.Usage.CacheCreationInputTokens.n
		}
		if ev.Usage.CacheReadInputTokens.valid {
			a.usage.CacheReadTokens = ev.Usage.CacheReadInputTokens.n
		}
	case "message_stop":
		for i := range a.blocks {
			if !a.blocks[i].done {
				return malformed("message_stop with content block %d still open", i)
			}
		}
		a.stopped = true
	}
	return nil
}

func (a *accumulator) open(index int64, typ string) (*block, error) {
	if index < 0 || index >= int64(len(a.blocks)) {
		return nil, malformed("%s for unknown content block %d", typ, index)
	}
	b := &a.blocks[index]
	if b.done {
		return nil, malformed("%s for closed content block %d", typ, index)
	}
	return b, nil
}

func (a *accumulator) response() *llm.Response {
	resp := &llm.Response{Provider: llm.ProviderAnthropic, Model: a.model, StopReason: a.stop, Usage: a.usage, Attempts: 1}
	resp.Message.Role = llm.RoleAssistant
	for i := range a.blocks {
		b := &a.blocks[i]
		switch b.kind {
		case "text":
			if len(b.text) > 0 {
				resp.Message.Parts = append(resp.Message.Parts, llm.TextPart(string(b.text)))
			}
		case "tool_use":
			resp.Message.Parts = append(resp.Message.Parts, llm.ToolCallPart(b.call))
		}
	}
	return resp
}
