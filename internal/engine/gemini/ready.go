package gemini

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
)

// ErrUnavailable is what Ready's errors match (errors.Is): the CLI is
// missing, too old or does not answer.
var ErrUnavailable = engine.ErrUnavailable

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

// cli is the readiness check's view of the CLI.
var cli = extproc.CLI{Product: "Gemini CLI", ConfigKey: "engines.gemini.command", MinVersion: MinVersion, InstallHint: InstallHint, Env: []string{"GEMINI_CLI_NO_RELAUNCH=true"}}

// probe finds command and asks its version.
func probe(command string) (path, version string, err error) { return cli.Probe(command) }

// Older reports whether version a is older than b (both "X.Y.Z").
func Older(a, b string) bool { return extproc.Older(a, b) }
