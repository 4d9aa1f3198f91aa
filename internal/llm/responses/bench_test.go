package responses_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

// BenchmarkStream measures one streamed call (about 280 bytes of text in
// 18 deltas plus one tool call) through the provider against
// the scripted server on loopback: client overhead plus loopback HTTP.
func BenchmarkStream(b *testing.B) {
	srv := llmtest.NewServer(b, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{
		Text:      strings.Repeat("streamed text ", 20),
		ToolCalls: []llmtest.ToolCall{{Name: "read", Input: map[string]any{"path": "internal/auth/jwt.go"}}},
	}}}})
	c := newClient(b, srv, clienttest.Options{Model: "bench-model", IdleTimeout: 30 * time.Second})
	req := &llm.Request{System: "You are a benchmark.", Messages: []llm.Message{llm.UserText("go")},
		Tools: []llm.ToolDef{{Name: "read", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Stream(context.Background(), req, func(llm.Event) {}); err != nil {
			b.Fatal(err)
		}
	}
}
