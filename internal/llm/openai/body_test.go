package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
)

// sdkParams converts req whole into the SDK's parameters, with no cache:
// the request the body must equal once the SDK encodes it.
func sdkParams(t testing.TB, c *Client, req *llm.Request, stream bool) oa.ChatCompletionNewParams {
	t.Helper()
	p := oa.ChatCompletionNewParams{Model: c.opts.Model, MaxCompletionTokens: param.NewOpt(int64(c.opts.MaxTokens))}
	if req.Model != "" {
		p.Model = req.Model
	}
	if req.MaxTokens > 0 {
		p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if stream {
		p.StreamOptions = oa.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, oa.SystemMessage(req.System))
	}
	for _, td := range req.Tools {
		tp, err := toolParam(td)
		if err != nil {
			t.Fatal(err)
		}
		p.Tools = append(p.Tools, tp)
	}
	for i := range req.Messages {
		p.Messages = append(p.Messages, messageParams(&req.Messages[i])...)
	}
	return p
}

// checkBody asserts that the body c builds for req is byte for byte what
// the SDK encodes from sdkParams, on a first call and on a second.
func checkBody(t *testing.T, c *Client, what string, req *llm.Request) {
	t.Helper()
	for _, stream := range []bool{true, false} {
		want, err := sdkParams(t, c, req, stream).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			got, err := c.encode(req, stream)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if string(got) != string(want) {
				t.Errorf("%s, stream %v, call %d:\n got %s\nwant %s", what, stream, i+1, got, want)
			}
		}
	}
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
				llm.ToolCallPart(llm.ToolCall{ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path": "a<b>.go"}`)}),
				llm.ToolCallPart(llm.ToolCall{ID: "call_2", Name: "noop"}),
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{
				llm.ToolResultPart(llm.ToolResult{CallID: "call_1", Content: "package a\n\nfunc f() string { return \"<ok>\" }\n"}),
				llm.ToolResultPart(llm.ToolResult{CallID: "call_2", IsError: true, Content: "no such tool & no luck"}),
				llm.TextPart("And then?"),
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{llm.TextPart("")}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "call_3", Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)})}},
			{Role: llm.RoleUser, Parts: []llm.Part{llm.ToolResultPart(llm.ToolResult{CallID: "call_3"})}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("Yes: ünïcödé ✓ and emoji 🚀.")}},
		},
	}
}

// The body built from cached pieces is byte for byte the SDK's encoding of
// the whole converted request, streamed or not: for every kind of content,
// as the conversation grows, when a message is changed in place after it was
// sent, and when there is nothing optional to send.
func TestBodyEncodesAsSDK(t *testing.T) {
	t.Parallel()
	c, err := New(Options{APIKey: "k", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	req := richConversation()
	checkBody(t, c, "rich conversation", req)
	grown := *req
	grown.Messages = append(append([]llm.Message(nil), req.Messages...),
		llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "call_4", Name: "read_file", Input: json.RawMessage(`{"path":"b.go"}`)})}})
	checkBody(t, c, "grown conversation", &grown)
	copy(grown.Messages[len(grown.Messages)-1].Parts[0].ToolCall.Input, `{"path":"c.go"}`)
	grown.Messages[0].Parts[0] = llm.TextPart("Another task entirely.")
	grown.Messages[2].Parts[1].ToolResult.IsError = false
	grown.System = "Another system prompt."
	checkBody(t, c, "messages changed in place", &grown)
	checkBody(t, c, "only defaults", &llm.Request{})
	changedTools := *req
	changedTools.Tools = []llm.ToolDef{{Name: "read_file", Description: "Read.", Schema: json.RawMessage(`{"type":"object"}`)}}
	checkBody(t, c, "a tool changed under its name", &changedTools)
	if _, err := c.encode(&llm.Request{Tools: []llm.ToolDef{{Name: "bad", Schema: json.RawMessage(`[1]`)}}}, true); err == nil {
		t.Error("a schema that is not an object: no error")
	}
}

// replyMinimal answers every call with a minimal reply, as a stream when
// the body asks for one.
func replyMinimal(w http.ResponseWriter, stream bool) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`+"\n\n"+
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`+"\n\ndata: [DONE]\n\n")
}

// On the wire, a streamed and a plain call send the body and the headers
// the SDK sends for the whole converted request.
func TestWireBodyAsSDK(t *testing.T) {
	t.Parallel()
	rec := &clienttest.Recorder{Reply: replyMinimal}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, APIKey: "k", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := richConversation()
	compare := func(what string, ours, sdks clienttest.Recorded) {
		t.Helper()
		clienttest.SameRequest(t, what, ours, sdks)
	}
	if _, err := c.Stream(ctx, req, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	ours := rec.Last(t)
	stream := c.svc.NewStreaming(ctx, sdkParams(t, c, req, true))
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
	if _, err := c.svc.New(ctx, sdkParams(t, c, req, false), option.WithMaxRetries(0)); err != nil {
		t.Fatalf("SDK New: %v", err)
	}
	compare("complete", ours, rec.Last(t))
}

// merged returns the names of the headers in a or b.
