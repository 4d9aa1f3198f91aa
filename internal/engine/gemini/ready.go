package gemini

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

// ErrUnavailable is what Ready's errors match (errors.Is): the CLI is
// missing, too old or does not answer.
var ErrUnavailable = engine.ErrUnavailable

// unavailable is a Ready error: its message says what to do, and it
// matches ErrUnavailable.
type unavailable string

func (u unavailable) Error() string        { return string(u) }
func (u unavailable) Is(target error) bool { return target == ErrUnavailable }

func unavailablef(format string, args ...any) error { return unavailable(fmt.Sprintf(format, args...)) }

// Ready implements engine.Engine: the CLI is found and at least
// MinVersion. A yes is kept for Options.ReadyEvery, a no for at most
// retryUnready (the user may be installing the CLI), so the scheduler may
// ask as often as it likes.
func (e *Engine) Ready() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	every := e.o.ReadyEvery
	if e.ready != nil {
		every = min(every, retryUnready)
	}
	if !e.readyAt.IsZero() && time.Since(e.readyAt) < every {
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

// retryUnready bounds how long a failed readiness check is kept.
const retryUnready = 5 * time.Second

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

// probe finds command and asks its version.
func probe(command string) (path, version string, err error) {
	path = command
	if !strings.Contains(command, "/") {
		if path, err = proc.LookPath(command); err != nil {
			return "", "", unavailablef("%q is not in PATH; install Gemini CLI with `%s`, or set engines.gemini.command", command, InstallHint)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := proc.Run(ctx, proc.Cmd{Args: []string{path, "--version"}, SeparateStderr: true, Env: append(proc.WithoutSecrets(os.Environ()), "GEMINI_CLI_NO_RELAUNCH=true"), Grace: time.Second})
	if err != nil {
		return "", "", unavailablef("Gemini CLI: running %s --version: %v; install Gemini CLI with `%s`", path, err, InstallHint)
	}
	out := strings.TrimSpace(res.Output)
	if res.ExitCode != 0 {
		return "", "", unavailablef("Gemini CLI: %s --version exited %d: %s", path, res.ExitCode, words.Clip(strings.TrimSpace(out+" "+res.Stderr), 200))
	}
	m := versionRE.FindString(out)
	if m == "" {
		return "", "", unavailablef("Gemini CLI: %s --version said %q, not a version", path, words.Clip(out, 80))
	}
	if Older(m, MinVersion) {
		return path, m, unavailablef("%s is Gemini CLI %s, older than %s; upgrade with `%s`", path, m, MinVersion, InstallHint)
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
