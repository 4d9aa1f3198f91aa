package claude

import (
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
)

// ErrUnavailable is what Ready's errors match (errors.Is): the CLI is
// missing, too old or does not answer.
var ErrUnavailable = engine.ErrUnavailable

// cli is the readiness check's view of the CLI: Ready (extproc.Readiness)
// finds it and checks it is at least MinVersion, keeping a yes for
// Options.ReadyEvery.
var cli = extproc.CLI{Product: "Claude Code", ConfigKey: "engines.claude.command", MinVersion: MinVersion, InstallHint: InstallHint}

// Older reports whether version a is older than b (both "X.Y.Z").
func Older(a, b string) bool { return extproc.Older(a, b) }
