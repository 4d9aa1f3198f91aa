package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

type costOpts struct {
	task  string
	by    string
	since string
	json  bool
}

func (a *app) newCostCmd() *cobra.Command {
	var opts costOpts
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "Show what model calls cost, by day, task, model or watcher session",
		Long: `Cost summarizes the cost ledger: every model call the tasks made, with its
tokens and price. --by groups the rows by day (UTC date), task, model or watcher (the watcher
sessions' evaluations, per session); the
last line is the total. --task keeps one task's calls, --since the calls from a
time on: a duration back from now (24h, 7d), an RFC 3339 time or a date. The
cache column counts tokens read from and written to the prompt cache.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runCost(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.task, "task", "", "only this task's calls")
	f.StringVar(&opts.by, "by", api.CostByDay, "group by day, task, model or watcher")
	f.StringVar(&opts.since, "since", "", "only calls since T: 24h, 7d, 2026-11-01 or 2026-11-01T09:00:00Z")
	f.BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func (a *app) runCost(ctx context.Context, opts costOpts, out io.Writer) error {
	q, err := costQuery(opts, time.Now())
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	rep, err := c.Costs(ctx, q)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, rep)
	}
	writeCostReport(out, rep, time.Local)
	return nil
}

// costQuery checks the flags of `cost` and turns them into a query.
func costQuery(opts costOpts, now time.Time) (api.CostQuery, error) {
	q := api.CostQuery{Task: opts.task, By: opts.by}
	switch opts.by {
	case api.CostByDay, api.CostByTask, api.CostByModel, api.CostByWatcher:
	default:
		return q, &usageError{msg: fmt.Sprintf("--by %q is not a grouping", opts.by), hint: "use --by day, --by task, --by model or --by watcher"}
	}
	if opts.since != "" {
		t, err := parseSince(opts.since, now)
		if err != nil {
			return q, err
		}
		q.Since = t
	}
	return q, nil
}

// writeCostReport renders a cost report as a table with a total line.
func writeCostReport(out io.Writer, rep api.CostReport, loc *time.Location) {
	title := "cost of all tasks"
	if rep.TaskID != "" {
		title = "cost of " + string(rep.TaskID)
	}
	if !rep.Since.IsZero() {
		title += " since " + rep.Since.In(loc).Format("2006-01-02 15:04")
	}
	fmt.Fprintln(out, title)
	if len(rep.Rows) == 0 && rep.Total.Calls == 0 {
		fmt.Fprintln(out, "no model calls recorded")
		return
	}
	cells := [][]string{{strings.ToUpper(words.Or(rep.By, "key")), "CALLS", "INPUT", "OUTPUT", "CACHE", "COST $"}}
	for _, r := range rep.Rows {
		cells = append(cells, costCells(r))
	}
	total := costCells(rep.Total)
	total[0] = "total"
	cells = append(cells, total)
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, row := range cells {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad) // keys read left to right
			} else {
				b.WriteString("  " + pad + c) // numbers line up on the right
			}
		}
		fmt.Fprintln(out, b.String())
	}
}

func costCells(r api.CostRow) []string {
	return []string{r.Key, thousands(r.Calls), thousands(r.InputTokens), thousands(r.OutputTokens),
		thousands(r.CacheReadTokens + r.CacheWriteTokens), fmt.Sprintf("%.4f", r.CostUSD)}
}

// thousands renders n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
