package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

type wireRequest struct {
	Contents          []content        `json:"contents"`
	SystemInstruction *content         `json:"systemInstruction,omitempty"`
	Tools             []wireTools      `json:"tools,omitempty"`
	GenerationConfig  generationConfig `json:"generationConfig"`
}

type generationConfig struct {
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
}

type wireTools struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// ParametersJSONSchema takes a plain JSON schema, unlike Parameters
	// (an OpenAPI subset), so tool schemas pass unchanged.
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string            `json:"id,omitempty"`
	Name     string            `json:"name"`
	Response map[string]string `json:"response"`
}

// body encodes a provider-neutral request. A tool result travels as a
// functionResponse named after the function of the call it answers, with
// {"output": …} or, for a failure, {"error": …}, as Gemini CLI sends them.
func (c *Client) body(req *llm.Request) ([]byte, error) {
	w := wireRequest{Contents: []content{}, GenerationConfig: generationConfig{MaxOutputTokens: c.opts.MaxTokens, Temperature: req.Temperature}}
	if req.MaxTokens > 0 {
		w.GenerationConfig.MaxOutputTokens = req.MaxTokens
	}
	if req.System != "" {
		w.SystemInstruction = &content{Parts: []part{{Text: req.System}}}
	}
	if len(req.Tools) > 0 {
		var decls []functionDeclaration
		for _, t := range req.Tools {
			schema := t.Schema
			if len(schema) == 0 {
				schema = json.RawMessage(`{"type":"object","properties":{}}`)
			} else if !isObject(schema) {
				return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderGemini,
					Message: fmt.Sprintf("tool %q: schema is not a JSON object", t.Name)}
			}
			decls = append(decls, functionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: schema})
		}
		w.Tools = []wireTools{{FunctionDeclarations: decls}}
	}
	names := map[string]string{} // call id → function name, from the calls so far
	for i, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			ct := content{Role: "model"}
			if text := m.Text(); text != "" {
				ct.Parts = append(ct.Parts, part{Text: text})
			}
			for _, call := range m.ToolCalls() {
				names[call.ID] = call.Name
				args := call.Input
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				ct.Parts = append(ct.Parts, part{FunctionCall: &functionCall{ID: call.ID, Name: call.Name, Args: args}})
			}
			if len(ct.Parts) > 0 {
				w.Contents = append(w.Contents, ct)
			}
			continue
		}
		ct := content{Role: "user"}
		for _, p := range m.Parts {
			r := p.ToolResult
			if r == nil {
				continue
			}
			name, ok := names[r.CallID]
			if !ok {
				return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderGemini,
					Message: fmt.Sprintf("message %d: tool result for call %q, which no earlier message made", i, r.CallID)}
			}
			resp := map[string]string{"output": r.Content}
			if r.IsError {
				resp = map[string]string{"error": r.Content}
			}
			ct.Parts = append(ct.Parts, part{FunctionResponse: &functionResponse{ID: r.CallID, Name: name, Response: resp}})
		}
		if text := m.Text(); text != "" {
			ct.Parts = append(ct.Parts, part{Text: text})
		}
		if len(ct.Parts) > 0 {
			w.Contents = append(w.Contents, ct)
		}
	}
	return json.Marshal(w)
}

func isObject(raw json.RawMessage) bool {
	var v map[string]any
	return json.Unmarshal(raw, &v) == nil && v != nil
}
