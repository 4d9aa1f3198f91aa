package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

type taskReportOpts struct {
	json bool
}

func (a *app) newTaskReportCmd() *cobra.Command {
	var opts taskReportOpts
	cmd := &cobra.Command{
		Use:   "report ID",
		Short: "Summarize a task: status and duration, PR, changed files with +/- counts, summary, logs",
		Args:  exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runTaskReport(cmd.Context(), opts, args, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func (a *app) runTaskReport(ctx context.Context, opts taskReportOpts, args []string, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	r, err := c.TaskReport(ctx, args[0])
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, r)
	}
	_, err = io.WriteString(out, r.Markdown)
	return err
}
