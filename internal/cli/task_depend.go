package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

type taskDependOpts struct {
	json bool
}

func (a *app) newTaskDependCmd() *cobra.Command {
	var opts taskDependOpts
	cmd := &cobra.Command{
		Use:   "depend ID BLOCKER",
		Short: "Make task ID wait until task BLOCKER completes",
		Args:  exactArgs("ID", "BLOCKER"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runTaskDepend(cmd.Context(), opts, args, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the task's details as JSON")
	return cmd
}

func (a *app) runTaskDepend(ctx context.Context, opts taskDependOpts, args []string, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	d, err := c.Depend(ctx, args[0], args[1])
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, d)
	}
	fmt.Fprintf(out, "%s waits for %d task(s); it is %s\n", d.Task.ID, len(d.Blockers), d.Readiness)
	return nil
}
