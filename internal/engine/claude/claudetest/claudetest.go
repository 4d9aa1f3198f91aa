// Package claudetest installs the real Claude Code for end-to-end tests:
// the pinned version, once, with npm, into a cache directory outside the
// repository, under a file lock so that test packages running in parallel
// do not race.
package claudetest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// PinnedVersion is the Claude Code the end-to-end tests install (the
// claude engine's MinVersion; its tests check the two agree).
const PinnedVersion = "2.1.332"

var (
	cliOnce sync.Once
	cliPath string
	cliErr  string
)

// CLI returns the real Claude Code, installed once with npm into a
// cache directory outside the repository (NEURAPHAGE_TEST_NPM, else the
// user's cache dir), under a file lock so that test packages running in
// parallel do not race. It skips the test, saying why, only when npm cannot
// install it (no npm, no registry).
func CLI(t testing.TB) string {
	t.Helper()
	path, why := Install()
	if why != "" {
		t.Skipf("the real Claude Code is not available: %s", why)
	}
	return path
}

// Install installs the CLI when missing and returns its path, or why it
// cannot.
func Install() (path, why string) {
	cliOnce.Do(func() { cliPath, cliErr = installCLI() })
	return cliPath, cliErr
}

func installCLI() (string, string) {
	dir := os.Getenv("NEURAPHAGE_TEST_NPM")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", "no cache directory: " + err.Error()
		}
		dir = filepath.Join(cache, "neuraphage-test", "npm")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err.Error()
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "claude")
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err.Error()
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err.Error()
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if version(bin) == PinnedVersion {
		return bin, ""
	}
	npm, err := proc.LookPath("npm")
	if err != nil {
		return "", "npm is not installed"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := proc.Run(ctx, proc.Cmd{Args: []string{npm, "install", "--no-audit", "--no-fund", "--prefix", dir, "@anthropic-ai/claude-code@" + PinnedVersion}})
	if err != nil || res.ExitCode != 0 {
		return "", "npm could not install @anthropic-ai/claude-code@" + PinnedVersion + ": " + res.Output
	}
	if v := version(bin); v != PinnedVersion {
		return "", bin + " --version does not say " + PinnedVersion + " but " + v
	}
	return bin, ""
}

// version is what bin --version says, "" when it does not run.
func version(bin string) string {
	if _, err := os.Stat(bin); err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := proc.Run(ctx, proc.Cmd{Args: []string{bin, "--version"}, SeparateStderr: true})
	if err != nil || res.ExitCode != 0 {
		return ""
	}
	v, _, _ := strings.Cut(strings.TrimSpace(res.Output), " ")
	return v
}
