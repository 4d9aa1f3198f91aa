package responses_test

import (
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
)

// BenchmarkStream measures one streamed call through the provider
// against the scripted server on loopback (clienttest.BenchStream).
func BenchmarkStream(b *testing.B) {
	clienttest.BenchStream(b, newClient, clienttest.Options{Model: "bench-model", IdleTimeout: 30 * time.Second})
}
