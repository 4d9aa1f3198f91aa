package extproc

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// CLI names an agent CLI for its readiness check: what the user installs
// and where they point Neuraphage at it.
type CLI struct {
	// Product is the CLI's name in messages ("Claude Code").
	Product string
	// ConfigKey is the configuration key of its command path.
	ConfigKey string
	// MinVersion is the oldest version the engine drives ("X.Y.Z").
	MinVersion string
	// InstallHint is the command that installs the pinned version.
	InstallHint string
	// Env is added to the environment of `--version`.
	Env []string
}

// Unavailable is a readiness error: its message says what to do, and it
// matches engine.ErrUnavailable.
type Unavailable string

func (u Unavailable) Error() string        { return string(u) }
func (u Unavailable) Is(target error) bool { return target == engine.ErrUnavailable }

func unavailablef(format string, args ...any) error { return Unavailable(fmt.Sprintf(format, args...)) }

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

// Probe finds command (in PATH unless it holds a slash) and asks its
// version: the path and version found, and an Unavailable error when the
// CLI is missing, does not answer or is older than MinVersion.
func (c CLI) Probe(command string) (path, version string, err error) {
	path = command
	if !strings.Contains(command, "/") {
		if path, err = proc.LookPath(command); err != nil {
			return "", "", unavailablef("%q is not in PATH; install %s with `%s`, or set %s", command, c.Product, c.InstallHint, c.ConfigKey)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := append(proc.WithoutSecrets(os.Environ()), c.Env...)
	res, err := proc.Run(ctx, proc.Cmd{Args: []string{path, "--version"}, SeparateStderr: true, Env: env, Grace: time.Second})
	if err != nil {
		return "", "", unavailablef("%s: running %s --version: %v; install %s with `%s`", c.Product, path, err, c.Product, c.InstallHint)
	}
	out := strings.TrimSpace(res.Output)
	if res.ExitCode != 0 {
		return "", "", unavailablef("%s: %s --version exited %d: %s", c.Product, path, res.ExitCode, words.Clip(strings.TrimSpace(out+" "+res.Stderr), 200))
	}
	m := versionRE.FindString(out)
	if m == "" {
		return "", "", unavailablef("%s: %s --version said %q, not a version", c.Product, path, words.Clip(out, 80))
	}
	if Older(m, c.MinVersion) {
		return path, m, unavailablef("%s is %s %s, older than %s; upgrade with `%s`", path, c.Product, m, c.MinVersion, c.InstallHint)
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

// RetryUnready bounds how long a failed readiness check is kept.
const RetryUnready = 5 * time.Second

// Readiness is an engine's readiness check (engine.Engine.Ready) with its
// answer kept: a yes for Every, a no for at most RetryUnready (the user
// may be installing the CLI), so the scheduler may ask as often as it
// likes. It is safe for concurrent use.
type Readiness struct {
	cli     CLI
	command string
	every   time.Duration

	mu      sync.Mutex
	err     error
	at      time.Time
	path    string // the CLI's resolved path, once Ready found it
	version string
}

// NewReadiness checks cli, run as command (Probe), keeping a yes for
// every (zero means a minute). An engine embeds it: its Ready and
// Version are the engine's.
func NewReadiness(cli CLI, command string, every time.Duration) *Readiness {
	if every <= 0 {
		every = time.Minute
	}
	return &Readiness{cli: cli, command: command, every: every}
}

// Ready is the CLI's readiness (engine.Engine.Ready): found and at least
// its MinVersion.
func (r *Readiness) Ready() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	every := r.every
	if r.err != nil {
		every = min(every, RetryUnready)
	}
	if !r.at.IsZero() && time.Since(r.at) < every {
		return r.err
	}
	r.path, r.version, r.err = r.cli.Probe(r.command)
	r.at = time.Now()
	return r.err
}

// Version is the CLI's version as the last Ready found it ("" when none).
func (r *Readiness) Version() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.version
}

// Path is the CLI's path as the last Ready found it, else the command.
func (r *Readiness) Path() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return words.Or(r.path, r.command)
}

// SessionID is a session id derived from seed: a UUID (version 4 in
// form), the same for every run of a task without being stored.
func SessionID(seed string) string {
	h := sha256.Sum256([]byte(seed))
	h[6] = h[6]&0x0f | 0x40 // version 4 (random-looking)
	h[8] = h[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
