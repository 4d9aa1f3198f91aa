package anthropic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

func TestMissingKey(t *testing.T) {
	t.Parallel()
	_, err := anthropic.New(anthropic.Options{Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("New without key = %v, want an error naming ANTHROPIC_API_KEY", err)
	}
}

func TestPromptCachingMarks(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{Text: "ok"}}}})
	c := newClient(t, srv, clientOptions())
	req := &llm.Request{
		System:   "long stable system prompt",
		Messages: []llm.Message{llm.UserText("hi")},
		Tools: []llm.ToolDef{
			{Name: "read", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "noop"},
		},
	}
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	// One breakpoint on the system prompt, one on the last tool.
	if got.CacheBreakpoints != 2 {
		t.Errorf("cache_control markers = %d, want 2", got.CacheBreakpoints)
	}
	if len(got.Tools) != 2 || !strings.Contains(string(got.Tools[0].Schema), `"additionalProperties":false`) || !strings.Contains(string(got.Tools[0].Schema), `"required":["path"]`) {
		t.Errorf("tools sent = %+v", got.Tools)
	}
	if got.MaxTokens != llm.DefaultMaxOutputTokens || got.Header.Get("X-Api-Key") != "sk-ant-test" {
		t.Errorf("max_tokens = %d, key header %q", got.MaxTokens, got.Header.Get("X-Api-Key"))
	}
}

func TestEmptyTextPartsAreDropped(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, nil)
	c := newClient(t, srv, clientOptions())
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{llm.TextPart(""), llm.TextPart("hello")}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("")}},
	}}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Messages; len(got) != 1 || got[0].Text() != "hello" {
		t.Errorf("server saw %+v, want one user message", got)
	}
}

func TestNoModel(t *testing.T) {
	t.Parallel()
	c, err := anthropic.New(anthropic.Options{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), &llm.Request{}); llm.ClassOf(err) != llm.ClassBadRequest {
		t.Errorf("Complete without model = %v, want ClassBadRequest", err)
	}
}

func TestConnectionRefusedIsNetwork(t *testing.T) {
	t.Parallel()
	c, err := anthropic.New(anthropic.Options{APIKey: "k", BaseURL: "http://127.0.0.1:1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("x")}}, nil)
	if llm.ClassOf(err) != llm.ClassNetwork {
		t.Errorf("Stream to a closed port = %v, want ClassNetwork", err)
	}
}

func TestToolResultsOnTheWire(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, nil)
	c := newClient(t, srv, clientOptions())
	req := &llm.Request{Messages: []llm.Message{
		llm.UserText("go"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			llm.TextPart("running two tools"),
			llm.ToolCallPart(llm.ToolCall{ID: "t1", Name: "bash", Input: []byte(`{"cmd":"true"}`)}),
			llm.ToolCallPart(llm.ToolCall{ID: "t2", Name: "noop"}),
		}},
		{Role: llm.RoleUser, Parts: []llm.Part{
			llm.ToolResultPart(llm.ToolResult{CallID: "t1", Content: ""}),
			llm.ToolResultPart(llm.ToolResult{CallID: "t2", Content: "exit status 1", IsError: true}),
		}},
	}}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Messages
	if len(msgs) != 3 {
		t.Fatalf("server saw %d messages", len(msgs))
	}
	calls := msgs[1].ToolCalls()
	if len(calls) != 2 || string(calls[1].Input) != "{}" {
		t.Errorf("tool calls on the wire = %+v, want the empty input sent as {}", calls)
	}
	r1, r2 := msgs[2].Parts[0].ToolResult, msgs[2].Parts[1].ToolResult
	if r1.CallID != "t1" || r1.Content != "" || r1.IsError || r2.CallID != "t2" || r2.Content != "exit status 1" || !r2.IsError {
		t.Errorf("tool results on the wire = %+v, %+v", r1, r2)
	}
}
