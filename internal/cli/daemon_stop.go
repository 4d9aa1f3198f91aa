package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
)

func (a *app) newDaemonStopCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon in order and wait until it is gone",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runDaemonStop(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		}),
	}
}

func (a *app) runDaemonStop(ctx context.Context, out, errOut io.Writer) error {
	p, err := a.getPaths()
	if err != nil {
		return err
	}
	// Stopping must work even when the config file was broken after the
	// daemon started: fall back to the default timeout and say so.
	cfg, err := a.getConfig()
	if err != nil {
		fmt.Fprintf(errOut, "neuraphage: warning: %v; using the default shutdown timeout\n", err)
		cfg = config.Default()
	}
	c := client.New(p.Socket)
	defer c.Close()
	h, err := c.Health(ctx)
	if errors.Is(err, client.ErrUnreachable) {
		fmt.Fprintln(out, "daemon is not running")
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.Shutdown(ctx); err != nil && !errors.Is(err, client.ErrUnreachable) {
		return err
	}
	deadline := time.Now().Add(time.Duration(cfg.Daemon.ShutdownTimeoutSecs)*time.Second + 5*time.Second)
	for time.Now().Before(deadline) {
		// The daemon is gone once its socket refuses and its lock is free; the
		// health probe failing is the first, the pid file vanishing the last step.
		if _, err := c.Health(ctx); errors.Is(err, client.ErrUnreachable) && !processAlive(h.PID) {
			fmt.Fprintf(out, "daemon stopped (pid %d)\n", h.PID)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("the daemon (pid %d) did not stop within %ds; send it SIGTERM or see %s", h.PID, cfg.Daemon.ShutdownTimeoutSecs+5, p.LogFile)
}
