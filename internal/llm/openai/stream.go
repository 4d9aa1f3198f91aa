package openai

import (
	oa "github.com/openai/openai-go/v3"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// maxToolCalls bounds the tool-call index a chunk may name, so a hostile
// or broken server cannot make the accumulator allocate without limit.
const maxToolCalls = 128

// accumulator builds a response from Chat Completions chunks.
type accumulator struct {
	model    string
	text     []byte
	calls    []pendingCall
	finish   string
	finished bool
	usage    llm.Usage
}

type pendingCall struct {
	id, name string
	args     []byte
}

func (a *accumulator) add(ch oa.ChatCompletionChunk, h func(llm.Event)) error {
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.JSON.Usage.Valid() && ch.Usage.JSON.PromptTokens.Valid() {
		a.usage = usage(ch.Usage)
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue // we ask for one choice
		}
		d := choice.Delta
		if d.Content != "" {
			a.text = append(a.text, d.Content...)
			if h != nil {
				h(llm.Event{Kind: llm.EventText, Text: d.Content})
			}
		}
		for _, tc := range d.ToolCalls {
			if tc.ID != "" && tc.Index < int64(len(a.calls)) && a.calls[tc.Index].id != "" && a.calls[tc.Index].id != tc.ID {
				// Some compatible servers send every complete call with index 0.
				tc.Index = int64(len(a.calls))
			}
			if tc.Index < 0 || tc.Index >= maxToolCalls || tc.Index > int64(len(a.calls)) {
				return malformed("tool call delta for index %d with %d calls so far", tc.Index, len(a.calls))
			}
			if tc.Index == int64(len(a.calls)) {
				a.calls = append(a.calls, pendingCall{})
			}
			pc := &a.calls[tc.Index]
			if tc.ID != "" {
				pc.id = tc.ID
			}
			if tc.Function.Name != "" {
				pc.name += tc.Function.Name
			}
			pc.args = append(pc.args, tc.Function.Arguments...)
		}
		if choice.FinishReason != "" {
			a.finish = choice.FinishReason
			a.finished = true
		}
	}
	return nil
}

// response checks the stream was complete and returns the reply.
func (a *accumulator) response() (*llm.Response, error) {
	if !a.finished {
		return nil, &llm.Error{Class: llm.ClassNetwork, Message: "stream ended before a finish_reason"}
	}
	resp := &llm.Response{Provider: llm.ProviderOpenAI, Model: a.model, StopReason: finishReason(a.finish), Usage: a.usage, Attempts: 1}
	resp.Message.Role = llm.RoleAssistant
	if len(a.text) > 0 {
		resp.Message.Parts = append(resp.Message.Parts, llm.TextPart(string(a.text)))
	}
	for i, pc := range a.calls {
		if pc.id == "" || pc.name == "" {
			return nil, malformed("tool call %d has no id or name", i)
		}
		input, err := llm.ParseToolInput(pc.args)
		if err != nil {
			return nil, err
		}
		resp.Message.Parts = append(resp.Message.Parts, llm.ToolCallPart(llm.ToolCall{ID: pc.id, Name: pc.name, Input: input}))
	}
	resp.StopReason = stopWithCalls(resp.StopReason, len(a.calls))
	return resp, nil
}

// stopWithCalls corrects servers (Ollama among them) that finish a reply
// holding tool calls with "stop" instead of "tool_calls".
func stopWithCalls(r llm.StopReason, calls int) llm.StopReason {
	if calls > 0 && r == llm.StopEndTurn {
		return llm.StopToolUse
	}
	return r
}

func usage(u oa.CompletionUsage) llm.Usage {
	cached := u.PromptTokensDetails.CachedTokens
	return llm.Usage{
		InputTokens:     max(0, u.PromptTokens-cached),
		OutputTokens:    u.CompletionTokens,
		CacheReadTokens: cached,
	}
}

func finishReason(r string) llm.StopReason {
	switch r {
	case "stop":
		return llm.StopEndTurn
	case "tool_calls", "function_call":
		return llm.StopToolUse
	case "length":
		return llm.StopMaxTokens
	case "content_filter":
		return llm.StopRefusal
	}
	return llm.StopOther
}
