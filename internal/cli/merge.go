package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// mergeSafety is what every merge command promises; their help repeats it.
const mergeSafety = `The queue never touches your uncommitted work: a dirty checkout of the target
branch makes the entry wait, and nothing resets, forces or deletes a branch.`

func (a *app) newMergeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "merge",
		Short: "Show and steer the merge queue that lands tasks' work",
		Long: `The merge queue lands each finished task's branch on its base branch, one
entry at a time per target, first come first served: it checks for conflicts,
brings the branch up to date with the target, runs the configured gate command
and then moves the target (or opens a pull request with merge.pr). A conflict or
a failed gate goes back to the task to fix, or parks the entry for you.

` + mergeSafety,
		Args: noArgs,
		RunE: help,
	}
	cmd.AddCommand(a.newMergeStatusCmd(),
		a.newMergeActionCmd("enqueue", "Put a finished task's branch in the merge queue",
			`Enqueue puts a task's branch in the merge queue of its base branch. The task
must have finished its work (merging, paused, completed, failed or cancelled) and
have a worktree; its uncommitted work is committed on its branch first. A paused
task moves to merging. A task still queued, running or waiting is refused: its
work is enqueued when it completes (with merge.auto).`),
		a.newMergeActionCmd("retry", "Take a task's parked or waiting merge up again",
			`Retry takes a task's merge up again: a waiting entry is tried at once; when the
task's last entry closed (parked, sent back, cancelled), a new entry is queued.`),
		a.newMergeActionCmd("cancel", "Take a task's entry out of the merge queue",
			`Cancel takes a task's open entry out of the merge queue, stopping it if it is
being processed. A merging task is paused; its work stays on its branch, and
`+"`merge enqueue`"+` queues it again.`),
	)
	return cmd
}

type mergeStatusOpts struct {
	recent int
	json   bool
}

func (a *app) newMergeStatusCmd() *cobra.Command {
	var opts mergeStatusOpts
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the merge queue: open entries, then recent ones",
		Long: `Status shows the open entries of the merge queue, in order, with their
position in their target's queue, state (queued, running, waiting), attempts and
why they are in that state; then the newest closed entries (landed, pr,
sent_back, yielded, parked, cancelled) with the commit that landed or the pull request.
Status changes nothing.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runMergeStatus(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().IntVar(&opts.recent, "recent", 20, "how many closed entries to show (0: none)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func (a *app) runMergeStatus(ctx context.Context, opts mergeStatusOpts, out io.Writer) error {
	if opts.recent < 0 {
		return &usageError{msg: fmt.Sprintf("--recent %d: the number of entries cannot be negative", opts.recent), hint: "e.g. --recent 50, or --recent 0 for the open entries only"}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	st, err := c.MergeStatus(ctx, opts.recent)
	if err != nil {
		return err
	}
	if opts.json {
		if st.Open == nil {
			st.Open = []api.MergeEntry{}
		}
		if st.Recent == nil {
			st.Recent = []api.MergeEntry{}
		}
		return writeJSON(out, st)
	}
	writeMergeStatus(out, st, opts.recent > 0, time.Now())
	return nil
}

type mergeActionOpts struct {
	reason string
	json   bool
}

// newMergeActionCmd builds enqueue, retry or cancel.
func (a *app) newMergeActionCmd(action, short, long string) *cobra.Command {
	var opts mergeActionOpts
	cmd := &cobra.Command{
		Use:   action + " ID",
		Short: short,
		Long:  long + "\n\n" + mergeSafety,
		Args:  exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			var e api.MergeEntry
			switch action {
			case "enqueue":
				e, err = c.MergeEnqueue(cmd.Context(), args[0])
			case "retry":
				e, err = c.MergeRetry(cmd.Context(), args[0])
			default:
				e, err = c.MergeCancel(cmd.Context(), args[0], opts.reason)
			}
			if err != nil {
				return err
			}
			if opts.json {
				return writeJSON(cmd.OutOrStdout(), e)
			}
			writeMergeEntry(cmd.OutOrStdout(), e)
			return nil
		}),
	}
	if action == "cancel" {
		cmd.Flags().StringVar(&opts.reason, "reason", "", "why, recorded with the entry")
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the entry as JSON")
	return cmd
}

// writeMergeEntry renders an entry after a change: its state, then its
// detail.
func writeMergeEntry(out io.Writer, e api.MergeEntry) {
	fmt.Fprintf(out, "%s: %s → %s is %s (entry %d)\n", e.TaskID, e.Branch, e.Target, e.State, e.ID)
	if e.Detail != "" {
		writeBlock(out, "  ", "  ", e.Detail, 10, 0)
	}
}

// writeMergeStatus renders the queue: the open entries with their position
// in their target's queue, then (with recent) the newest closed ones.
func writeMergeStatus(out io.Writer, st api.MergeStatus, recent bool, now time.Time) {
	if len(st.Open) == 0 {
		fmt.Fprintln(out, "merge queue: nothing open")
	} else {
		fmt.Fprintf(out, "merge queue: %d open\n", len(st.Open))
		tw := newTable(out)
		fmt.Fprintln(tw, "POS\tTASK\tBRANCH → TARGET\tSTATE\tATTEMPTS\tDETAIL")
		pos := map[string]int{}
		for _, e := range st.Open {
			k := e.Repo + "\x00" + e.Target
			pos[k]++
			fmt.Fprintf(tw, "%d\t%s\t%s → %s\t%s\t%d\t%s\n", pos[k], e.TaskID, e.Branch, e.Target, e.State, e.Attempts, dash(truncate(e.Detail, 60)))
		}
		tw.Flush()
	}
	if !recent {
		return
	}
	if len(st.Recent) == 0 {
		fmt.Fprintln(out, "\nno closed entries yet")
		return
	}
	fmt.Fprintln(out, "\nrecent (newest last)")
	tw := newTable(out)
	fmt.Fprintln(tw, "TASK\tTARGET\tSTATE\tRESULT\tWHEN\tDETAIL")
	for _, e := range st.Recent {
		result := "-"
		switch {
		case e.PRURL != "":
			result = e.PRURL
		case e.Commit != "":
			result = words.ShortCommit(e.Commit)
		}
		when := e.UpdatedAt
		if e.FinishedAt != nil {
			when = *e.FinishedAt
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.TaskID, e.Target, e.State, result, age(now, when), dash(truncate(e.Detail, 60)))
	}
	tw.Flush()
}
