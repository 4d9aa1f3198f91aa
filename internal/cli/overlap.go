package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

func (a *app) newOverlapCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "overlap",
		Short: "Show which running tasks changed the same files, with each pair's merge forecast",
		Long: `Overlap prints the overlap radar's matrix: every pair of running tasks that
changed the same files, the files, and the forecast of merging their work (git merge-tree of
both work trees, uncommitted changes included): clean, conflict (with the files), pending
while it runs, or unknown when git could not say. Under each pair, for each shared file, the
lines of the two tasks' merge base each side changed (A | B) and whether those ranges
intersect. Both tasks of a pair are told of each other when it is found (see docs/overlap.md).`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runOverlap(cmd.Context(), asJSON, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) runOverlap(ctx context.Context, asJSON bool, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	ps, err := c.Overlap(ctx, "")
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(out, ps)
	}
	if len(ps) == 0 {
		fmt.Fprintln(out, "No running tasks changed the same files.")
		return nil
	}
	writeOverlap(out, ps)
	return nil
}

// writeOverlap prints the pairs, one a line.
func writeOverlap(out io.Writer, ps []api.OverlapPair) {
	for _, p := range ps {
		fc := p.Forecast
		if len(p.Conflicts) > 0 {
			fc += " (" + strings.Join(p.Conflicts, ", ") + ")"
		}
		fmt.Fprintf(out, "%s  %s  %-8s  %s\n", p.A, p.B, fc, strings.Join(p.Files, ", "))
		for _, l := range p.Lines {
			fmt.Fprintf(out, "    %s: lines %s | %s  (%s)\n", l.File, ranges(l.A), ranges(l.B), linesState(l.Intersect))
		}
	}
}

// ranges prints line ranges: "10-12,30".
func ranges(rs []api.LineRange) string {
	var s []string
	for _, r := range rs {
		switch {
		case r.From == r.To+1:
			s = append(s, fmt.Sprintf("after %d", r.To)) // lines inserted
		case r.From == r.To:
			s = append(s, fmt.Sprint(r.From))
		default:
			s = append(s, fmt.Sprintf("%d-%d", r.From, r.To))
		}
	}
	return strings.Join(s, ",")
}

func linesState(intersect bool) string {
	if intersect {
		return "ranges intersect"
	}
	return "ranges apart"
}
