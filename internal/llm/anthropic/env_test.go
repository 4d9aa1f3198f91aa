package anthropic_test

import (
	"context"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

// TestIgnoresEnvironment must not run in parallel: it sets the variables
// the SDK would read by default and checks that the client ignores them.
func TestIgnoresEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	srv := llmtest.NewServer(t, nil)
	c := newClient(t, srv, clientOptions())
	if _, err := c.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("x")}}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	h := srv.Requests()[0].Header
	if h.Get("X-Api-Key") != "sk-ant-test" || h.Get("Authorization") != "" {
		t.Errorf("headers x-api-key=%q authorization=%q, want only the explicit key", h.Get("X-Api-Key"), h.Get("Authorization"))
	}
}
