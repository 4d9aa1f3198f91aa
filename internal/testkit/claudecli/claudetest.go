// Package claudecli gives end-to-end tests the real Claude Code, pinned,
// installed once per machine with npm into a cache directory outside the
// repository (package testkit/npmcli).
package claudecli

import (
	"context"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/testkit/npmcli"
)

// Package and PinnedVersion are the Claude Code the tests install (the
// claude engine's MinVersion; its tests check the two agree).
const (
	Package       = "@anthropic-ai/claude-code"
	PinnedVersion = "2.1.332"
)

// CLI returns the real Claude Code, installing it first when needed. It
// skips t, saying why, only when npm is missing or cannot reach the
// registry.
func CLI(t testing.TB) string {
	t.Helper()
	return npmcli.Install(t, Package, PinnedVersion, "claude")
}

var (
	once       sync.Once
	path, skip string
	errInstall error
)

// Install is CLI for a caller without a test (a script's condition),
// once per process: the path, or why npm cannot be used, or another error.
func Install() (string, string, error) {
	once.Do(func() { path, skip, errInstall = npmcli.Ensure(context.Background(), Package, PinnedVersion, "claude") })
	return path, skip, errInstall
}
