package openai

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
)

// BenchmarkEncode measures building the body of a tenth turn.
func BenchmarkEncode(b *testing.B) {
	c, err := New(Options{APIKey: "k", Model: "m"})
	if err != nil {
		b.Fatal(err)
	}
	clienttest.BenchEncode(b, func(req *llm.Request) error {
		_, err := c.encode(req, true)
		return err
	})
}
