package openai_test

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm/clienttest"
)

// BenchmarkStream measures one streamed call through the provider and its SDK
// against the scripted server on loopback (clienttest.BenchStream).
func BenchmarkStream(b *testing.B) { clienttest.BenchStream(b, newClient, clientOptions()) }
