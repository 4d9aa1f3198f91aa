package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

type configPathOpts struct {
	json bool
}

func (a *app) newConfigPathCmd() *cobra.Command {
	var opts configPathOpts
	cmd := &cobra.Command{
		Use:   "path",
		Short: "Print where the config file and the daemon's state live",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runConfigPath(opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print every path as JSON")
	return cmd
}

func (a *app) runConfigPath(opts configPathOpts, out io.Writer) error {
	p, err := a.getPaths()
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, p)
	}
	fmt.Fprintln(out, p.ConfigFile)
	return nil
}
