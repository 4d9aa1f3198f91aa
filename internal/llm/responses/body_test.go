package responses

import (
	"encoding/json"
	"testing"

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

// bodyUncached is the body as built before the cache: whole, by
// encoding/json. The cached body must equal it byte for byte.
//
// It encodes a provider-neutral request. The system prompt travels as
// instructions; tool results become function_call_output items placed
// before any text of the same user turn, right after the calls they
// answer. The API caches prompt prefixes itself, so nothing is marked.
func (c *Client) bodyUncached(req *llm.Request, stream bool) ([]byte, error) {
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
		schema, err := llm.ObjectSchema(t, llm.ProviderOpenAI)
		if err != nil {
			return nil, err
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

// richConversation has every kind of content the client sends.
func richConversation() *llm.Request {
	temp := 0.25
	return &llm.Request{
		Model:       "gpt-<other>&x",
		MaxTokens:   1234,
		Temperature: &temp,
		System:      "Be careful with <tags> & \"quotes\"\u2028and\tcontrol\x01bytes.",
		Tools: []llm.ToolDef{
			{Name: "read_file", Description: "Read <a> file & more.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "noop"},
			{Name: "bash", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"additionalProperties":false}`)},
		},
		Messages: []llm.Message{
			llm.UserText("Fix <b>the</b> bug & explain\u2028why. \xff invalid"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.TextPart("Reading two files."),
				llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "read_file", Input: json.RawMessage(`{"path": "a<b>.go"}`)}),
				llm.ToolCallPart(llm.ToolCall{ID: "c2", Name: "noop"}),
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{
				llm.TextPart("And then?"),
				llm.ToolResultPart(llm.ToolResult{CallID: "c1", Content: "package a\n\nfunc f() string { return \"<ok>\" }\n"}),
				llm.ToolResultPart(llm.ToolResult{CallID: "c2", IsError: true, Content: "no such tool & no luck"}),
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{llm.TextPart("")}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "c3", Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)})}},
			{Role: llm.RoleUser, Parts: []llm.Part{llm.ToolResultPart(llm.ToolResult{CallID: "c3"})}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("Yes: ünïcödé ✓ and emoji 🚀.")}},
		},
	}
}

// The body built from cached pieces is byte for byte the encoding of the
// whole request, streamed or not: for every kind of content, as the
// conversation grows, when a message is changed in place after it was sent,
// and when there is nothing optional.
func TestBodyEncodesAsWhole(t *testing.T) {
	t.Parallel()
	c, err := New(Options{APIKey: "k", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, req *llm.Request) {
		t.Helper()
		for _, stream := range []bool{true, false} {
			want, err := c.bodyUncached(req, stream)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				got, err := c.body(req, stream)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if string(got) != string(want) {
					t.Errorf("%s, stream %v, call %d:\n got %s\nwant %s", what, stream, i+1, got, want)
				}
			}
		}
	}
	req := richConversation()
	check("rich conversation", req)
	grown := *req
	grown.Messages = append(append([]llm.Message(nil), req.Messages...),
		llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "c4", Name: "read_file", Input: json.RawMessage(`{"path":"b.go"}`)})}})
	check("grown conversation", &grown)
	copy(grown.Messages[len(grown.Messages)-1].Parts[0].ToolCall.Input, `{"path":"c.go"}`)
	grown.Messages[0].Parts[0] = llm.TextPart("Another task entirely.")
	grown.Messages[2].Parts[2].ToolResult.IsError = false
	grown.System = "Another system prompt."
	check("messages changed in place", &grown)
	check("only defaults", &llm.Request{})
	changedTools := *req
	changedTools.Tools = []llm.ToolDef{{Name: "read_file", Description: "Read.", Schema: json.RawMessage(`{"type":"object"}`)}}
	check("a tool changed under its name", &changedTools)
	if _, err := c.body(&llm.Request{Tools: []llm.ToolDef{{Name: "bad", Schema: json.RawMessage(`[1]`)}}}, true); err == nil {
		t.Error("a schema that is not an object: no error")
	}
	noModel, _ := New(Options{APIKey: "k"})
	if _, err := noModel.body(&llm.Request{}, true); err == nil {
		t.Error("no model anywhere: no error")
	}
}
