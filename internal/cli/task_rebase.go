package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

type taskRebaseOpts struct {
	all  bool
	json bool
}

func (a *app) newTaskRebaseCmd() *cobra.Command {
	var opts taskRebaseOpts
	cmd := &cobra.Command{
		Use:   "rebase ID | --all",
		Short: "Have a task rebase its branch onto main at its next tool boundary",
		Long: `Rebase asks Neuraphage to rebase a task's branch onto the main branch it will
merge into, as a blocking notice from you: at the task's next tool boundary the
branch is rebased, its uncommitted files carried over, and the task is told
what changed. A rebase that would conflict, or does, is undone and leaves the
worktree as it was; the task is told the conflicting files. A paused task
rebases when it is resumed, a queued one when it starts.

With --all, every task whose branch is behind main is asked. A task in the
merge queue, a finished one or one without a worktree is refused (exit 1 for
one task; with --all it is listed as refused). ` + "`neuraphage rebase status`" + ` shows
where every branch stands.`,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runTaskRebase(cmd.Context(), opts, args, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "every task whose branch is behind main")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the answer as JSON (an array with --all)")
	return cmd
}

func (a *app) runTaskRebase(ctx context.Context, opts taskRebaseOpts, args []string, out io.Writer) error {
	switch {
	case opts.all && len(args) > 0:
		return &usageError{msg: "task rebase takes a task ID or --all, not both", hint: "e.g. `neuraphage task rebase t-4k2x9`, or `neuraphage task rebase --all`"}
	case !opts.all && len(args) != 1:
		return &usageError{msg: fmt.Sprintf("task rebase takes one task ID or --all, got %d argument(s)", len(args)),
			hint: "e.g. `neuraphage task rebase t-4k2x9`, or `neuraphage task rebase --all`; `neuraphage rebase status` shows which tasks are behind main"}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	if !opts.all {
		r, err := c.RebaseTask(ctx, args[0])
		if err != nil {
			return err
		}
		if opts.json {
			return writeJSON(out, r)
		}
		writeRebaseRequests(out, []api.RebaseRequest{r})
		return nil
	}
	rs, err := c.RebaseAll(ctx)
	if err != nil {
		return err
	}
	if opts.json {
		if rs == nil {
			rs = []api.RebaseRequest{}
		}
		return writeJSON(out, rs)
	}
	if len(rs) == 0 {
		fmt.Fprintln(out, "no task is behind main: nothing to rebase")
		return nil
	}
	writeRebaseRequests(out, rs)
	return nil
}

// writeRebaseRequests renders the answers to `task rebase`, one line a task.
func writeRebaseRequests(out io.Writer, rs []api.RebaseRequest) {
	for _, r := range rs {
		fmt.Fprintf(out, "%s: %s\n", r.TaskID, rebaseOutcome(r))
	}
}

// rebaseOutcome is what became of one task's rebase request:
// "requested — rebases at its next tool boundary (3 commits behind main)".
func rebaseOutcome(r api.RebaseRequest) string {
	switch r.Outcome {
	case "requested":
		s := "requested"
		if r.Note != "" {
			s += " — " + r.Note
		}
		if r.Behind > 0 {
			main := r.Main
			if main == "" {
				main = "main"
			}
			s += fmt.Sprintf(" (%d commit%s behind %s)", r.Behind, plural(r.Behind), main)
		}
		return s
	case "up_to_date":
		if r.Note != "" {
			return "up to date — " + r.Note
		}
		return "up to date"
	case "refused":
		return "refused: " + dash(r.Note)
	}
	if r.Note != "" {
		return r.Outcome + ": " + r.Note
	}
	return dash(r.Outcome)
}
