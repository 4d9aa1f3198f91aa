package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// geminiWireRequest is the part of a generateContent request the server
// reads. Gemini CLI also sends generationConfig.thinkingConfig, topP and
// topK; they are ignored.
type geminiWireRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			// ParametersJSONSchema is the plain JSON-schema form Gemini
			// CLI sends instead of the OpenAPI-subset Parameters.
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text string `json:"text"`
	// Thought marks a thinking summary, which is not conversation text.
	Thought      bool `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// parseGeminiRequest parses a generateContent request body for model
// (taken from the URL path). Consecutive contents of one role merge into
// one message. A function response's call id is its id, or its function's
// name when it has none (the Gemini API does not require ids).
func parseGeminiRequest(body []byte, model string, stream bool) (*Request, error) {
	var w geminiWireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("parsing generateContent request: %w", err)
	}
	r := &Request{API: APIGemini, Model: model, MaxTokens: w.GenerationConfig.MaxOutputTokens, Stream: stream}
	if si := w.SystemInstruction; si != nil {
		var texts []string
		for _, p := range si.Parts {
			texts = append(texts, p.Text)
		}
		r.System = strings.Join(texts, "\n")
	}
	for i, c := range w.Contents {
		var role llm.Role
		switch c.Role {
		case "user", "":
			role = llm.RoleUser
		case "model":
			role = llm.RoleAssistant
		default:
			return nil, fmt.Errorf("parsing generateContent request: contents[%d]: unknown role %q", i, c.Role)
		}
		var parts []llm.Part
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				fc := p.FunctionCall
				id := fc.ID
				if id == "" {
					id = fc.Name
				}
				args := fc.Args
				if len(args) == 0 || string(args) == "null" {
					args = json.RawMessage("{}")
				}
				parts = append(parts, llm.ToolCallPart(llm.ToolCall{ID: id, Name: fc.Name, Input: args}))
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				id := fr.ID
				if id == "" {
					id = fr.Name
				}
				content, isErr := geminiResponseText(fr.Response)
				parts = append(parts, llm.ToolResultPart(llm.ToolResult{CallID: id, Content: content, IsError: isErr}))
			case p.Thought:
			case p.Text != "":
				parts = append(parts, llm.TextPart(p.Text))
			}
		}
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Parts = append(r.Messages[n-1].Parts, parts...)
		} else {
			r.Messages = append(r.Messages, llm.Message{Role: role, Parts: parts})
		}
	}
	for _, t := range w.Tools {
		for _, fd := range t.FunctionDeclarations {
			schema := fd.ParametersJSONSchema
			if len(schema) == 0 {
				schema = fd.Parameters
			}
			r.Tools = append(r.Tools, llm.ToolDef{Name: fd.Name, Description: fd.Description, Schema: schema})
		}
	}
	return r, nil
}

// geminiResponseText is the text of a functionResponse's response object:
// its "output" (or "error", which marks a failure) when that is a string,
// else the object's JSON.
func geminiResponseText(raw json.RawMessage) (string, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return string(raw), false
	}
	for _, key := range []string{"output", "error"} {
		var s string
		if v, ok := fields[key]; ok && json.Unmarshal(v, &s) == nil {
			return s, key == "error"
		}
	}
	_, isErr := fields["error"]
	return string(raw), isErr
}
