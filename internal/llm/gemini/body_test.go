package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// wireRequest is the whole request body, as encoding/json encodes it.
type wireRequest struct {
	Contents          []content        `json:"contents"`
	SystemInstruction *content         `json:"systemInstruction,omitempty"`
	Tools             []wireTools      `json:"tools,omitempty"`
	GenerationConfig  generationConfig `json:"generationConfig"`
}

type wireTools struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

// bodyUncached is the body as built before the cache: whole, by
// encoding/json. The cached body must equal it byte for byte.
//
// It encodes a provider-neutral request. A tool result travels as a
// functionResponse named after the function of the call it answers, with
// {"output": …} or, for a failure, {"error": …}, as Gemini CLI sends them.
func (c *Client) bodyUncached(req *llm.Request) ([]byte, error) {
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
			schema, err := llm.ObjectSchema(t, llm.ProviderGemini)
			if err != nil {
				return nil, err
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

// richConversation has every kind of content the client sends.
func richConversation() *llm.Request {
	temp := 0.25
	return &llm.Request{
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
// whole request: for every kind of content, as the conversation grows, when
// a message is changed in place after it was sent, when the same result
// answers a call of another name, and when there is nothing optional.
func TestBodyEncodesAsWhole(t *testing.T) {
	t.Parallel()
	c, err := New(Options{APIKey: "k", Model: "gemini-test"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, req *llm.Request) {
		t.Helper()
		want, err := c.bodyUncached(req)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			got, err := c.body(req)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if string(got) != string(want) {
				t.Errorf("%s, call %d:\n got %s\nwant %s", what, i+1, got, want)
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
	renamed := *req
	renamed.Messages = append([]llm.Message(nil), req.Messages...)
	renamed.Messages[1] = llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "bash"}), llm.ToolCallPart(llm.ToolCall{ID: "c2", Name: "glob"})}}
	check("the same results answering calls of other names", &renamed)
	if got, _ := c.body(&renamed); !strings.Contains(string(got), `"name":"glob"`) {
		t.Errorf("the result of call c2 is not named after the call's function glob: %s", got)
	}
	check("only defaults", &llm.Request{})
	changedTools := *req
	changedTools.Tools = []llm.ToolDef{{Name: "read_file", Description: "Read.", Schema: json.RawMessage(`{"type":"object"}`)}}
	check("a tool changed under its name", &changedTools)
	if _, err := c.body(&llm.Request{Tools: []llm.ToolDef{{Name: "bad", Schema: json.RawMessage(`[1]`)}}}); err == nil {
		t.Error("a schema that is not an object: no error")
	}
	if _, err := c.body(&llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.ToolResultPart(llm.ToolResult{CallID: "nobody"})}}}}); err == nil {
		t.Error("a result for a call no message made: no error")
	}
}
