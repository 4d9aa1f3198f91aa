// Package npmcli installs pinned npm command-line tools (Codex, Gemini CLI,
// Claude Code) for end-to-end tests, once per machine, into a cache
// directory outside the repository. A file lock makes concurrent test
// binaries (go test runs packages in parallel) wait for one install
// rather than race; an install is built in a temporary directory and
// renamed into place, so a killed install leaves nothing half-made.
//
// A test is skipped, with a message saying why, only when npm is missing
// or cannot reach the registry; any other failure of npm fails it. It is
// for tests only.
package npmcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// installTimeout bounds one npm install; the CLIs are tens of megabytes.
const installTimeout = 10 * time.Minute

// CacheDir is the directory installs go under: $XDG_CACHE_HOME (or the
// platform's user cache directory) /neuraphage/npm.
func CacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory: %w", err)
	}
	return filepath.Join(base, "neuraphage", "npm"), nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Install returns the path of the executable bin of npm package pkg at
// exactly version (e.g. Install(t, "@openai/codex", "0.169.0", "codex")),
// installing it first when the cache lacks it. It skips t when npm is
// missing or cannot reach the registry, and fails it on any other error.
func Install(t testing.TB, pkg, version, bin string) string {
	t.Helper()
	path, err := install(t.Context(), pkg, version, bin)
	var skip *unreachable
	switch {
	case errors.As(err, &skip):
		t.Skipf("skipping: %s@%s is not installed and %v", pkg, version, skip)
	case err != nil:
		t.Fatalf("installing %s@%s: %v", pkg, version, err)
	}
	return path
}

// unreachable says npm cannot be used to install: it is missing or the
// registry cannot be reached.
type unreachable struct{ why string }

func (u *unreachable) Error() string { return u.why }

func install(ctx context.Context, pkg, version, bin string) (string, error) {
	if pkg == "" || version == "" || bin == "" || strings.ContainsAny(version, " /\\") || strings.ContainsAny(bin, "/\\") {
		return "", fmt.Errorf("bad package %q, version %q or binary %q", pkg, version, bin)
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, unsafeChars.ReplaceAllString(strings.TrimPrefix(pkg, "@"), "_")+"@"+version)
	binPath := filepath.Join(dir, "node_modules", ".bin", bin)
	if usable(binPath) {
		return binPath, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", cache, err)
	}
	unlock, err := lock(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if usable(binPath) { // another test binary installed it while we waited
		return binPath, nil
	}
	tmp, err := os.MkdirTemp(cache, ".installing-")
	if err != nil {
		return "", fmt.Errorf("creating a temporary install directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	res, err := proc.Run(ctx, proc.Cmd{
		Args:    []string{"npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error", pkg + "@" + version},
		Dir:     tmp,
		Timeout: installTimeout,
	})
	if err != nil {
		return "", &unreachable{why: fmt.Sprintf("npm cannot be run: %v", err)}
	}
	if res.ExitCode != 0 || res.TimedOut || res.Cancelled {
		if offline(res.Output) {
			return "", &unreachable{why: "npm cannot reach its registry:\n" + res.Output}
		}
		return "", fmt.Errorf("npm install exited %d (timed out %t):\n%s", res.ExitCode, res.TimedOut, res.Output)
	}
	if !usable(filepath.Join(tmp, "node_modules", ".bin", bin)) {
		return "", fmt.Errorf("npm installed %s@%s but it has no executable %q", pkg, version, bin)
	}
	// npm writes relative bin links, so the tree can move into place.
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("removing a stale install: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("moving the install into place: %w", err)
	}
	return binPath, nil
}

// offlineCodes are npm's error codes for a registry it cannot reach.
var offlineCodes = regexp.MustCompile(`\b(ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\b|npm (error|ERR!) network`)

func offline(output string) bool { return offlineCodes.MatchString(output) }

func usable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// lock takes an exclusive flock on path, waiting for other holders.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening install lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
