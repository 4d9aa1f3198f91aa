package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// responsesWireRequest is the part of a Responses API request the server
// reads. Codex sends much more (reasoning, include, prompt_cache_key,
// client_metadata); it is ignored.
type responsesWireRequest struct {
	Model           string          `json:"model"`
	Instructions    string          `json:"instructions"`
	Input           json.RawMessage `json:"input"`
	Tools           []responsesTool `json:"tools"`
	MaxOutputTokens int             `json:"max_output_tokens"`
	Stream          bool            `json:"stream"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Tools are the members of a "namespace" tool (Codex groups its
	// multi-agent tools so).
	Tools []responsesTool `json:"tools"`
}

// responsesItem is one input item: a message, a function call or its
// output, or a custom (free-form) tool call or its output. Other item
// types (reasoning, web_search_call, …) are skipped.
type responsesItem struct {
	Type      string        `json:"type"`
	Role      string        `json:"role"`
	Content   *textOrBlocks `json:"content"`
	CallID    string        `json:"call_id"`
	Name      string        `json:"name"`
	Arguments string        `json:"arguments"`
	// Input is a custom tool call's free-form input.
	Input  *string       `json:"input"`
	Output *textOrBlocks `json:"output"`
}

// parseResponsesRequest parses a Responses API request body. System and
// developer messages become the system prompt (after instructions);
// consecutive items of one author merge into one message, so that a reply
// of text and function calls is one assistant turn and its outputs one
// user turn, and step counting is the same as for the other APIs.
func parseResponsesRequest(body []byte) (*Request, error) {
	var w responsesWireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("parsing responses request: %w", err)
	}
	r := &Request{API: APIResponses, Model: w.Model, MaxTokens: w.MaxOutputTokens, Stream: w.Stream}
	var system []string
	if w.Instructions != "" {
		system = append(system, w.Instructions)
	}
	var items []responsesItem
	switch {
	case len(w.Input) == 0 || string(w.Input) == "null":
	case w.Input[0] == '"':
		var s string
		if err := json.Unmarshal(w.Input, &s); err != nil {
			return nil, fmt.Errorf("parsing responses request: input: %w", err)
		}
		items = []responsesItem{{Type: "message", Role: "user", Content: &textOrBlocks{text: s}}}
	default:
		if err := json.Unmarshal(w.Input, &items); err != nil {
			return nil, fmt.Errorf("parsing responses request: input: %w", err)
		}
	}
	for i, it := range items {
		var role llm.Role
		var part llm.Part
		switch it.Type {
		case "message", "":
			text := ""
			if it.Content != nil {
				text = it.Content.joined()
			}
			switch it.Role {
			case "system", "developer":
				system = append(system, text)
				continue
			case "user", "assistant":
				role, part = llm.Role(it.Role), llm.TextPart(text)
			default:
				return nil, fmt.Errorf("parsing responses request: input[%d]: unknown role %q", i, it.Role)
			}
		case "function_call":
			role, part = llm.RoleAssistant, llm.ToolCallPart(llm.ToolCall{ID: it.CallID, Name: it.Name, Input: json.RawMessage(it.Arguments)})
		case "custom_tool_call":
			input := ""
			if it.Input != nil {
				input = *it.Input
			}
			role, part = llm.RoleAssistant, llm.ToolCallPart(llm.ToolCall{ID: it.CallID, Name: it.Name, Input: mustJSON(obj{"input": input})})
		case "function_call_output", "custom_tool_call_output":
			out := ""
			if it.Output != nil {
				out = it.Output.joined()
			}
			role, part = llm.RoleUser, llm.ToolResultPart(llm.ToolResult{CallID: it.CallID, Content: out})
		default:
			continue
		}
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Parts = append(r.Messages[n-1].Parts, part)
		} else {
			r.Messages = append(r.Messages, llm.Message{Role: role, Parts: []llm.Part{part}})
		}
	}
	r.System = strings.Join(system, "\n")
	r.Tools = responsesTools(w.Tools, r.Tools)
	return r, nil
}

func responsesTools(ts []responsesTool, out []llm.ToolDef) []llm.ToolDef {
	for _, t := range ts {
		switch t.Type {
		case "function", "custom":
			out = append(out, llm.ToolDef{Name: t.Name, Description: t.Description, Schema: t.Parameters})
		case "namespace":
			out = responsesTools(t.Tools, out)
		}
	}
	return out
}
