package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

func (a *app) newSupervisionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "supervision",
		Short: "Show how the Watcher itself is doing",
		Args:  noArgs,
		RunE:  help,
	}
	cmd.AddCommand(a.newSupervisionStatsCmd())
	return cmd
}

type supervisionStatsOpts struct {
	json bool
}

func (a *app) newSupervisionStatsCmd() *cobra.Command {
	var opts supervisionStatsOpts
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show the Watcher's counters since the daemon started",
		Long: `Stats shows whether the Watcher is enabled and running, its cycles and the
observations it read, the tasks it watches, its tier-1 findings by check (most
first), its calls to the watcher persona (tier 2) and how many failed, whether
it is degraded (tier 1 alone, after a tier-2 call failed, until one works), and
the nudges, escalations, pauses and aborts it made and the ones hooks blocked.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runSupervisionStats(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the counters as JSON")
	return cmd
}

func (a *app) runSupervisionStats(ctx context.Context, opts supervisionStatsOpts, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	st, err := c.SupervisionStats(ctx)
	if err != nil {
		return err
	}
	if opts.json {
		if st.Tier1 == nil {
			st.Tier1 = map[string]uint64{}
		}
		return writeJSON(out, st)
	}
	writeSupervisionStats(out, st, time.Now(), time.Local)
	return nil
}

// writeSupervisionStats renders the Watcher's counters.
func writeSupervisionStats(out io.Writer, st api.SupervisionStats, now time.Time, loc *time.Location) {
	switch {
	case !st.Enabled:
		fmt.Fprintln(out, "watcher: disabled: no task is supervised (`neuraphage config set supervision.watcher.enabled true` turns it on at the daemon's next start)")
	case st.Running:
		fmt.Fprintf(out, "watcher: enabled, running since %s\n", when(now, st.Started, loc))
	default:
		fmt.Fprintln(out, "watcher: enabled, not running (it restarts after a crash)")
	}
	row := func(label, value string) { fmt.Fprintf(out, "%-13s%s\n", label+":", value) }
	row("cycles", fmt.Sprintf("%d, the last %s; %d observations read; %d task%s watched", st.Cycles, when(now, st.LastCycle, loc),
		st.Observations, st.Watched, plural(st.Watched)))
	row("tier 2", fmt.Sprintf("%d call%s, %d failed", st.Tier2Calls, plural(int(st.Tier2Calls)), st.Tier2Failures))
	if st.Degraded {
		d := time.Duration(st.DegradedSecs * float64(time.Second)).Round(time.Second)
		row("degraded", fmt.Sprintf("for %s, tier 1 alone: %s", d, dash(st.DegradedReason)))
	} else {
		row("degraded", "no")
	}
	row("actions", fmt.Sprintf("%d nudge%s, %d escalation%s, %d pause%s, %d abort%s; %d blocked by hooks",
		st.Nudges, plural(int(st.Nudges)), st.Escalations, plural(int(st.Escalations)), st.Pauses, plural(int(st.Pauses)),
		st.Aborts, plural(int(st.Aborts)), st.HookBlocks))
	row("faults", fmt.Sprintf("%d panic%s recovered, %d restart%s", st.Panics, plural(int(st.Panics)), st.Restarts, plural(int(st.Restarts))))
	if len(st.Tier1) == 0 {
		row("tier 1", "no findings")
		return
	}
	fmt.Fprintln(out, "tier 1 findings by check:")
	tw := newTable(out)
	for _, check := range tier1Order(st.Tier1) {
		fmt.Fprintf(tw, "  %s\t%d\n", check, st.Tier1[check])
	}
	tw.Flush()
}

// tier1Order sorts the checks most findings first, then by name.
func tier1Order(m map[string]uint64) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b))
	})
}
