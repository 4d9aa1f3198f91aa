package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

type taskSendOpts struct {
	json, urgent bool
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
	cmd.Flags().BoolVar(&opts.urgent, "urgent", false, "interrupt the task's turn in flight instead of waiting for its next boundary")
	return cmd
}

func (a *app) runTaskSend(ctx context.Context, opts taskSendOpts, args []string, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	m, err := c.SendMessage(ctx, args[0], api.SendRequest{Text: args[1], Urgent: opts.urgent})
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, m)
	}
	urgent := ""
	if m.Urgent {
		urgent = " (urgent: it interrupts the turn in flight)"
	}
	fmt.Fprintf(out, "message #%d queued for %s%s\n", m.ID, m.TaskID, urgent)
	if m.TaskStatus == task.Merging {
		fmt.Fprintln(out, "its work is in the merge queue: the task reads the message only if the merge sends it back; "+
			"if the work lands, the message is returned undelivered (`neuraphage task show` lists it)")
	}
	return nil
}
