package codex

import (
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
)

// ErrUnavailable is what Ready's errors match (errors.Is): the CLI is
// missing, too old or does not answer.
var ErrUnavailable = engine.ErrUnavailable

// Ready implements engine.Engine: the CLI is found and at least
// MinVersion. A yes is kept for Options.ReadyEvery, a no for at most a few
// seconds (extproc.Readiness), so the scheduler may ask as often as it
// likes.
func (e *Engine) Ready() error { return e.ready.Check() }

// Version is the CLI's version as the last Ready found it ("" when none).
func (e *Engine) Version() string { return e.ready.Version() }

func (e *Engine) resolved() string { return e.ready.Path() }

// cli is the readiness check's view of the CLI.
var cli = extproc.CLI{Product: "Codex", ConfigKey: "engines.codex.command", MinVersion: MinVersion, InstallHint: InstallHint}

// Older reports whether version a is older than b (both "X.Y.Z").
func Older(a, b string) bool { return extproc.Older(a, b) }
