package anthropic

import (
	"encoding/json"
	"fmt"
	"strconv"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// request builds the parameters and body of a call that is not streamed
// (see encode). The parameters carry the model and reply cap for the SDK's
// own checks and encode to nothing; the body replaces them
// (option.WithRequestBody), so the SDK still does the HTTP and headers.
func (c *Client) request(req *llm.Request) (sdk.MessageNewParams, option.RequestOption, error) {
	body, err := c.encode(req, false)
	if err != nil {
		return sdk.MessageNewParams{}, nil, err
	}
	model := c.opts.Model
	if req.Model != "" {
		model = req.Model
	}
	maxTokens := int64(c.opts.MaxTokens)
	if req.MaxTokens > 0 {
		maxTokens = int64(req.MaxTokens)
	}
	p := param.Override[sdk.MessageNewParams](json.RawMessage(`{}`))
	p.Model = sdk.Model(model)
	p.MaxTokens = maxTokens
	return p, option.WithRequestBody("application/json", body), nil
}

// encode returns the body of req: the JSON the SDK would encode from the
// converted request (MessageNewParams, fields in its order), assembled from
// pieces each encoded by the SDK once. The messages of a conversation
// (llm.WireCache), its system prompt and its tools are the same from one
// call to the next but for the newest messages, and encoding the whole
// request again by reflection on every call was most of the client's CPU.
// A streamed call's body ends with "stream":true, where the SDK's
// NewStreaming adds it.
func (c *Client) encode(req *llm.Request, stream bool) ([]byte, error) {
	model := c.opts.Model
	if req.Model != "" {
		model = req.Model
	}
	if model == "" {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderAnthropic, Message: "request names no model and the client has no default"}
	}
	maxTokens := int64(c.opts.MaxTokens)
	if req.MaxTokens > 0 {
		maxTokens = int64(req.MaxTokens)
	}
	tools := make([][]byte, len(req.Tools))
	size := 96 + len(model) // the fields besides messages, system and tools
	for i, t := range req.Tools {
		last := 0 // the last tool carries the cache mark
		if i == len(req.Tools)-1 {
			last = 1
		}
		raw, err := c.tools.Encoded(t, last, encodeTools[last])
		if err != nil {
			return nil, err
		}
		tools[i] = raw
		size += len(raw) + 1
	}
	var system []byte
	if req.System != "" {
		var err error
		if system, err = c.system.EncodedText(req.System, encodeSystem); err != nil {
			return nil, err
		}
		size += len(system)
	}
	msgs := make([][]byte, 0, len(req.Messages))
	msgs, n, err := c.msgs.EncodedAll(msgs, req.Messages, encodeMessage)
	if err != nil {
		return nil, err
	}
	size += n

	b := make([]byte, 0, size)
	b = append(b, `{"max_tokens":`...)
	b = strconv.AppendInt(b, maxTokens, 10)
	if len(msgs) > 0 {
		b = append(b, `,"messages":[`...)
		b = llm.AppendJoined(b, msgs)
		b = append(b, ']')
	}
	b = append(b, `,"model":`...)
	b = llm.AppendJSON(b, model)
	if req.Temperature != nil {
		b = append(b, `,"temperature":`...)
		b = llm.AppendJSON(b, *req.Temperature)
	}
	if system != nil {
		b = append(b, `,"system":`...)
		b = append(b, system...)
	}
	if len(tools) > 0 {
		b = append(b, `,"tools":[`...)
		b = llm.AppendJoined(b, tools)
		b = append(b, ']')
	}
	if stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, '}'), nil
}

// encodeMessage encodes m as the SDK encodes its sdk.MessageParam; nil when
// it has nothing to send.
func encodeMessage(m *llm.Message) ([]byte, error) {
	p, ok := messageParam(m)
	if !ok {
		return nil, nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderAnthropic, Message: "encoding a message", Err: err}
	}
	return raw, nil
}

// messageParam converts one message; ok is false when it has nothing to
// send (the API rejects empty messages).
func messageParam(m *llm.Message) (sdk.MessageParam, bool) {
	var blocks []sdk.ContentBlockParamUnion
	for _, part := range m.Parts {
		switch {
		case part.ToolCall != nil:
			input := part.ToolCall.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			blocks = append(blocks, sdk.NewToolUseBlock(part.ToolCall.ID, input, part.ToolCall.Name))
		case part.ToolResult != nil:
			r := part.ToolResult
			tr := &sdk.ToolResultBlockParam{ToolUseID: r.CallID}
			if r.IsError {
				tr.IsError = param.NewOpt(true)
			}
			// The API rejects empty text blocks, so an empty result has no content.
			if r.Content != "" {
				tr.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: r.Content}}}
			}
			blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: tr})
		case part.Text != "":
			// The API rejects empty text blocks.
			blocks = append(blocks, sdk.NewTextBlock(part.Text))
		}
	}
	if len(blocks) == 0 {
		return sdk.MessageParam{}, false
	}
	if m.Role == llm.RoleAssistant {
		return sdk.NewAssistantMessage(blocks...), true
	}
	return sdk.NewUserMessage(blocks...), true
}

// systemParam converts the system prompt; it carries a cache breakpoint.
func systemParam(s string) []sdk.TextBlockParam {
	return []sdk.TextBlockParam{{Text: s, CacheControl: sdk.NewCacheControlEphemeralParam()}}
}

// toolParam converts a tool definition; the last tool carries the cache
// breakpoint.
func toolParam(t llm.ToolDef, last bool) (*sdk.ToolParam, error) {
	schema, err := inputSchema(t.Schema)
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderAnthropic,
			Message: fmt.Sprintf("tool %q: schema is not a JSON object", t.Name), Err: err}
	}
	tool := &sdk.ToolParam{Name: t.Name, InputSchema: schema}
	if t.Description != "" {
		tool.Description = param.NewOpt(t.Description)
	}
	if last {
		tool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	return tool, nil
}

// encodeTool converts and encodes t's definition, with the cache mark
// when it is the request's last tool; encodeTools[1] is that one (the
// variant in the client's llm.ToolCache).
func encodeTool(last bool) func(llm.ToolDef) ([]byte, error) {
	return func(t llm.ToolDef) ([]byte, error) {
		tool, err := toolParam(t, last)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(sdk.ToolUnionParam{OfTool: tool})
		if err != nil {
			return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderAnthropic,
				Message: fmt.Sprintf("tool %q: encoding its definition", t.Name), Err: err}
		}
		return raw, nil
	}
}

var encodeTools = [2]func(llm.ToolDef) ([]byte, error){encodeTool(false), encodeTool(true)}

// encodeSystem encodes the system prompt as the SDK encodes its blocks.
func encodeSystem(s string) ([]byte, error) {
	raw, err := json.Marshal(systemParam(s))
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderAnthropic, Message: "encoding the system prompt", Err: err}
	}
	return raw, nil
}

// inputSchema splits a JSON schema into the SDK's fields.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(raw) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, err
	}
	for k, v := range m {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			if err := json.Unmarshal(v, &s.Required); err != nil {
				return s, err
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = make(map[string]any)
			}
			s.ExtraFields[k] = v
		}
	}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	return s, nil
}
