package anthropic_test

import (
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

func newClient(t testing.TB, srv *llmtest.Server, o clienttest.Options) llm.Client {
	t.Helper()
	c, err := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "sk-ant-test", Model: o.Model, IdleTimeout: o.IdleTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func clientOptions() clienttest.Options {
	return clienttest.Options{Model: "claude-test", IdleTimeout: 30 * time.Second}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	clienttest.Run(t, clienttest.Harness{NewClient: newClient, Provider: llm.ProviderAnthropic, Overloaded: clienttest.Overload{Class: llm.ClassOverloaded, Status: 529}})
}
