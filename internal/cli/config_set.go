package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/config"
)

func (a *app) newConfigSetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Change one setting in the config file, keeping its comments and the rest",
		Long: `Set writes KEY: VALUE into the config file, keeping comments, order and every
other setting. The result is validated first: on any error nothing is written.
A running daemon reads the file again when it restarts.`,
		Args: exactArgs("KEY", "VALUE"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return config.Keys(), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runConfigSet(args[0], args[1], cmd.OutOrStdout())
		}),
	}
}

func (a *app) runConfigSet(key, value string, out io.Writer) error {
	p, err := a.getPaths()
	if err != nil {
		return err
	}
	if err := config.Set(p.ConfigFile, key, value); err != nil {
		return asUsage(err)
	}
	fmt.Fprintf(out, "%s set in %s\n", key, p.ConfigFile)
	return nil
}
