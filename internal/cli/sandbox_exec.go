package cli

import (
	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

// newSandboxExecCmd is the internal launcher the daemon runs every task
// command through (docs/sandbox.md): it confines itself with Landlock, then
// replaces itself with the command. It is not for people, so it is hidden;
// its flags are the sandbox package's, parsed there.
func (a *app) newSandboxExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:                sandbox.Command + " [--write PATH]... [--deny-read PATH]... [--net allow|deny|PORTS] [--degrade] -- PROGRAM [ARGS...]",
		Short:              "Run a program confined by the task sandbox (internal: the daemon runs it)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			// Exec returns only when it ran nothing.
			return sandbox.Exec(args)
		}),
	}
}
