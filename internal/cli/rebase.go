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

func (a *app) newRebaseCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rebase",
		Short: "Show how far the tasks' branches fell behind main",
		Long: `The main watcher follows the branch each repository's tasks will merge into.
When main moves, every task whose branch fell behind is told, with main's new
commits and the files a rebase is predicted to conflict in; at
supervision.main_watcher.notification_urgency blocking, Neuraphage rebases the
branch itself at the task's next tool boundary. ` + "`neuraphage task rebase`" + ` asks for
such a rebase now.`,
		Args: noArgs,
		RunE: help,
	}
	cmd.AddCommand(a.newRebaseStatusCmd())
	return cmd
}

type rebaseStatusOpts struct {
	json bool
}

func (a *app) newRebaseStatusCmd() *cobra.Command {
	var opts rebaseStatusOpts
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the main watcher and where every task branch stands against main",
		Long: `Status says whether the main watcher is on, at which urgency, whether it sees
main move through filesystem notifications or only by polling, and each
watched main branch with its commit and any error reading or fetching it.

Then, for every task with an active worktree, most behind first: its branch,
the main it is compared with, how many commits it is behind and ahead, the
rebase forecast (clean; conflict, with the files a rebase would conflict in;
overlap, with the files both sides changed), its state (up_to_date, behind,
notified, cooldown, unrelated, merging, error), and when it was last told and
last rebased. Status compares the branches now and changes nothing: no task is
told.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runRebaseStatus(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func (a *app) runRebaseStatus(ctx context.Context, opts rebaseStatusOpts, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	st, err := c.RebaseStatus(ctx)
	if err != nil {
		return err
	}
	if opts.json {
		if st.Tasks == nil {
			st.Tasks = []api.TaskRebase{}
		}
		if st.Watcher.Repos == nil {
			st.Watcher.Repos = []api.MainRef{}
		}
		return writeJSON(out, st)
	}
	writeRebaseStatus(out, st, time.Now())
	return nil
}

// writeRebaseStatus renders the watcher, its main branches, then a row per
// task branch and the notes on them.
func writeRebaseStatus(out io.Writer, st api.RebaseStatus, now time.Time) {
	fmt.Fprintln(out, watcherLine(st.Watcher))
	for _, r := range st.Watcher.Repos {
		fmt.Fprintln(out, "  "+mainRefLine(r))
	}
	if len(st.Tasks) == 0 {
		fmt.Fprintln(out, "no active task branches: a task's branch is watched from when its worktree is made until its work lands")
		return
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "TASK\tSTATUS\tBRANCH\tMAIN\tBEHIND\tAHEAD\tFORECAST\tSTATE\tLAST NOTICE\tLAST REBASED")
	var notes []string
	for _, t := range st.Tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", t.TaskID, t.Status, t.Branch, dash(t.Main), t.Behind, t.Ahead,
			forecast(t), dash(t.State), ageOf(now, t.LastNotice), ageOf(now, t.LastRebased))
		if t.Note != "" {
			notes = append(notes, fmt.Sprintf("note %s: %s", t.TaskID, words.OneLine(t.Note)))
		}
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(out, n)
	}
}

// watcherLine sums up the main watcher:
// "main watcher: enabled, urgency helpful, watching through filesystem notifications".
func watcherLine(w api.MainWatcher) string {
	if !w.Enabled {
		return "main watcher: disabled: no task is told when main moves (`neuraphage config set supervision.main_watcher.enabled true` turns it on)"
	}
	how := "polling only (no filesystem notifications)"
	if w.Watching {
		how = "watching through filesystem notifications"
	}
	s := fmt.Sprintf("main watcher: enabled, urgency %s, %s", dash(w.Urgency), how)
	if w.Panics > 0 {
		s += fmt.Sprintf("; %d cycle%s crashed (see the daemon log)", w.Panics, plural(int(w.Panics)))
	}
	return s
}

// mainRefLine renders one watched main branch: "/src/app: main at abcdef0123".
func mainRefLine(r api.MainRef) string {
	s := r.Repo + ": " + r.Main
	switch {
	case r.Error != "":
		s += " cannot be read: " + words.OneLine(r.Error)
	case r.Commit != "":
		s += " at " + words.ShortCommit(r.Commit)
	}
	if r.FetchError != "" {
		s += "; the last fetch failed: " + words.OneLine(r.FetchError)
	}
	return s
}

// forecast renders a branch's rebase forecast: clean, "conflict: a.go, b.go"
// or "overlap: a.go"; "-" when up to date.
func forecast(t api.TaskRebase) string {
	files := map[string][]string{"conflict": t.Conflicts, "overlap": t.Overlap}[t.Forecast]
	if len(files) == 0 {
		return dash(t.Forecast)
	}
	return t.Forecast + ": " + truncate(strings.Join(files, ", "), 40)
}

// ageOf is age for a time that may be unset ("-").
func ageOf(now time.Time, t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return age(now, *t)
}
