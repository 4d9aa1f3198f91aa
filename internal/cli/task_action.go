package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
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
		Use:   string(action) + " ID [ID...]",
		Short: short,
		Args:  idArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runAction(cmd.Context(), action, opts, args, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().StringVar(&opts.reason, "reason", "", "why, recorded with the change")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the task as JSON (several: {\"results\":[{\"ref\",\"task\"|\"error\"}]})")
	return cmd
}

func (a *app) runAction(ctx context.Context, action client.Action, opts actionOpts, args []string, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	if len(args) > 1 {
		return a.runActionMany(ctx, c, action, opts, args, out)
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

// idArgs requires one task id or more, none empty.
func idArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: cmd.CommandPath() + " takes one task id or more", hint: "usage: " + cmd.UseLine()}
	}
	if len(args) > api.MaxBulkRefs {
		return &usageError{msg: fmt.Sprintf("%s takes at most %d task ids, got %d", cmd.CommandPath(), api.MaxBulkRefs, len(args)), hint: "run it on fewer at a time"}
	}
	names := make([]string, len(args))
	for i := range names {
		names[i] = "ID"
	}
	return emptyIDs(cmd, names, args)
}

// runActionMany applies action to every task in args in one call: each
// changes or fails on its own, a line each; any failure makes the command
// fail (exit 1) after all were tried.
func (a *app) runActionMany(ctx context.Context, c *client.Client, action client.Action, opts actionOpts, args []string, out io.Writer) error {
	res, err := c.ActMany(ctx, args, action, opts.reason)
	if err != nil {
		return err
	}
	if opts.json {
		if err := writeJSON(out, res); err != nil {
			return err
		}
	} else {
		for _, it := range res.Results {
			switch {
			case it.Error != nil:
				fmt.Fprintf(out, "%s: %s\n", it.Ref, it.Error.Message)
			case action == client.Pause && it.Task.Status == task.Running:
				fmt.Fprintf(out, "%s is running; it pauses at its next turn boundary, keeping its conversation\n", it.Task.ID)
			default:
				fmt.Fprintf(out, "%s is %s\n", it.Task.ID, it.Task.Status)
			}
		}
	}
	if n := res.Failed(); n > 0 {
		return fmt.Errorf("%s: %d of %d tasks refused (see above)", action, n, len(args))
	}
	return nil
}
