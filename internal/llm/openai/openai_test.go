package openai_test

import (
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/llm/openai"
)

func newClient(t testing.TB, srv *llmtest.Server, o clienttest.Options) llm.Client {
	t.Helper()
	c, err := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", Model: o.Model, IdleTimeout: o.IdleTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func clientOptions() clienttest.Options {
	return clienttest.Options{Model: "gpt-test", IdleTimeout: 30 * time.Second}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	clienttest.Run(t, clienttest.Harness{NewClient: newClient, Provider: llm.ProviderOpenAI, Overloaded: clienttest.Overload{Class: llm.ClassServer, Status: 503}})
}
