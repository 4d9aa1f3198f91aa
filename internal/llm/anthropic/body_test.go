package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
)

// richConversation has every kind of content the client sends: text that
// needs escaping (HTML, U+2028, invalid UTF-8), tool calls with and without
// input, tool results ok, failed and empty, parts and messages with nothing
// to send, a system prompt, tools and sampling settings.
func richConversation() *llm.Request {
	temp := 0.25
	return &llm.Request{
		Model:       "claude-<other>&x",
		MaxTokens:   1234,
		Temperature: &temp,
		System:      "Be careful with <tags> & \"quotes\"\u2028and\tcontrol\x01bytes.",
		Tools: []llm.ToolDef{
			{Name: "read_file", Description: "Read <a> file & more.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "noop"},
			{Name: "bash", Description: "Run a command.", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"additionalProperties":false}`)},
		},
		Messages: []llm.Message{
			llm.UserText("Fix <b>the</b> bug & explain\u2028why. \xff invalid"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.TextPart("Reading two files."),
				llm.TextPart(""),
				llm.ToolCallPart(llm.ToolCall{ID: "toolu_1", Name: "read_file", Input: json.RawMessage(`{"path": "a<b>.go", "n": 1.50}`)}),
				llm.ToolCallPart(llm.ToolCall{ID: "toolu_2", Name: "noop"}),
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{
				llm.ToolResultPart(llm.ToolResult{CallID: "toolu_1", Content: "package a\n\nfunc f() string { return \"<ok>\" }\n"}),
				llm.ToolResultPart(llm.ToolResult{CallID: "toolu_2", IsError: true, Content: "no such tool & no luck"}),
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{llm.TextPart("")}},
			{Role: llm.RoleAssistant},
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "toolu_3", Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)})}},
			{Role: llm.RoleUser, Parts: []llm.Part{
				llm.ToolResultPart(llm.ToolResult{CallID: "toolu_3"}),
				llm.TextPart("The tests pass now?"),
			}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("Yes: ünïcödé ✓ and emoji 🚀.")}},
		},
	}
}

// The body built from cached pieces is byte for byte the SDK's encoding of
// the whole converted request: for every kind of content, as the
// conversation grows, when a message is changed in place after it was sent,
// and when there is nothing optional to send.
func TestBodyEncodesAsSDK(t *testing.T) {
	t.Parallel()
	c, err := New(Options{APIKey: "k", Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	req := richConversation()
	checkBody(t, c, "rich conversation", req)

	grown := *req
	grown.Messages = append(append([]llm.Message(nil), req.Messages...),
		llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.TextPart("One more thing.")}},
		llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "toolu_4", Name: "read_file", Input: json.RawMessage(`{"path":"b.go"}`)})}})
	checkBody(t, c, "grown conversation", &grown)

	// Changed in place: the bytes of a tool input, a part's text, a result.
	copy(grown.Messages[len(grown.Messages)-1].Parts[0].ToolCall.Input, `{"path":"c.go"}`)
	grown.Messages[0].Parts[0] = llm.TextPart("Another task entirely.")
	grown.Messages[2].Parts[1].ToolResult.IsError = false
	checkBody(t, c, "messages changed in place", &grown)

	checkBody(t, c, "only defaults", &llm.Request{})
	checkBody(t, c, "one message", &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})

	if _, err := c.encode(&llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, Parts: []llm.Part{
		llm.ToolCallPart(llm.ToolCall{ID: "x", Name: "bad", Input: json.RawMessage(`{"unterminated`)}),
	}}}}, false); err == nil {
		t.Error("a tool input that is not JSON: no error")
	}
	noModel, _ := New(Options{APIKey: "k"})
	if _, err := noModel.encode(&llm.Request{}, true); err == nil {
		t.Error("no model anywhere: no error")
	}
}

// replyMinimal answers every Messages API call with a minimal reply, as a
// stream when the body asks for one.
func replyMinimal(w http.ResponseWriter, stream bool) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range []string{
		`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-test","content":[],"usage":{"input_tokens":1,"output_tokens":0}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
		`{"type":"message_stop"}`,
	} {
		var typ struct{ Type string }
		_ = json.Unmarshal([]byte(ev), &typ)
		_, _ = io.WriteString(w, "event: "+typ.Type+"\ndata: "+ev+"\n\n")
	}
}

// On the wire, a streamed and a plain call send the body and the headers
// the SDK sends for the whole converted request.
func TestWireBodyAsSDK(t *testing.T) {
	t.Parallel()
	rec := &clienttest.Recorder{Reply: replyMinimal}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, APIKey: "k", Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := richConversation()
	ref := sdkParams(t, c, req)
	compare := func(what string, ours, sdks clienttest.Recorded) {
		t.Helper()
		clienttest.SameRequest(t, what, ours, sdks)
	}

	if _, err := c.Stream(ctx, req, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	ours := rec.Last(t)
	stream := c.svc.NewStreaming(ctx, ref)
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("SDK stream: %v", err)
	}
	_ = stream.Close()
	compare("stream", ours, rec.Last(t))
	if !strings.HasSuffix(ours.Body, `,"stream":true}`) {
		t.Errorf("streamed body does not ask for a stream: %s", ours.Body)
	}

	if _, err := c.Complete(ctx, req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	ours = rec.Last(t)
	if _, err := c.svc.New(ctx, ref, option.WithRequestTimeout(10*60e9)); err != nil {
		t.Fatalf("SDK New: %v", err)
	}
	compare("complete", ours, rec.Last(t))
}

// merged returns the names of the headers in a or b.
