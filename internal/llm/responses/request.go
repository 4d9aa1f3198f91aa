package responses

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

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
//
// The body is assembled from pieces each encoded once: the items of a
// conversation's messages (llm.WireCache), its instructions and tools are
// the same from one call to the next but for the newest messages. It is
// byte for byte what encoding/json made of the whole request (the test
// keeps that encoding as its reference).
func (c *Client) body(req *llm.Request, stream bool) ([]byte, error) {
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
	size := 128 + len(model)
	tools := make([][]byte, len(req.Tools))
	for i, t := range req.Tools {
		raw, err := c.tools.Encoded(t, 0, encodeTool)
		if err != nil {
			return nil, err
		}
		tools[i] = raw
		size += len(raw) + 1
	}
	var instructions []byte
	if req.System != "" {
		raw, err := c.system.EncodedText(req.System, encodeInstructions)
		if err != nil {
			return nil, err
		}
		instructions = raw
		size += len(raw)
	}
	items := make([][]byte, 0, len(req.Messages))
	items, n, err := c.msgs.EncodedAll(items, req.Messages, encodeItems)
	if err != nil {
		return nil, err
	}
	size += n

	b := make([]byte, 0, size)
	b = append(b, `{"model":`...)
	b = llm.AppendJSON(b, model)
	if instructions != nil {
		b = append(b, `,"instructions":`...)
		b = append(b, instructions...)
	}
	b = append(b, `,"input":[`...)
	b = llm.AppendJoined(b, items)
	b = append(b, ']')
	if len(tools) > 0 {
		b = append(b, `,"tools":[`...)
		b = llm.AppendJoined(b, tools)
		b = append(b, ']')
	}
	if maxTokens != 0 {
		b = append(b, `,"max_output_tokens":`...)
		b = strconv.AppendInt(b, int64(maxTokens), 10)
	}
	if req.Temperature != nil {
		b = append(b, `,"temperature":`...)
		b = llm.AppendJSON(b, *req.Temperature)
	}
	if stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, `,"store":false}`...), nil
}

// encodeInstructions encodes the system prompt, the instructions string.
func encodeInstructions(s string) ([]byte, error) { return json.Marshal(s) }

// encodeItems encodes the input items one message becomes, separated by
// commas; nil when there are none.
func encodeItems(m *llm.Message) ([]byte, error) {
	var items []any
	switch m.Role {
	case llm.RoleAssistant:
		if text := m.Text(); text != "" {
			items = append(items, messageItem{Type: "message", Role: "assistant", Content: []textContent{{Type: "output_text", Text: text}}})
		}
		for _, call := range m.ToolCalls() {
			args := string(call.Input)
			if args == "" {
				args = "{}"
			}
			items = append(items, callItem{Type: "function_call", CallID: call.ID, Name: call.Name, Arguments: args})
		}
	default:
		for _, p := range m.Parts {
			if r := p.ToolResult; r != nil {
				out := r.Content
				if r.IsError {
					// The API has no error flag for tool outputs.
					out = "Error: " + out
				}
				items = append(items, outputItem{Type: "function_call_output", CallID: r.CallID, Output: out})
			}
		}
		if text := m.Text(); text != "" {
			items = append(items, messageItem{Type: "message", Role: "user", Content: []textContent{{Type: "input_text", Text: text}}})
		}
	}
	var b []byte
	for _, it := range items {
		raw, err := json.Marshal(it)
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

// encodeTool checks and encodes t's definition.
func encodeTool(t llm.ToolDef) ([]byte, error) {
	schema, err := llm.ObjectSchema(t, llm.ProviderOpenAI)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(wireTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema})
	if err != nil {
		return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderOpenAI,
			Message: fmt.Sprintf("tool %q: encoding its definition", t.Name), Err: err}
	}
	return raw, nil
}
