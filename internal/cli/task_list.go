package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// tablePage is how many tasks the table shows when --limit is not given.
const tablePage = 100

type taskListOpts struct {
	statuses []string
	all      bool
	json     bool
	limit    int
	after    string
}

func (a *app) newTaskListCmd(use string) *cobra.Command {
	var opts taskListOpts
	cmd := &cobra.Command{
		Use:   use,
		Short: "List tasks (by default those not finished)",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("limit") && !opts.json {
				opts.limit = tablePage
			}
			return a.runTaskList(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	if use == "list" {
		cmd.Aliases = []string{"ls", "ps"}
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.statuses, "status", nil, "only these statuses (comma-separated): queued, running, waiting, paused, completed, failed, cancelled")
	f.BoolVar(&opts.all, "all", false, "include finished tasks")
	f.BoolVar(&opts.json, "json", false, `print {"tasks":[…],"next":ID}: the page of tasks and, when more remain, the --after of the next`)
	f.IntVar(&opts.limit, "limit", 0, fmt.Sprintf("list at most N tasks, 0 for all (default: %d in the table, all with --json)", tablePage))
	f.StringVar(&opts.after, "after", "", "list the tasks after this one (the next page's cursor)")
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
	if opts.limit < 0 {
		return &usageError{msg: fmt.Sprintf("--limit %d: want 0 (all) or more", opts.limit), hint: "e.g. --limit 50"}
	}
	q := client.ListQuery{Statuses: statuses, All: opts.all, After: opts.after, Limit: opts.limit}
	if opts.json {
		// Passed through as the daemon sent it, its framing checked, in
		// chunks: listing 10,000 tasks must stay fast.
		w := jsonOut(out)
		return a.reach(ctx, func(c *client.Client) error { return c.WriteListJSON(ctx, q, w) })
	}
	var (
		c *client.Client
		l api.TaskList
	)
	err := a.reach(ctx, func(cc *client.Client) (err error) {
		c = cc
		l, err = c.ListPage(ctx, q)
		return err
	})
	if err != nil {
		return err
	}
	ts := l.Tasks
	if len(ts) == 0 {
		switch {
		case opts.after != "":
			fmt.Fprintf(out, "no tasks after %s\n", opts.after)
		case opts.all || len(statuses) > 0:
			fmt.Fprintln(out, "no tasks")
		default:
			fmt.Fprintln(out, "no unfinished tasks (--all shows finished ones)")
		}
		return nil
	}
	now := time.Now()
	doing := doingNow(ctx, c, ts)
	tw := newTable(out)
	fmt.Fprintln(tw, "ID\tSTATUS\tPRI\tAGE\tPERSONA\tTOKENS\tCOST\tNOW\tDESCRIPTION")
	for _, t := range ts {
		st := string(t.Status)
		if t.ResumePending {
			st += "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t$%.2f\t%s\t%s\n", t.ID, st, t.Priority, age(now, t.CreatedAt),
			dash(t.Persona), tokens(t.Usage), t.Usage.CostUSD, dash(truncate(words.OneLine(doing[t.ID]), 40)), truncate(t.Description, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if l.Next != "" {
		fmt.Fprintf(out, "more tasks: --after %s for the next %d (--limit 0 for all)\n", l.Next, opts.limit)
	}
	return nil
}
