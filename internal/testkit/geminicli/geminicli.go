// Package geminicli gives end-to-end tests the real Gemini CLI, pinned,
// installed once per machine with npm into a cache directory outside the
// repository (package testkit/npmcli).
package geminicli

import (
	"context"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/testkit/npmcli"
)

// Package and PinnedVersion are the Gemini CLI the tests install (the
// gemini engine's MinVersion; its tests check the two agree).
const (
	Package       = "@google/gemini-cli"
	PinnedVersion = "0.61.0"
)

// CLI returns the real Gemini CLI, installing it first when needed. It
// skips t, saying why, only when npm is missing or cannot reach the
// registry.
func CLI(t testing.TB) string {
	t.Helper()
	return npmcli.Install(t, Package, PinnedVersion, "gemini")
}

var (
	once       sync.Once
	path, skip string
	errInstall error
)

// Install is CLI for a caller without a test (a script's condition),
// once per process: the path, or why npm cannot be used, or another error.
func Install() (string, string, error) {
	once.Do(func() { path, skip, errInstall = npmcli.Ensure(context.Background(), Package, PinnedVersion, "gemini") })
	return path, skip, errInstall
}
