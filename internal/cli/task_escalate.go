package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

type taskEscalateOpts struct {
	to, reason string
	json       bool
}

func (a *app) newTaskEscalateCmd() *cobra.Command {
	var opts taskEscalateOpts
	cmd := &cobra.Command{
		Use:   "escalate ID",
		Short: "Move a task to a stronger persona, keeping its conversation and worktree",
		Long: `Escalate moves a task one step up the escalation chain
(task-defaults.escalation-chain in personas.yaml, ` + "`neuraphage persona list`" + ` shows it),
or to the persona --to names. A running task changes at its next turn
boundary: the new persona's system prompt and model take over the same
conversation, and the task is told why (--reason). A task that is not running
changes at once.

A task at the top of the chain, or a --to persona the task already runs as,
is refused (exit 2, with why). Your own escalations are allowed even when
task-defaults.allow-escalation keeps supervisors from escalating.`,
		Args: exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runTaskEscalate(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.to, "to", "", "persona to move to (default: the next one up the escalation chain)")
	f.StringVar(&opts.reason, "reason", "", "why, told to the task with its new persona")
	f.BoolVar(&opts.json, "json", false, `print {"task_id","from","to","applied"}`)
	return cmd
}

func (a *app) runTaskEscalate(ctx context.Context, opts taskEscalateOpts, ref string, out io.Writer) error {
	if opts.to != "" {
		if err := a.checkPersona("--to", opts.to); err != nil {
			return err
		}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	e, err := c.Escalate(ctx, ref, opts.to, opts.reason)
	var ce *client.Error
	if errors.As(err, &ce) && ce.Code() == api.CodeInvalid && ce.Body.Hint == "" {
		// Refused: the top of the chain, the persona it runs as already.
		return &usageError{msg: err.Error(), hint: "`neuraphage persona list` shows the escalation chain; --to PERSONA names the persona to move to"}
	}
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, e)
	}
	fmt.Fprintln(out, escalationLine(e))
	return nil
}

// escalationLine: "t-abc12: mid → senior (at its next turn boundary)".
func escalationLine(e api.Escalation) string {
	when := "at its next turn boundary"
	if e.Applied {
		when = "now"
	}
	return fmt.Sprintf("%s: %s → %s (%s)", e.TaskID, dash(e.From), e.To, when)
}
