package claude

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// ErrUnavailable is wrapped by Ready's errors: the CLI is missing, too old
// or does not answer.
var ErrUnavailable = engine.ErrUnavailable

// Ready implements engine.Engine: the CLI is found and at least
// MinVersion. The answer is kept for Options.ReadyEvery, so the scheduler
// may ask as often as it likes.
func (e *Engine) Ready() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.readyAt.IsZero() && time.Since(e.readyAt) < e.o.ReadyEvery {
		return e.ready
	}
	e.path, e.version, e.ready = probe(e.o.Command)
	e.readyAt = time.Now()
	return e.ready
}

// Version is the CLI's version as the last Ready found it ("" when none).
func (e *Engine) Version() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.version
}

func (e *Engine) resolved() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.path == "" {
		return e.o.Command
	}
	return e.path
}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

// probe finds command and asks its version.
func probe(command string) (path, version string, err error) {
	path = command
	if !strings.Contains(command, "/") {
		if path, err = proc.LookPath(command); err != nil {
			return "", "", fmt.Errorf("%w: %q is not in PATH; install Claude Code with `%s`, or set engines.claude.command", ErrUnavailable, command, InstallHint)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := proc.Run(ctx, proc.Cmd{Args: []string{path, "--version"}, SeparateStderr: true, Env: proc.WithoutSecrets(os.Environ()), Grace: time.Second})
	if err != nil {
		return "", "", fmt.Errorf("%w: running %s --version: %v; install Claude Code with `%s`", ErrUnavailable, path, err, InstallHint)
	}
	out := strings.TrimSpace(res.Output)
	if res.ExitCode != 0 {
		return "", "", fmt.Errorf("%w: %s --version exited %d: %s", ErrUnavailable, path, res.ExitCode, words.Clip(strings.TrimSpace(out+" "+res.Stderr), 200))
	}
	m := versionRE.FindString(out)
	if m == "" {
		return "", "", fmt.Errorf("%w: %s --version said %q, not a version", ErrUnavailable, path, words.Clip(out, 80))
	}
	if Older(m, MinVersion) {
		return path, m, fmt.Errorf("%w: %s is Claude Code %s, older than %s; upgrade with `%s`", ErrUnavailable, path, m, MinVersion, InstallHint)
	}
	return path, m, nil
}

// Older reports whether version a is older than b (both "X.Y.Z").
func Older(a, b string) bool {
	pa, pb := versionRE.FindStringSubmatch(a), versionRE.FindStringSubmatch(b)
	if pa == nil || pb == nil {
		return false
	}
	for i := 1; i <= 3; i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return false
}
