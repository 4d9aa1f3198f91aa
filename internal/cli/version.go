package cli

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
)

type versionOpts struct {
	json bool
}

func (a *app) newVersionCmd() *cobra.Command {
	var opts versionOpts
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runVersion(opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func (a *app) runVersion(opts versionOpts, out io.Writer) error {
	if opts.json {
		return writeJSON(out, map[string]string{"version": a.env.Version, "go": runtime.Version()})
	}
	fmt.Fprintf(out, "neuraphage %s (%s)\n", a.env.Version, runtime.Version())
	return nil
}
