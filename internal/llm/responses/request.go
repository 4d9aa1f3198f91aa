package responses

import (
	"encoding/json"
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

type wireRequest struct {
	Model           string     `json:"model"`
	Instructions    string     `json:"instructions,omitempty"`
	Input           []any      `json:"input"`
	Tools           []wireTool `json:"tools,omitempty"`
	MaxOutputTokens int        `json:"max_output_tokens,omitempty"`
	Temperature     *float64   `json:"temperature,omitempty"`
	Stream          bool       `json:"stream,omitempty"`
	// Store is false: every request carries the whole conversation, so
	// the service keeps nothing between calls.
	Store bool `json:"store"`
}

type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type messageItem struct {
	Type    string        `json:"type"`
	Role    string        `json:"role"`
	Content []textContent `json:"content"`
}

type callItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type outputItem struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// body encodes a provider-neutral request. The system prompt travels as
// instructions; tool results become function_call_output items placed
// before any text of the same user turn, right after the calls they
// answer. The API caches prompt prefixes itself, so nothing is marked.
func (c *Client) body(req *llm.Request, stream bool) ([]byte, error) {
	w := wireRequest{Model: c.opts.Model, Instructions: req.System, Stream: stream, Temperature: req.Temperature,
		MaxOutputTokens: c.opts.MaxTokens, Input: []any{}}
	if req.Model != "" {
		w.Model = req.Model
	}
	if w.Model == "" {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI, Message: "request names no model and the client has no default"}
	}
	if req.MaxTokens > 0 {
		w.MaxOutputTokens = req.MaxTokens
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !isObject(schema) {
			return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI,
				Message: fmt.Sprintf("tool %q: schema is not a JSON object", t.Name)}
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema})
	}
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			if text := m.Text(); text != "" {
				w.Input = append(w.Input, messageItem{Type: "message", Role: "assistant", Content: []textContent{{Type: "output_text", Text: text}}})
			}
			for _, call := range m.ToolCalls() {
				args := string(call.Input)
				if args == "" {
					args = "{}"
				}
				w.Input = append(w.Input, callItem{Type: "function_call", CallID: call.ID, Name: call.Name, Arguments: args})
			}
			continue
		}
		for _, p := range m.Parts {
			if r := p.ToolResult; r != nil {
				out := r.Content
				if r.IsError {
					// The API has no error flag for tool outputs.
					out = "Error: " + out
				}
				w.Input = append(w.Input, outputItem{Type: "function_call_output", CallID: r.CallID, Output: out})
			}
		}
		if text := m.Text(); text != "" {
			w.Input = append(w.Input, messageItem{Type: "message", Role: "user", Content: []textContent{{Type: "input_text", Text: text}}})
		}
	}
	return json.Marshal(w)
}

func isObject(raw json.RawMessage) bool {
	var v map[string]any
	return json.Unmarshal(raw, &v) == nil && v != nil
}
