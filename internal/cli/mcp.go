package cli

import (
	"context"
	"sync"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/mcp"
)

func (a *app) newMCPCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the Model Context Protocol on stdio, for a host agent",
		Long: `Serve Neuraphage to a host agent (Claude Code, Codex, Gemini CLI, …) over the
Model Context Protocol on stdin and stdout: tools to spawn tasks, wait for them,
steer them and read their reports. The host starts this command; it starts the
daemon on first use, and tasks keep running when the host goes away.

  claude mcp add neuraphage -- neuraphage mcp

See docs/mcp.md.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			// Tool calls come concurrently; connect is for one caller.
			var mu sync.Mutex
			connect := func(ctx context.Context) (*client.Client, error) {
				mu.Lock()
				defer mu.Unlock()
				return a.connect(ctx)
			}
			return mcp.Serve(cmd.Context(), mcp.Options{Connect: connect, Version: a.env.Version}, a.env.Stdin, a.env.Stdout)
		}),
	}
}
