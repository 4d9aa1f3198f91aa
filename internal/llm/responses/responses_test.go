package responses_test

import (
	"context"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/llm/responses"
)

func newClient(t testing.TB, srv *llmtest.Server, o clienttest.Options) llm.Client {
	t.Helper()
	c, err := responses.New(responses.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", Model: o.Model, IdleTimeout: o.IdleTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConformance(t *testing.T) {
	t.Parallel()
	clienttest.Run(t, clienttest.Harness{NewClient: newClient, Provider: llm.ProviderOpenAI, Overloaded: clienttest.Overload{Class: llm.ClassServer, Status: 503}})
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, nil)
	c := newClient(t, srv, clienttest.Options{Model: "gpt-test", IdleTimeout: 30 * time.Second})
	req := &llm.Request{System: "be brief", MaxTokens: 77, Messages: []llm.Message{
		llm.UserText("go"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("reading"), llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "read", Input: []byte(`{"p":1}`)})}},
		{Role: llm.RoleUser, Parts: []llm.Part{
			llm.TextPart("also note this"),
			llm.ToolResultPart(llm.ToolResult{CallID: "c1", Content: "no such file", IsError: true}),
		}},
	}}
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if got.API != llmtest.APIResponses || got.System != "be brief" || got.MaxTokens != 77 || got.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("request: api %q system %q max %d auth %q", got.API, got.System, got.MaxTokens, got.Header.Get("Authorization"))
	}
	msgs := got.Messages
	if len(msgs) != 3 || len(msgs[1].ToolCalls()) != 1 || msgs[1].Text() != "reading" {
		t.Fatalf("server saw %+v, want user, assistant with text and a call, user", msgs)
	}
	// The tool output comes first in the user turn, flagged in its text.
	r := msgs[2].Parts[0].ToolResult
	if r == nil || r.CallID != "c1" || r.Content != "Error: no such file" || msgs[2].Text() != "also note this" {
		t.Errorf("user turn = %+v", msgs[2])
	}
}

func TestMissingKeyForPublicAPI(t *testing.T) {
	t.Parallel()
	if _, err := responses.New(responses.Options{Model: "gpt-5"}); err == nil {
		t.Fatal("New without key or base URL succeeded")
	}
}
