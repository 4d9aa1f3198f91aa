package executor

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as BenchmarkTurn's scripted model
// server in a process of its own (serveModelEnv), so that the benchmark's
// CPU time and allocations are the runtime's alone.
func TestMain(m *testing.M) {
	if spec := os.Getenv(serveModelEnv); spec != "" {
		os.Exit(serveModel(spec))
	}
	os.Exit(m.Run())
}
