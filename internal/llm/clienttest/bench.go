package clienttest

import (
	"context"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

// BenchStream measures one streamed call (about 280 bytes of text in 18
// deltas plus one tool call) through the client newClient builds with o
// against the scripted server on loopback: the client's overhead (and its
// SDK's, if any) plus loopback HTTP. Each provider's BenchmarkStream runs
// it.
func BenchStream(b *testing.B, newClient func(testing.TB, *llmtest.Server, Options) llm.Client, o Options) {
	srv := llmtest.NewServer(b, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{
		Text:      strings.Repeat("streamed text ", 20),
		ToolCalls: []llmtest.ToolCall{{Name: "read", Input: map[string]any{"path": "internal/auth/jwt.go"}}},
	}}}})
	c := newClient(b, srv, o)
	req := &llm.Request{System: "You are a benchmark.", Messages: []llm.Message{llm.UserText("go")},
		Tools: []llm.ToolDef{{Name: "read", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Stream(context.Background(), req, func(llm.Event) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchEncode measures building the request body of a tenth turn
// (TenthTurn) with encode, a provider client's body builder. Each
// provider's BenchmarkEncode runs it.
func BenchEncode(b *testing.B, encode func(*llm.Request) error) {
	req := TenthTurn()
	b.ReportAllocs()
	for b.Loop() {
		if err := encode(req); err != nil {
			b.Fatal(err)
		}
	}
}
