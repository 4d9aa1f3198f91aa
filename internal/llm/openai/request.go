package openai

import (
	"encoding/json"
	"fmt"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// params converts a provider-neutral request. Tool results become "tool"
// messages placed before any text of the same user turn, as the API
// requires them right after the assistant message that made the calls.
// OpenAI caches prompt prefixes automatically, so nothing is marked.
func (c *Client) params(req *llm.Request, stream bool) (oa.ChatCompletionNewParams, error) {
	p := oa.ChatCompletionNewParams{Model: shared.ChatModel(c.opts.Model)}
	if req.Model != "" {
		p.Model = req.Model
	}
	if p.Model == "" {
		return p, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI, Message: "request names no model and the client has no default"}
	}
	maxTokens := c.opts.MaxTokens
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	p.MaxCompletionTokens = param.NewOpt(int64(maxTokens))
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if stream {
		p.StreamOptions = oa.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, oa.SystemMessage(req.System))
	}
	for _, t := range req.Tools {
		params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(t.Schema) > 0 {
			params = nil
			if err := json.Unmarshal(t.Schema, &params); err != nil {
				return p, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI,
					Message: fmt.Sprintf("tool %q: schema is not a JSON object", t.Name), Err: err}
			}
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, oa.ChatCompletionFunctionTool(def))
	}
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			p.Messages = append(p.Messages, assistantMessage(m))
			continue
		}
		for _, part := range m.Parts {
			if r := part.ToolResult; r != nil {
				content := r.Content
				if r.IsError {
					// Chat Completions has no error flag for tool results.
					content = "Error: " + content
				}
				p.Messages = append(p.Messages, oa.ToolMessage(content, r.CallID))
			}
		}
		if text := m.Text(); text != "" {
			p.Messages = append(p.Messages, oa.UserMessage(text))
		}
	}
	return p, nil
}

func assistantMessage(m llm.Message) oa.ChatCompletionMessageParamUnion {
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
