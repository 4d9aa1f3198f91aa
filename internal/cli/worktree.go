package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// worktreeSafety is what every worktree command promises; their help repeats it.
const worktreeSafety = `Nothing here loses work: a worktree with uncommitted or untracked files, or an
operation in progress, is never removed; before a worktree is removed its branch
tip is archived under refs/neuraphage/archive/<task-id>, and the branch is
deleted only if it still points at that tip; ` + "`worktree restore`" + ` brings the
branch and the worktree back. A stray worktree (on a neuraphage branch, unknown
to the registry) is listed and left alone.`

func (a *app) newWorktreeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worktree",
		Short: "List, inspect, prune and restore the tasks' git worktrees",
		Long: `Each task runs in its own git worktree on its own branch, neuraphage/<task-id>,
made from the repository's base branch. These commands show the worktrees and
clean up the ones of finished tasks.

` + worktreeSafety,
		Args: noArgs,
		RunE: help,
	}
	cmd.AddCommand(a.newWorktreeListCmd(), a.newWorktreeInfoCmd(), a.newWorktreePruneCmd(), a.newWorktreeRestoreCmd())
	return cmd
}

type worktreeOpts struct {
	json      bool
	archives  bool
	olderThan string
}

func (a *app) newWorktreeListCmd() *cobra.Command {
	var opts worktreeOpts
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List every task's worktree, and stray ones",
		Long: `List shows every worktree the registry knows, removed ones included, and the
stray worktrees found in their repositories. STATE is active, removed, missing
(active but its directory is gone: the next run or ` + "`worktree restore`" + ` makes it
again) or stray. AHEAD/BEHIND counts the branch's commits against its base
branch; MERGED says whether its work is on the base branch; DIRTY counts the
uncommitted and untracked files. Problems seen with a worktree are listed under
the table. List changes nothing.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			ws, err := c.Worktrees(cmd.Context())
			if err != nil {
				return err
			}
			if opts.json {
				if ws == nil {
					ws = []api.Worktree{}
				}
				return writeJSON(cmd.OutOrStdout(), ws)
			}
			writeWorktrees(cmd.OutOrStdout(), ws)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print a JSON array of worktrees")
	return cmd
}

func (a *app) newWorktreeInfoCmd() *cobra.Command {
	var opts worktreeOpts
	cmd := &cobra.Command{
		Use:   "info ID",
		Short: "Show one task's worktree in full",
		Long: `Info shows a task's worktree: its state, directory, branch and base, how far
the branch is ahead of and behind the base, whether its work is merged, the
archive ref keeping its tip, the commit it landed as, the port handed to the
task, and the names of its uncommitted and untracked files. Info changes
nothing.`,
		Args: exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			w, err := c.Worktree(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if opts.json {
				return writeJSON(cmd.OutOrStdout(), w)
			}
			writeWorktreeInfo(cmd.OutOrStdout(), w, time.Local)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func (a *app) newWorktreePruneCmd() *cobra.Command {
	var opts worktreeOpts
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove the worktrees of finished tasks where nothing is lost",
		Long: `Prune removes the worktrees of finished tasks (completed, failed, cancelled)
and says, for each, whether it was removed or kept and why. Worktrees of tasks
still in flight are not touched. A kept worktree is not an error: the command
exits 0 and says how many were kept; commit or remove what they hold, then
prune again.

With --archives it prunes the ignored-files archives instead (the ignored files
a removal kept, in <git-common-dir>/neuraphage/ignored/<task-id>): it deletes
the archive of a restored worktree that holds every archived file as archived,
and, with --older-than (e.g. 30d, 72h), the archive of a worktree removed longer
ago than that. Every archive found is listed, deleted or kept with the reason;
nothing else is ever deleted.

` + worktreeSafety,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			if !opts.archives && opts.olderThan != "" {
				return &usageError{msg: "--older-than applies to --archives only", hint: "neuraphage worktree prune --archives --older-than 30d"}
			}
			var age time.Duration
			if opts.olderThan != "" {
				var err error
				if age, err = parseAge(opts.olderThan); err != nil {
					return err
				}
			}
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			if opts.archives {
				res, err := c.PruneArchives(cmd.Context(), age)
				if err != nil {
					return err
				}
				if opts.json {
					if res == nil {
						res = []api.ArchivePruneResult{}
					}
					return writeJSON(cmd.OutOrStdout(), res)
				}
				writeArchivePrune(cmd.OutOrStdout(), res)
				return nil
			}
			res, err := c.PruneWorktrees(cmd.Context())
			if err != nil {
				return err
			}
			if opts.json {
				if res == nil {
					res = []api.PruneResult{}
				}
				return writeJSON(cmd.OutOrStdout(), res)
			}
			writePrune(cmd.OutOrStdout(), res)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print a JSON array of results")
	cmd.Flags().BoolVar(&opts.archives, "archives", false, "prune the ignored-files archives no longer needed instead of worktrees")
	cmd.Flags().StringVar(&opts.olderThan, "older-than", "", "with --archives: also delete archives of worktrees removed longer ago than this (30d, 72h)")
	return cmd
}

// parseAge reads an --older-than value: days (30d) or a Go duration (72h),
// positive.
func parseAge(s string) (time.Duration, error) {
	const hint = "e.g. --older-than 30d, --older-than 72h"
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, aerr := strconv.Atoi(days)
		d, err = time.Duration(n)*24*time.Hour, aerr
	}
	if err != nil || d <= 0 {
		return 0, &usageError{msg: fmt.Sprintf("--older-than %q is not a positive duration", s), hint: hint}
	}
	return d, nil
}

// writeArchivePrune renders what an archive prune did, one line per
// archive, then a count.
func writeArchivePrune(out io.Writer, res []api.ArchivePruneResult) {
	if len(res) == 0 {
		fmt.Fprintln(out, "no ignored-files archives")
		return
	}
	tw := newTable(out)
	kept := 0
	for _, r := range res {
		verb := "deleted"
		if !r.Removed {
			verb = "kept"
			kept++
		}
		fmt.Fprintf(tw, "%s\t%s\t%d file(s)\t%s\t%s\n", verb, r.TaskID, r.Files, r.Dir, words.OneLine(r.Reason))
	}
	tw.Flush()
	fmt.Fprintf(out, "%d deleted, %d kept\n", len(res)-kept, kept)
}

func (a *app) newWorktreeRestoreCmd() *cobra.Command {
	var opts worktreeOpts
	cmd := &cobra.Command{
		Use:   "restore ID",
		Short: "Bring back a task's removed or missing worktree",
		Long: `Restore brings back a task's worktree: its branch from
refs/neuraphage/archive/<task-id> when the branch was deleted, then the worktree
on it at its old path. A worktree whose directory went missing is made again
from its branch. The ignored files kept when it was removed are copied back.
Restore never overwrites anything: when something else is at
the worktree's path, or the branch is checked out elsewhere, it refuses and
says so.`,
		Args: exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			w, err := c.RestoreWorktree(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if opts.json {
				return writeJSON(cmd.OutOrStdout(), w)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s's worktree is at %s on branch %s (%s)\n", w.TaskID, w.Path, w.Branch, aheadBehind(w, true))
			return nil
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the worktree as JSON")
	return cmd
}

// worktreeState is a worktree's state as listed: active, removed, missing
// (active, its directory gone) or stray.
func worktreeState(w api.Worktree) string {
	switch {
	case w.Stray:
		return "stray"
	case w.State == api.WorktreeRemoved:
		return "removed"
	case !w.Exists:
		return "missing"
	}
	return w.State
}

// aheadBehind renders the branch against its base: "+3/-1", or in words.
func aheadBehind(w api.Worktree, words bool) string {
	if w.Tip == "" {
		if words {
			return "branch gone"
		}
		return "-"
	}
	if words {
		return fmt.Sprintf("%d ahead of %s, %d behind", w.Ahead, w.Base, w.Behind)
	}
	return fmt.Sprintf("+%d/-%d", w.Ahead, w.Behind)
}

// merged renders whether the branch's work is on its base.
func merged(w api.Worktree) string {
	switch {
	case w.Stray:
		return "-"
	case w.Tip == "" && w.Landed != "":
		return "landed"
	case w.Tip == "":
		return "-"
	case w.Merged:
		return "yes"
	}
	return "no"
}

// dirty renders what a work tree holds uncommitted.
func dirty(w api.Worktree) string {
	if !w.Exists {
		return "-"
	}
	kept := ""
	if len(w.Ignored) > 0 {
		kept = fmt.Sprintf("%d ignored to keep", len(w.Ignored))
	}
	if len(w.Changed) == 0 && len(w.Untracked) == 0 && w.InProgress == "" {
		if kept != "" {
			return kept
		}
		return "clean"
	}
	s := fmt.Sprintf("%d changed / %d untracked", len(w.Changed), len(w.Untracked))
	if w.InProgress != "" {
		s += " / " + w.InProgress
	}
	if kept != "" {
		s += " / " + kept
	}
	return s
}

// writeWorktrees renders the worktree list, then the notes.
func writeWorktrees(out io.Writer, ws []api.Worktree) {
	if len(ws) == 0 {
		fmt.Fprintln(out, "no worktrees: a task gets one when it first runs in a repository")
		return
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "TASK\tSTATE\tBRANCH\tAHEAD/BEHIND\tMERGED\tDIRTY\tPATH")
	var notes []string
	strays := 0
	for _, w := range ws {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(string(w.TaskID)), worktreeState(w), dash(w.Branch),
			aheadBehind(w, false), merged(w), dirty(w), w.Path)
		if w.Note != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", dash(string(w.TaskID)), w.Note))
		}
		if w.Stray {
			strays++
		}
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(out, "note "+n)
	}
	if strays > 0 {
		fmt.Fprintf(out, "%d stray worktree%s: on a neuraphage branch but unknown to the registry; left alone (`git worktree remove` it if it is yours)\n", strays, plural(strays))
	}
}

// writeWorktreeInfo renders one worktree in full.
func writeWorktreeInfo(out io.Writer, w api.Worktree, loc *time.Location) {
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(out, "%-12s %s\n", k+":", v)
		}
	}
	line("task", dash(string(w.TaskID)))
	state := worktreeState(w)
	switch state {
	case "missing":
		state += ": its directory is gone; the next run or `worktree restore` makes it again"
	case "removed":
		state += "; `worktree restore` brings it back"
	case "stray":
		state += ": on a neuraphage branch but unknown to the registry; left alone"
	}
	line("state", state)
	line("repo", w.Repo)
	line("path", w.Path)
	if w.Tip != "" {
		line("branch", fmt.Sprintf("%s at %s", w.Branch, words.ShortCommit(w.Tip)))
	} else {
		line("branch", w.Branch+" (gone)")
	}
	if w.Base != "" {
		base := w.Base
		if w.BaseCommit != "" {
			base += " (started from " + words.ShortCommit(w.BaseCommit) + ")"
		}
		line("base", base)
	}
	if !w.Stray {
		line("commits", aheadBehind(w, true))
		line("merged", merged(w))
	}
	switch {
	case w.Archive != "" && w.Archived:
		line("archive", w.Archive+" (holds the branch tip)")
	case w.Archive != "":
		line("archive", w.Archive+" (an older tip: the branch moved on)")
	case w.Archived:
		line("archive", "the branch tip is archived")
	}
	if w.Landed != "" {
		line("landed", fmt.Sprintf("as %s (from branch tip %s)", words.ShortCommit(w.Landed), words.ShortCommit(w.LandedTip)))
	}
	if w.Port != 0 {
		line("port", fmt.Sprint(w.Port))
	}
	if w.Exists {
		line("work tree", dirty(w))
	}
	line("in progress", w.InProgress)
	files := func(k string, names []string) {
		if len(names) == 0 {
			return
		}
		line(k, fmt.Sprintf("%d file%s", len(names), plural(len(names))))
		for _, n := range names {
			fmt.Fprintf(out, "%-12s   %s\n", "", n)
		}
	}
	files("changed", w.Changed)
	files("untracked", w.Untracked)
	// Kept in the task's archive when the worktree is removed.
	files("ignored", w.Ignored)
	line("note", w.Note)
	if !w.CreatedAt.IsZero() {
		line("created", w.CreatedAt.In(loc).Format(time.RFC3339))
	}
	if !w.UpdatedAt.IsZero() {
		line("updated", w.UpdatedAt.In(loc).Format(time.RFC3339))
	}
}

// writePrune renders what a prune did, one line per worktree, then a
// count.
func writePrune(out io.Writer, res []api.PruneResult) {
	if len(res) == 0 {
		fmt.Fprintln(out, "nothing to prune: no finished task has a worktree")
		return
	}
	tw := newTable(out)
	kept := 0
	for _, r := range res {
		verb := "removed"
		if !r.Removed {
			verb = "kept"
			kept++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", verb, r.TaskID, r.Path, words.OneLine(r.Reason))
	}
	tw.Flush()
	fmt.Fprintf(out, "%d removed, %d kept", len(res)-kept, kept)
	if kept > 0 {
		fmt.Fprint(out, " (a kept worktree holds work a removal would lose: commit or remove it, then prune again)")
	}
	fmt.Fprintln(out)
}
