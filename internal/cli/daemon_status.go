package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

type daemonStatusOpts struct {
	json bool
}

func (a *app) newDaemonStatusCmd() *cobra.Command {
	var opts daemonStatusOpts
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether the daemon runs, and what it holds (exit 3 when not running)",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runDaemonStatus(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func (a *app) runDaemonStatus(ctx context.Context, opts daemonStatusOpts, out io.Writer) error {
	p, err := a.getPaths()
	if err != nil {
		return err
	}
	c := client.New(p.Socket)
	defer c.Close()
	st, err := c.Status(ctx)
	if errors.Is(err, client.ErrUnreachable) {
		if opts.json {
			_ = writeJSON(out, map[string]any{"running": false, "socket": p.Socket})
		} else {
			fmt.Fprintf(out, "daemon is not running (socket %s)\n", p.Socket)
		}
		return &unreachableError{errors.New("daemon is not running")}
	}
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, st)
	}
	fmt.Fprintf(out, "daemon running (pid %d, version %s, up %s)\n", st.PID, st.Version, time.Since(st.StartedAt).Round(time.Second))
	fmt.Fprintf(out, "socket:   %s\ndatabase: %s\nlog:      %s\n", st.Socket, st.DBFile, st.LogFile)
	fmt.Fprint(out, "tasks:   ")
	for _, s := range task.AllStatuses() {
		fmt.Fprintf(out, " %s %d", s, st.Tasks[s])
	}
	fmt.Fprintf(out, "\nevents:   %d logged (last id %d); bus: %d published, %d dropped, %d subscribers\n",
		st.Events, st.LastEventID, st.Bus.Published, st.Bus.Dropped, st.Bus.Subscribers)
	fmt.Fprintf(out, "messages: %d waiting for delivery\n", st.PendingMessages)
	fmt.Fprintf(out, "running:  %d task(s)", len(st.Running))
	for _, id := range st.Running {
		fmt.Fprintf(out, " %s", id)
	}
	fmt.Fprintln(out)
	if st.Held != "" {
		fmt.Fprintf(out, "held:     queued tasks wait: %s\n", st.Held)
	}
	if st.Sandbox.Summary != "" {
		fmt.Fprintf(out, "sandbox:  %s; network %s\n", st.Sandbox.Summary, st.Sandbox.Network)
	}
	for _, en := range st.Engines {
		if en.Ready {
			fmt.Fprintf(out, "engine:   %s available\n", en.Name)
		} else {
			fmt.Fprintf(out, "engine:   %s unavailable: %s\n", en.Name, en.Reason)
		}
	}
	if !st.Models.Ready {
		fmt.Fprintf(out, "models:   none configured: %s\n", st.Models.Setup)
		return nil
	}
	fmt.Fprint(out, "models:  ")
	for _, t := range st.Models.Tiers {
		fmt.Fprintf(out, " %s %s/%s", t.Tier, t.Provider, t.Model)
	}
	fmt.Fprintln(out)
	return nil
}
