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
		Short: "Show how the Watcher and the Syncer themselves are doing",
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
		Short: "Show the Watcher's and the Syncer's counters since the daemon started",
		Long: `Stats shows whether the Watcher is enabled and running, its cycles and the
observations it read, the tasks it watches, its tier-1 findings by check (most
first), its calls to the watcher persona (tier 2) and how many failed, whether
it is degraded (tier 1 alone, after a tier-2 call failed, until one works), and
the nudges, escalations, pauses and aborts it made and the ones hooks blocked.

Then the Syncer's: whether it is enabled and running, its sweeps, the learnings
stored by kind and those merged into known ones, the relays it evaluated, sent,
held for a task's rate limit and saw delivered, the new tasks it briefed, the
relays not made by reason, its calls to the syncer persona and the turn-end
model pass and how many failed, and whether it is degraded (the deterministic
rules deciding alone after a persona call failed).`,
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
		if sy := st.Syncer; sy != nil {
			if sy.Learnings == nil {
				sy.Learnings = map[string]uint64{}
			}
			if sy.Ignored == nil {
				sy.Ignored = map[string]uint64{}
			}
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
	} else {
		fmt.Fprintln(out, "tier 1 findings by check:")
		tw := newTable(out)
		for _, check := range tier1Order(st.Tier1) {
			fmt.Fprintf(tw, "  %s\t%d\n", check, st.Tier1[check])
		}
		tw.Flush()
	}
	if st.Syncer != nil {
		writeSyncerStats(out, *st.Syncer, now, loc)
	}
}

// writeSyncerStats renders the Syncer's counters.
func writeSyncerStats(out io.Writer, st api.SyncerStats, now time.Time, loc *time.Location) {
	switch {
	case !st.Enabled:
		fmt.Fprintln(out, "syncer: disabled: no learning is relayed (`neuraphage config set supervision.syncer.enabled true` turns it on at the daemon's next start)")
	case st.Running:
		fmt.Fprintln(out, "syncer: enabled, running")
	default:
		fmt.Fprintln(out, "syncer: enabled, not running (it restarts after a crash)")
	}
	row := func(label, value string) { fmt.Fprintf(out, "%-13s%s\n", label+":", value) }
	row("sweeps", fmt.Sprintf("%d, the last %s; %d observations read", st.Sweeps, when(now, st.LastSweep, loc), st.Observations))
	var stored uint64
	for _, n := range st.Learnings {
		stored += n
	}
	learnings := fmt.Sprintf("%d stored", stored)
	if len(st.Learnings) > 0 {
		learnings += " (" + countsByKey(st.Learnings) + ")"
	}
	row("learnings", learnings+fmt.Sprintf(", %d merged into known ones", st.Merged))
	row("relays", fmt.Sprintf("%d evaluated, %d sent, %d held, %d delivered; %d new task%s briefed",
		st.Evaluated, st.Sent, st.Held, st.Delivered, st.Briefed, plural(int(st.Briefed))))
	if len(st.Ignored) == 0 {
		row("not relayed", "none")
	} else {
		row("not relayed", countsByKey(st.Ignored))
	}
	model := fmt.Sprintf("persona %d call%s, %d failed; turn-end pass %d call%s, %d failed",
		st.PersonaCalls, plural(int(st.PersonaCalls)), st.PersonaFailures, st.ExtractCalls, plural(int(st.ExtractCalls)), st.ExtractFailures)
	if st.ModelTokens > 0 || st.ModelUSD > 0 {
		model += fmt.Sprintf("; %s tokens, $%.4f", count(st.ModelTokens), st.ModelUSD)
	}
	row("model", model)
	if st.Degraded {
		row("degraded", "the rules decide alone: "+dash(st.DegradedReason))
	} else {
		row("degraded", "no")
	}
	row("faults", fmt.Sprintf("%d panic%s recovered, %d restart%s", st.Panics, plural(int(st.Panics)), st.Restarts, plural(int(st.Restarts))))
}

// countsByKey renders counts most first, then by name: "5 not-relevant, 2
// backlog-full".
func countsByKey(m map[string]uint64) string {
	parts := make([]string, 0, len(m))
	for _, k := range tier1Order(m) {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

// tier1Order sorts the checks most findings first, then by name.
func tier1Order(m map[string]uint64) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b))
	})
}
