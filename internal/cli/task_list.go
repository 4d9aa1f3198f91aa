package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

type taskListOpts struct {
	statuses []string
	all      bool
	json     bool
}

func (a *app) newTaskListCmd(use string) *cobra.Command {
	var opts taskListOpts
	cmd := &cobra.Command{
		Use:   use,
		Short: "List tasks (by default those not finished)",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runTaskList(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	if use == "list" {
		cmd.Aliases = []string{"ls", "ps"}
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.statuses, "status", nil, "only these statuses (comma-separated): queued, running, waiting, paused, completed, failed, cancelled")
	f.BoolVar(&opts.all, "all", false, "include finished tasks")
	f.BoolVar(&opts.json, "json", false, "print a JSON array of tasks")
	return cmd
}

func (a *app) runTaskList(ctx context.Context, opts taskListOpts, out io.Writer) error {
	var statuses []task.Status
	for _, s := range opts.statuses {
		st, err := task.ParseStatus(s)
		if err != nil {
			return &usageError{msg: "--status: " + err.Error(), hint: "e.g. --status queued,running"}
		}
		statuses = append(statuses, st)
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	if opts.json {
		// Passed through as the daemon sent it (an array, one task per line):
		// listing 10,000 tasks must stay fast.
		raw, err := c.ListTasksJSON(ctx, statuses, opts.all)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(jsonOut(out), "%s\n", raw)
		return err
	}
	ts, err := c.ListTasks(ctx, statuses, opts.all)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		if opts.all || len(statuses) > 0 {
			fmt.Fprintln(out, "no tasks")
		} else {
			fmt.Fprintln(out, "no unfinished tasks (--all shows finished ones)")
		}
		return nil
	}
	now := time.Now()
	tw := newTable(out)
	fmt.Fprintln(tw, "ID\tSTATUS\tPRI\tAGE\tPERSONA\tTOKENS\tCOST\tDESCRIPTION")
	for _, t := range ts {
		st := string(t.Status)
		if t.ResumePending {
			st += "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t$%.2f\t%s\n", t.ID, st, t.Priority, age(now, t.CreatedAt),
			dash(t.Persona), tokens(t.Usage), t.Usage.CostUSD, truncate(t.Description, 60))
	}
	return tw.Flush()
}
