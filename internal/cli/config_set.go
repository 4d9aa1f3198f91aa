package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
)

func (a *app) newConfigSetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Change one setting in the config file, keeping its comments and the rest",
		Long: `Set writes KEY: VALUE into the config file, keeping comments, order and every
other setting. The result is validated first: on any error nothing is written.
A running daemon reads the file again when it restarts; set says so when one
runs. A VALUE starting with - (config set budget.task_usd -1) is taken as the
value, not as a flag.`,
		Args: exactArgs("KEY", "VALUE"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return config.Keys(), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runConfigSet(cmd.Context(), args[0], args[1], cmd.OutOrStdout())
		}),
	}
	// Flags end at KEY, so that a negative VALUE is not read as one.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

func (a *app) runConfigSet(ctx context.Context, key, value string, out io.Writer) error {
	p, err := a.getPaths()
	if err != nil {
		return err
	}
	if err := config.Set(p.ConfigFile, key, value); err != nil {
		return asUsage(err)
	}
	fmt.Fprintf(out, "%s set in %s\n", key, p.ConfigFile)
	// The daemon reads its config once, at start: say whether one runs on
	// the old value. Only asks; never starts a daemon.
	c := client.New(p.Socket)
	defer c.Close()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	switch h, err := c.Health(pctx); {
	case err == nil:
		fmt.Fprintf(out, "the running daemon (pid %d) keeps the old value until it restarts: neuraphage daemon stop && neuraphage daemon start\n", h.PID)
	case errors.Is(err, client.ErrUnreachable):
		fmt.Fprintln(out, "no daemon is running; it takes the new value when it starts")
	default:
		fmt.Fprintf(out, "could not ask the daemon whether it runs (%v); a running daemon takes the new value when it restarts\n", err)
	}
	return nil
}
