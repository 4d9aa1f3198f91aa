package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

type taskSendOpts struct {
	json bool
}

func (a *app) newTaskSendCmd() *cobra.Command {
	var opts taskSendOpts
	cmd := &cobra.Command{
		Use:   "send ID MESSAGE",
		Short: "Queue a message for a task; it sees it at its next turn boundary",
		Args:  exactArgs("ID", "MESSAGE"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runTaskSend(cmd.Context(), opts, args, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the queued message as JSON")
	return cmd
}

func (a *app) runTaskSend(ctx context.Context, opts taskSendOpts, args []string, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	m, err := c.Send(ctx, args[0], args[1])
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, m)
	}
	fmt.Fprintf(out, "message #%d queued for %s\n", m.ID, m.TaskID)
	return nil
}
