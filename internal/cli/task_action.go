package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// actionOpts are the flags shared by cancel, pause and resume.
type actionOpts struct {
	reason string
	json   bool
}

// newActionCmd builds one of the life-changing commands; each has its own file.
func (a *app) newActionCmd(action client.Action, short string) *cobra.Command {
	var opts actionOpts
	cmd := &cobra.Command{
		Use:   string(action) + " ID",
		Short: short,
		Args:  exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runAction(cmd.Context(), action, opts, args, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().StringVar(&opts.reason, "reason", "", "why, recorded with the change")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the task as JSON")
	return cmd
}

func (a *app) runAction(ctx context.Context, action client.Action, opts actionOpts, args []string, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	t, err := c.Act(ctx, args[0], action, opts.reason)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, t)
	}
	if action == client.Pause && t.Status == task.Running {
		fmt.Fprintf(out, "%s is running; it pauses at its next turn boundary, keeping its conversation\n", t.ID)
		return nil
	}
	fmt.Fprintf(out, "%s is %s\n", t.ID, t.Status)
	return nil
}
