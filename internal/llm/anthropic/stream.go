package anthropic

import (
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

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

func (a *accumulator) add(ev sdk.MessageStreamEventUnion, h func(llm.Event)) error {
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
		a.usage = llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheWriteTokens: u.CacheCreationInputTokens, CacheReadTokens: u.CacheReadInputTokens}
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
		a.stop = stopReason(ev.Delta.StopReason)
		a.usage.OutputTokens = ev.Usage.OutputTokens
		if ev.Usage.JSON.InputTokens.Valid() {
			a.usage.InputTokens = ev.Usage.InputTokens
		}
		if ev.Usage.JSON.CacheCreationInputTokens.Valid() {
			a.usage.CacheWriteTokens = ev.Usage.CacheCreationInputTokens
		}
		if ev.Usage.JSON.CacheReadInputTokens.Valid() {
			a.usage.CacheReadTokens = ev.Usage.CacheReadInputTokens
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
