package gemini_test

import (
	"context"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
	"github.com/neuraphage/neuraphage-go/internal/llm/gemini"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

func newClient(t testing.TB, srv *llmtest.Server, o clienttest.Options) llm.Client {
	t.Helper()
	c, err := gemini.New(gemini.Options{BaseURL: srv.GeminiBaseURL(), APIKey: "gm-test", Model: o.Model, IdleTimeout: o.IdleTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConformance(t *testing.T) {
	t.Parallel()
	clienttest.Run(t, clienttest.Harness{NewClient: newClient, Provider: llm.ProviderGemini,
		Overloaded: clienttest.Overload{Class: llm.ClassOverloaded, Status: 503}, AuthStatus: 400})
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, nil)
	c := newClient(t, srv, clienttest.Options{Model: "gemini-test", IdleTimeout: 30 * time.Second})
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
	if got.API != llmtest.APIGemini || got.Model != "gemini-test" || got.System != "be brief" || got.MaxTokens != 77 || got.Header.Get("X-Goog-Api-Key") != "gm-test" {
		t.Errorf("request: api %q model %q system %q max %d key %q", got.API, got.Model, got.System, got.MaxTokens, got.Header.Get("X-Goog-Api-Key"))
	}
	msgs := got.Messages
	if len(msgs) != 3 || len(msgs[1].ToolCalls()) != 1 || msgs[1].Text() != "reading" {
		t.Fatalf("server saw %+v, want user, model with text and a call, user", msgs)
	}
	r := msgs[2].Parts[0].ToolResult
	if r == nil || r.CallID != "c1" || r.Content != "no such file" || !r.IsError || msgs[2].Text() != "also note this" {
		t.Errorf("user turn = %+v, want the failed result of c1 first", msgs[2])
	}
}

func TestResultForUnknownCall(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, nil)
	c := newClient(t, srv, clienttest.Options{Model: "gemini-test"})
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.ToolResultPart(llm.ToolResult{CallID: "nope", Content: "x"})}}}}
	if _, err := c.Complete(context.Background(), req); llm.ClassOf(err) != llm.ClassBadRequest {
		t.Fatalf("Complete = %v, want a bad request naming the call", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("server saw %d requests, want none", n)
	}
}

func TestMissingKeyForPublicAPI(t *testing.T) {
	t.Parallel()
	if _, err := gemini.New(gemini.Options{Model: "gemini-2.5-pro"}); err == nil {
		t.Fatal("New without key or base URL succeeded")
	}
}
