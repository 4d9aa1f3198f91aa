package cli

import (
	"context"
	"fmt"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type taskShowOpts struct {
	json bool
}

func (a *app) newTaskShowCmd() *cobra.Command {
	var opts taskShowOpts
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one task in full",
		Args:  exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runTaskShow(cmd.Context(), opts, args, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func (a *app) runTaskShow(ctx context.Context, opts taskShowOpts, args []string, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	d, err := c.GetTask(ctx, args[0])
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, d)
	}
	t := d.Task
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(out, "%-12s %s\n", k+":", v)
		}
	}
	line("id", string(t.ID))
	line("status", string(t.Status))
	line("reason", t.CloseReason)
	if t.ResumePending {
		line("resume", "pending: resumes from its last turn when dispatched")
	}
	line("description", t.Description)
	line("context", t.Context)
	line("priority", fmt.Sprint(t.Priority))
	line("tags", strings.Join(t.Tags, ", "))
	line("parent", string(t.ParentID))
	persona := t.Persona
	if persona != "" && t.PersonaVia != "" {
		persona += " (via " + t.PersonaVia + ")"
	}
	line("persona", persona)
	if t.Phase != nil {
		ph := fmt.Sprintf("%d %s", t.Phase.Index+1, t.Phase.Name)
		if t.Phase.Review && !strings.HasPrefix(strings.ToLower(t.Phase.Name), "review") {
			ph += " (review)"
		}
		line("phase", ph)
	}
	line("engine", t.Engine)
	line("model", t.Model)
	line("repo", t.Repo)
	line("branch", t.Branch)
	line("worktree", t.Worktree)
	if len(t.Workflow) > 0 {
		fmt.Fprintf(out, "%-12s %d phase%s, each run by child tasks (`neuraphage task list` shows them)\n", "workflow:", len(t.Workflow), plural(len(t.Workflow)))
		writePhases(out, strings.Repeat(" ", 13), t.Workflow, 2)
	}
	writeManifest(out, t.Manifest)
	line("readiness", string(d.Readiness))
	if len(d.Blockers) > 0 {
		ids := make([]string, len(d.Blockers))
		for i, b := range d.Blockers {
			ids[i] = string(b)
		}
		line("waits for", strings.Join(ids, ", "))
	}
	if t.Status == task.Running {
		// The overlap radar's pairs of this task; a daemon without it says
		// nothing.
		if ps, err := c.Overlap(ctx, string(t.ID)); err == nil {
			for _, p := range ps {
				other := p.B
				if other == string(t.ID) {
					other = p.A
				}
				s := fmt.Sprintf("%s on %s (forecast %s", other, strings.Join(p.Files, ", "), p.Forecast)
				if l := p.LinesSummary(); l != "" {
					s += "; " + l
				}
				line("overlaps", s+")")
			}
		}
	}
	b := t.Budget
	if b.MaxCostUSD > 0 || b.MaxTokens > 0 || b.MaxIterations > 0 {
		line("budget", fmt.Sprintf("$%.2f, %d tokens, %d iterations (0: no limit)", b.MaxCostUSD, b.MaxTokens, b.MaxIterations))
	}
	u := t.Usage
	line("usage", fmt.Sprintf("%d iterations, %d in / %d out tokens, $%.4f", u.Iterations, u.InputTokens, u.OutputTokens, u.CostUSD))
	line("created", t.CreatedAt.Local().Format(time.RFC3339))
	if t.StartedAt != nil {
		line("started", t.StartedAt.Local().Format(time.RFC3339))
	}
	if t.FinishedAt != nil {
		line("finished", t.FinishedAt.Local().Format(time.RFC3339))
	}
	for _, m := range d.Pending {
		kind := ""
		if m.Kind != "" && m.Kind != "message" {
			kind = m.Kind + " "
		}
		line("queued msg", fmt.Sprintf("%s#%d from %s: %s", kind, m.ID, m.Source, truncate(m.Text, 60)))
	}
	for _, m := range d.Returned {
		kind := ""
		if m.Kind != "" && m.Kind != "message" {
			kind = m.Kind + " "
		}
		line("returned msg", fmt.Sprintf("%s#%d from %s, not delivered: the task %s first: %s", kind, m.ID, m.Source, t.Status, truncate(m.Text, 60)))
	}
	return nil
}
