package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

func (a *app) newMetricsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "metrics",
		Short: "Print the daemon's metrics in the Prometheus text format",
		Long: `Metrics prints what the daemon serves at GET /metrics on its socket (and on
the web dashboard's listener when that is on), in the Prometheus text
exposition format: tasks by status, model calls, tokens and cost from the
cost ledger, injections queued and delivered, the Watcher's findings and
actions, the merge queue's depth, and how far the slowest reader of the
event bus is behind. docs/metrics.md describes every metric.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runMetrics(cmd.Context(), cmd.OutOrStdout())
		}),
	}
}

func (a *app) runMetrics(ctx context.Context, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	b, err := c.Metrics(ctx)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}
