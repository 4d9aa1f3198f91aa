package anthropic

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
)

// BenchmarkEncode measures building the request body of a tenth turn.
func BenchmarkEncode(b *testing.B) {
	c, err := New(Options{APIKey: "k", Model: "claude-test"})
	if err != nil {
		b.Fatal(err)
	}
	req := clienttest.TenthTurn()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeForBench(c, req); err != nil {
			b.Fatal(err)
		}
	}
}

func encodeForBench(c *Client, req *llm.Request) ([]byte, error) {
	return c.encode(req, true)
}
