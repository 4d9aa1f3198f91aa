package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// request builds the parameters and body of a call. The body is the JSON the
// SDK would encode from the converted request (ChatCompletionNewParams,
// fields in its order), assembled from pieces each encoded by the SDK once:
// the messages of a conversation (llm.WireCache), its system prompt and its
// tools are the same from one call to the next but for the newest messages,
// and encoding the whole request by reflection on every call was most of the
// client's CPU. The parameters encode to nothing and the body replaces them
// (option.WithRequestBody), so the SDK still does the HTTP, headers and
// stream decoding.
func (c *Client) request(req *llm.Request, stream bool) (oa.ChatCompletionNewParams, option.RequestOption, error) {
	body, err := c.encode(req, stream)
	if err != nil {
		return oa.ChatCompletionNewParams{}, nil, err
	}
	return param.Override[oa.ChatCompletionNewParams](json.RawMessage(`{}`)), option.WithRequestBody("application/json", body), nil
}

// encode returns the body of req. Tool results become "tool" messages
// placed before any text of the same user turn, as the API requires them
// right after the assistant message that made the calls. OpenAI caches
// prompt prefixes automatically, so nothing is marked.
func (c *Client) encode(req *llm.Request, stream bool) ([]byte, error) {
	model := c.opts.Model
	if req.Model != "" {
		model = req.Model
	}
	if model == "" {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI, Message: "request names no model and the client has no default"}
	}
	maxTokens := c.opts.MaxTokens
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	tools := make([][]byte, len(req.Tools))
	size := 128 + len(model)
	for i, t := range req.Tools {
		raw, err := c.tools.Encoded(t, 0, encodeTool)
		if err != nil {
			return nil, err
		}
		tools[i] = raw
		size += len(raw) + 1
	}
	msgs := make([][]byte, 0, len(req.Messages)+1)
	if req.System != "" {
		raw, err := c.system.EncodedText(req.System, encodeSystem)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, raw)
		size += len(raw) + 1
	}
	msgs, n, err := c.msgs.EncodedAll(msgs, req.Messages, encodeMessage)
	if err != nil {
		return nil, err
	}
	size += n

	b := make([]byte, 0, size)
	b = append(b, '{')
	if len(msgs) > 0 {
		b = append(b, `"messages":[`...)
		b = llm.AppendJoined(b, msgs)
		b = append(b, "],"...)
	}
	b = append(b, `"model":`...)
	b = appendJSON(b, model)
	b = append(b, `,"max_completion_tokens":`...)
	b = strconv.AppendInt(b, int64(maxTokens), 10)
	if req.Temperature != nil {
		b = append(b, `,"temperature":`...)
		b = appendJSON(b, *req.Temperature)
	}
	if stream {
		b = append(b, `,"stream_options":{"include_usage":true}`...)
	}
	if len(tools) > 0 {
		b = append(b, `,"tools":[`...)
		b = llm.AppendJoined(b, tools)
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// appendJSON appends v encoded as the SDK encodes it: as encoding/json
// does, but without escaping HTML characters.
func appendJSON(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // a string or a float64: only NaN and infinities fail
		return append(b, "null"...)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// encodeMessage encodes the Chat Completions messages m becomes, as the SDK
// encodes them, separated by commas; nil when there are none.
func encodeMessage(m *llm.Message) ([]byte, error) {
	var b []byte
	for _, p := range messageParams(m) {
		// MarshalJSON, not json.Marshal: the SDK does not escape HTML.
		raw, err := p.MarshalJSON()
		if err != nil {
			return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI, Message: "encoding a message", Err: err}
		}
		if b != nil {
			b = append(b, ',')
		}
		b = append(b, raw...)
	}
	return b, nil
}

// encodeSystem encodes the system prompt as the SDK encodes a system message.
func encodeSystem(s string) ([]byte, error) {
	m := oa.SystemMessage(s)
	raw, err := m.MarshalJSON()
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI, Message: "encoding the system prompt", Err: err}
	}
	return raw, nil
}

// messageParams converts one message.
func messageParams(m *llm.Message) []oa.ChatCompletionMessageParamUnion {
	if m.Role == llm.RoleAssistant {
		return []oa.ChatCompletionMessageParamUnion{assistantMessage(m)}
	}
	var out []oa.ChatCompletionMessageParamUnion
	for _, part := range m.Parts {
		if r := part.ToolResult; r != nil {
			content := r.Content
			if r.IsError {
				// Chat Completions has no error flag for tool results.
				content = "Error: " + content
			}
			out = append(out, oa.ToolMessage(content, r.CallID))
		}
	}
	if text := m.Text(); text != "" {
		out = append(out, oa.UserMessage(text))
	}
	return out
}

func assistantMessage(m *llm.Message) oa.ChatCompletionMessageParamUnion {
	a := &oa.ChatCompletionAssistantMessageParam{}
	if text := m.Text(); text != "" {
		a.Content.OfString = param.NewOpt(text)
	}
	for _, call := range m.ToolCalls() {
		args := string(call.Input)
		if args == "" {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, oa.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &oa.ChatCompletionMessageFunctionToolCallParam{
				ID:       call.ID,
				Function: oa.ChatCompletionMessageFunctionToolCallFunctionParam{Name: call.Name, Arguments: args},
			},
		})
	}
	return oa.ChatCompletionMessageParamUnion{OfAssistant: a}
}

// toolParam converts a tool definition.
func toolParam(t llm.ToolDef) (oa.ChatCompletionToolUnionParam, error) {
	params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	if len(t.Schema) > 0 {
		params = nil
		if err := json.Unmarshal(t.Schema, &params); err != nil {
			return oa.ChatCompletionToolUnionParam{}, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI,
				Message: fmt.Sprintf("tool %q: schema is not a JSON object", t.Name), Err: err}
		}
	}
	def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
	if t.Description != "" {
		def.Description = param.NewOpt(t.Description)
	}
	return oa.ChatCompletionFunctionTool(def), nil
}

// encodeTool converts and encodes t's definition.
func encodeTool(t llm.ToolDef) ([]byte, error) {
	tool, err := toolParam(t)
	if err != nil {
		return nil, err
	}
	raw, err := tool.MarshalJSON()
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI,
			Message: fmt.Sprintf("tool %q: encoding its definition", t.Name), Err: err}
	}
	return raw, nil
}
