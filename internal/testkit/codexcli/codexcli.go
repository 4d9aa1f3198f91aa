// Package codexcli gives end-to-end tests the real Codex CLI, pinned,
// installed with npm outside the repository (package npmcli).
package codexcli

import (
	"context"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/testkit/npmcli"
)

// Package and PinnedVersion are the Codex CLI the tests install (the codex
// engine's MinVersion).
const (
	Package       = "@openai/codex"
	PinnedVersion = "0.169.0"
)

// CLI returns the real Codex CLI, installing it first when needed. It
// skips t, saying why, only when npm is missing or cannot reach the
// registry.
func CLI(t testing.TB) string {
	t.Helper()
	return npmcli.Install(t, Package, PinnedVersion, "codex")
}

var (
	once       sync.Once
	path, skip string
	errInstall error
)

// Install is CLI for a caller without a test (a script's condition),
// once per process: the path, or why npm cannot be used, or another error.
func Install() (string, string, error) {
	once.Do(func() { path, skip, errInstall = npmcli.Ensure(context.Background(), Package, PinnedVersion, "codex") })
	return path, skip, errInstall
}
