package anthropic

import (
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// params converts a provider-neutral request. The system prompt and the
// last tool definition carry cache_control breakpoints: tools and system
// form the stable prefix of every turn of a task, so caching them makes
// later turns cheaper and faster.
func (c *Client) params(req *llm.Request) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{
		Model:     sdk.Model(c.opts.Model),
		MaxTokens: int64(c.opts.MaxTokens),
	}
	if req.Model != "" {
		p.Model = sdk.Model(req.Model)
	}
	if p.Model == "" {
		return p, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderAnthropic, Message: "request names no model and the client has no default"}
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	if len(req.Tools) > 0 {
		p.Tools = make([]sdk.ToolUnionParam, 0, len(req.Tools))
	}
	for i, t := range req.Tools {
		tool, err := c.tools.param(t, i == len(req.Tools)-1)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tool})
	}
	for _, m := range req.Messages {
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
			continue
		}
		switch m.Role {
		case llm.RoleAssistant:
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
		default:
			p.Messages = append(p.Messages, sdk.NewUserMessage(blocks...))
		}
	}
	return p, nil
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

// toolCache holds each tool definition converted and encoded once: a task
// sends the same tools with every call, and converting their schemas was
// most of the work of building a request.
type toolCache struct {
	mu sync.Mutex
	m  [2]map[string]*cachedTool // [last]: by name
}

// maxCachedTools bounds the cache; past it, it starts again.
const maxCachedTools = 512

type cachedTool struct {
	desc, schema string
	tool         *sdk.ToolParam // encoded: shared by the requests, read only
}

// param returns t converted, as the request's last tool or not.
func (c *toolCache) param(t llm.ToolDef, last bool) (*sdk.ToolParam, error) {
	k := 0
	if last {
		k = 1
	}
	c.mu.Lock()
	e := c.m[k][t.Name]
	c.mu.Unlock()
	if e != nil && e.desc == t.Description && e.schema == string(t.Schema) {
		return e.tool, nil
	}
	tool, err := toolParam(t, last)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(tool)
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderAnthropic,
			Message: fmt.Sprintf("tool %q: encoding its definition", t.Name), Err: err}
	}
	encoded := param.Override[sdk.ToolParam](json.RawMessage(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[k] == nil || len(c.m[k]) >= maxCachedTools {
		c.m[k] = map[string]*cachedTool{}
	}
	c.m[k][t.Name] = &cachedTool{desc: t.Description, schema: string(t.Schema), tool: &encoded}
	return &encoded, nil
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
