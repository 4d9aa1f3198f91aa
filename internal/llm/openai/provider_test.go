package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/llm/openai"
)

func TestMissingKeyForPublicAPI(t *testing.T) {
	t.Parallel()
	_, err := openai.New(openai.Options{Model: "gpt-5"})
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("New without key or base URL = %v, want an error naming OPENAI_API_KEY", err)
	}
}

func TestLocalServerWithoutKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, nil)
	c, err := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), Model: "llama3.2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("x")}}, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if got.Header.Get("Authorization") != "" || got.Model != "llama3.2" || !got.IncludeUsage || got.MaxTokens != llm.DefaultMaxOutputTokens {
		t.Errorf("request: authorization %q model %q include_usage %t max %d", got.Header.Get("Authorization"), got.Model, got.IncludeUsage, got.MaxTokens)
	}
}

func TestToolResultsPrecedeUserText(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, nil)
	c := newClient(t, srv, clientOptions())
	req := &llm.Request{Messages: []llm.Message{
		llm.UserText("go"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "read", Input: []byte(`{"p":1}`)})}},
		{Role: llm.RoleUser, Parts: []llm.Part{
			llm.TextPart("also note this"),
			llm.ToolResultPart(llm.ToolResult{CallID: "c1", Content: "no such file", IsError: true}),
		}},
	}}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Messages
	// user, assistant, tool (grouped as a user turn), user text.
	if len(msgs) != 4 {
		t.Fatalf("server saw %d messages, want 4: %+v", len(msgs), msgs)
	}
	r := msgs[2].Parts[0].ToolResult
	if r == nil || r.CallID != "c1" || r.Content != "Error: no such file" {
		t.Errorf("tool result = %+v, want c1 with an Error: prefix", r)
	}
	if msgs[3].Text() != "also note this" {
		t.Errorf("last message = %+v", msgs[3])
	}
}
