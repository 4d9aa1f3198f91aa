package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

type nudgeOpts struct {
	json bool
}

func (a *app) newNudgeCmd() *cobra.Command {
	var opts nudgeOpts
	cmd := &cobra.Command{
		Use:   "nudge ID MESSAGE...",
		Short: "Nudge a task: tell it, as the Watcher would, what to try instead",
		Long: `Nudge queues MESSAGE (the words after ID, joined by spaces) for the task as a
nudge: the task's model sees it at its next turn boundary, as a nudge like the
Watcher's own rather than a plain message (` + "`task send`" + `). Use it to steer a task
that is going in circles.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return &usageError{msg: fmt.Sprintf("%s takes a task ID and a MESSAGE, got %d argument(s)", cmd.CommandPath(), len(args)),
					hint: `neuraphage nudge t-4k2x9 run the failing test alone before changing more code`}
			}
			return nil
		},
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runNudge(cmd.Context(), opts, args[0], args[1:], cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the queued nudge as JSON")
	return cmd
}

func (a *app) runNudge(ctx context.Context, opts nudgeOpts, ref string, words []string, out io.Writer) error {
	text := strings.TrimSpace(strings.Join(words, " "))
	if text == "" {
		return &usageError{msg: "the nudge is empty", hint: `say what to try: neuraphage nudge ` + ref + ` "run the failing test alone first"`}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	m, err := c.Nudge(ctx, ref, text)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, m)
	}
	fmt.Fprintf(out, "nudge #%d queued for %s; it is delivered at its next turn boundary\n", m.ID, m.TaskID)
	return nil
}
