package openai

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
)

// BenchmarkEncode measures building the request body of a tenth turn.
func BenchmarkEncode(b *testing.B) {
	c, err := New(Options{APIKey: "k", Model: "m"})
	if err != nil {
		b.Fatal(err)
	}
	req := clienttest.TenthTurn()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.encode(req, true); err != nil {
			b.Fatal(err)
		}
	}
}
