package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

type healthOpts struct {
	json bool
}

func (a *app) newHealthCmd() *cobra.Command {
	var opts healthOpts
	cmd := &cobra.Command{
		Use:   "health [ID]",
		Short: "Show how the Watcher sees the running tasks",
		Long: `Health shows the Watcher's view of every task it watches: its status
(healthy, struggling, stuck, runaway for a running task; paused, waiting or
queued for a task not running, which has no score; unknown before the Watcher
saw it; unsupervised for a task created with --no-supervision), what it waits
on (a model call with its age and attempt: "waiting on model 95 s, attempt 2
of 5"), how sure the Watcher is, the step of the intervention ladder reached
(none, hint, warning, critical, escalated, paused, aborted), how many nudges
went unheeded, when it last looked, and the check and diagnosis behind the
status.

With an ID, one task in detail: its counters since its last progress and the
steps of its run that the diagnosis rests on (the evidence).`,
		Args: maxArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			ref := ""
			if len(args) == 1 {
				ref = args[0]
			}
			return a.runHealth(cmd.Context(), opts, ref, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON: an array of task health, or with an ID that task's")
	return cmd
}

func (a *app) runHealth(ctx context.Context, opts healthOpts, ref string, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	hs, err := c.SupervisionHealth(ctx, ref)
	if err != nil {
		return err
	}
	now := time.Now()
	if ref != "" {
		if len(hs) == 0 {
			return fmt.Errorf("the Watcher knows nothing of task %s yet", ref)
		}
		if opts.json {
			return writeJSON(out, hs[0])
		}
		writeTaskHealth(out, hs[0], now, time.Local)
		return nil
	}
	if opts.json {
		if hs == nil {
			hs = []api.TaskHealth{}
		}
		return writeJSON(out, hs)
	}
	writeHealthTable(out, hs, now)
	return nil
}

// writeHealthTable renders a row per task.
func writeHealthTable(out io.Writer, hs []api.TaskHealth, now time.Time) {
	if len(hs) == 0 {
		fmt.Fprintln(out, "no task is being watched: the Watcher watches tasks from when they start running")
		return
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "TASK\tSTATUS\tCONFIDENCE\tACTIVITY\tLADDER\tUNHEEDED\tLAST CHECK\tCHECK\tDIAGNOSIS")
	for _, h := range hs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", h.TaskID, dash(h.Status), confidence(h), dash(h.Activity), dash(h.Ladder),
			h.Unheeded, ageOf(now, &h.LastCheck), dash(h.Check), dash(truncate(h.Diagnosis, 70)))
	}
	tw.Flush()
}

// confidence renders how sure the Watcher is; "-" for a task it does not
// judge (not running, unsupervised, unknown) or has not judged yet.
func confidence(h api.TaskHealth) string {
	switch h.Status {
	case "healthy", "struggling", "stuck", "runaway":
		if h.Confidence == 0 && h.Tier == 0 {
			return "-" // not judged yet
		}
		return fmt.Sprintf("%.2f", h.Confidence)
	}
	return "-"
}

// writeTaskHealth renders one task's health in full.
func writeTaskHealth(out io.Writer, h api.TaskHealth, now time.Time, loc *time.Location) {
	row := func(label, value string) { fmt.Fprintf(out, "%-13s%s\n", label+":", value) }
	row("task", string(h.TaskID))
	status := dash(h.Status)
	var about []string
	if h.Tier > 0 {
		about = append(about, fmt.Sprintf("tier %d", h.Tier))
	}
	if c := confidence(h); c != "-" {
		about = append(about, "confidence "+c)
	}
	if len(about) > 0 {
		status += " (" + strings.Join(about, ", ") + ")"
	}
	row("status", status)
	if a := h.Activity; a != "" {
		row("activity", a)
	}
	if m := h.Model; m != nil && m.LastError != "" {
		row("model error", words.OneLine(m.LastError)+" (the last attempt's)")
	}
	if h.Check != "" {
		row("check", h.Check)
	}
	if h.Diagnosis != "" {
		row("diagnosis", words.OneLine(h.Diagnosis))
	}
	ladder := dash(h.Ladder)
	if h.Unheeded > 0 {
		ladder += fmt.Sprintf(" (%d nudge%s unheeded)", h.Unheeded, plural(h.Unheeded))
	}
	row("ladder", ladder)
	row("last check", when(now, h.LastCheck, loc))
	row("steps", fmt.Sprintf("%d, %d since the last progress", h.Steps, h.StepsSinceProgress))
	row("spent", fmt.Sprintf("%s tokens, $%.4f since the last progress", count(h.TokensSinceProgress), h.USDSinceProgress))
	row("progress", "last "+when(now, h.LastProgress, loc))
	if len(h.Evidence) == 0 {
		return
	}
	fmt.Fprintln(out, "evidence:")
	writeEvidence(out, evidenceIndent, h.Evidence, 0)
}

// when renders a time in loc with how long ago it was: "09:00:31 (2m
// ago)", or "-" for none.
func when(now, t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%s (%s ago)", t.In(loc).Format("15:04:05"), age(now, t))
}

// maxArgs allows at most one argument, named name, as a usage error.
func maxArgs(name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return &usageError{msg: fmt.Sprintf("%s takes at most one %s, got %d arguments", cmd.CommandPath(), name, len(args)),
				hint: "usage: " + cmd.UseLine()}
		}
		return emptyIDs(cmd, []string{name}, args)
	}
}
