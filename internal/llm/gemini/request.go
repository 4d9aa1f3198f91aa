package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

type generationConfig struct {
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
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
//
// The body is assembled from pieces each encoded once: the contents of a
// conversation (llm.WireCache), its system prompt and tool declarations are
// the same from one call to the next but for the newest messages. It is
// byte for byte what encoding/json made of the whole request (the
// test keeps that encoding as its reference).
func (c *Client) body(req *llm.Request) ([]byte, error) {
	var decls [][]byte
	size := 128
	for _, t := range req.Tools {
		raw, err := c.tools.Encoded(t, 0, encodeTool)
		if err != nil {
			return nil, err
		}
		decls = append(decls, raw)
		size += len(raw) + 1
	}
	var system []byte
	if req.System != "" {
		raw, err := c.system.EncodedText(req.System, encodeSystem)
		if err != nil {
			return nil, err
		}
		system = raw
		size += len(raw)
	}
	contents := make([][]byte, 0, len(req.Messages))
	names := map[string]string{} // call id → function name, from the calls so far
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role == llm.RoleAssistant {
			for _, p := range m.Parts {
				if p.ToolCall != nil {
					names[p.ToolCall.ID] = p.ToolCall.Name
				}
			}
		} else {
			// A result's encoding holds the name of the function it
			// answers, so the names travel with the message into the cache
			// (as calls appended to its parts) and key it too.
			var withNames []llm.Part
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
				if withNames == nil {
					withNames = append(make([]llm.Part, 0, 2*len(m.Parts)), m.Parts...)
				}
				withNames = append(withNames, llm.ToolCallPart(llm.ToolCall{ID: r.CallID, Name: name}))
			}
			if withNames != nil {
				m = &llm.Message{Role: m.Role, Parts: withNames}
			}
		}
		raw, err := c.msgs.Encoded(m, encodeContent)
		if err != nil {
			return nil, err
		}
		if raw != nil {
			contents = append(contents, raw)
			size += len(raw) + 1
		}
	}
	maxTokens := c.opts.MaxTokens
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	gc, err := json.Marshal(generationConfig{MaxOutputTokens: maxTokens, Temperature: req.Temperature})
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderGemini, Message: "encoding the generation config", Err: err}
	}

	b := make([]byte, 0, size+len(gc))
	b = append(b, `{"contents":[`...)
	b = llm.AppendJoined(b, contents)
	b = append(b, ']')
	if system != nil {
		b = append(b, `,"systemInstruction":`...)
		b = append(b, system...)
	}
	if len(decls) > 0 {
		b = append(b, `,"tools":[{"functionDeclarations":[`...)
		b = llm.AppendJoined(b, decls)
		b = append(b, "]}]"...)
	}
	b = append(b, `,"generationConfig":`...)
	b = append(b, gc...)
	return append(b, '}'), nil
}

// encodeSystem encodes the system instruction.
func encodeSystem(s string) ([]byte, error) {
	raw, err := json.Marshal(content{Parts: []part{{Text: s}}})
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderGemini, Message: "encoding the system prompt", Err: err}
	}
	return raw, nil
}

// encodeContent encodes one message as a Gemini content, nil when it has
// nothing to send. A user message's tool calls (see body) name the
// functions its results answer; they are not sent.
func encodeContent(m *llm.Message) ([]byte, error) {
	var ct content
	switch m.Role {
	case llm.RoleAssistant:
		ct.Role = "model"
		if text := m.Text(); text != "" {
			ct.Parts = append(ct.Parts, part{Text: text})
		}
		for _, call := range m.ToolCalls() {
			args := call.Input
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			ct.Parts = append(ct.Parts, part{FunctionCall: &functionCall{ID: call.ID, Name: call.Name, Args: args}})
		}
	default:
		ct.Role = "user"
		names := map[string]string{}
		for _, call := range m.ToolCalls() {
			names[call.ID] = call.Name
		}
		for _, p := range m.Parts {
			r := p.ToolResult
			if r == nil {
				continue
			}
			resp := map[string]string{"output": r.Content}
			if r.IsError {
				resp = map[string]string{"error": r.Content}
			}
			ct.Parts = append(ct.Parts, part{FunctionResponse: &functionResponse{ID: r.CallID, Name: names[r.CallID], Response: resp}})
		}
		if text := m.Text(); text != "" {
			ct.Parts = append(ct.Parts, part{Text: text})
		}
	}
	if len(ct.Parts) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(ct)
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderGemini, Message: "encoding a message", Err: err}
	}
	return raw, nil
}

// encodeTool checks and encodes t's declaration.
func encodeTool(t llm.ToolDef) ([]byte, error) {
	schema, err := llm.ObjectSchema(t, llm.ProviderGemini)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(functionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: schema})
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderGemini,
			Message: fmt.Sprintf("tool %q: encoding its declaration", t.Name), Err: err}
	}
	return raw, nil
}
