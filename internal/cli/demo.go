package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
)

type demoOpts struct {
	keep bool
}

func (a *app) newDemoCmd() *cobra.Command {
	var opts demoOpts
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run an offline demonstration in a scratch home",
		Long: `Demo starts a daemon in this process under a scratch NEURAPHAGE_HOME, drives it
through the API as the CLI would, and prints the timeline from the event log.
It needs no network and no API key. Today it shows the foundation: tasks,
dependencies, pause and resume, queued messages, the live event stream, and
recovery after a restart. Tasks are not executed yet: the agent runtime has not
landed, so queued tasks stay queued.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runDemo(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.keep, "keep", false, "keep the scratch home for inspection")
	return cmd
}

func (a *app) runDemo(ctx context.Context, opts demoOpts, out io.Writer) error {
	home, err := os.MkdirTemp("", "np-demo")
	if err != nil {
		return fmt.Errorf("making a scratch home: %w", err)
	}
	if opts.keep {
		defer fmt.Fprintf(out, "\nscratch home kept: NEURAPHAGE_HOME=%s\n", home)
	} else {
		defer os.RemoveAll(home)
	}
	p, err := config.ResolvePaths(func(k string) string {
		if k == "NEURAPHAGE_HOME" {
			return home
		}
		return a.env.Getenv(k)
	})
	if err != nil {
		return err
	}
	cfg := config.Default()
	fmt.Fprintf(out, "Neuraphage demo: a daemon in this process, home %s\n\n", home)

	var timeline []event.Event
	for run := 1; run <= 2; run++ {
		evs, err := a.demoRun(ctx, p, cfg, run, out)
		timeline = append(timeline, evs...)
		if err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "\nTimeline (from the event log):")
	for _, e := range timeline {
		printEvent(out, e)
	}
	return nil
}

// demoRun starts a daemon, runs one scene against it and stops it. The second
// run returns the whole event log. The daemon goroutine is joined before it
// returns.
func (a *app) demoRun(ctx context.Context, p config.Paths, cfg config.Config, run int, out io.Writer) ([]event.Event, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- a.env.RunDaemon(ctx, p, cfg, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		return nil, fmt.Errorf("starting the demo daemon: %w", err)
	}
	c := client.New(p.Socket)
	defer c.Close()
	var (
		evs   []event.Event
		scene error
	)
	if run == 1 {
		scene = demoScene(ctx, c, out)
	} else {
		scene = demoRestart(ctx, c, out)
		if scene == nil {
			evs, scene = c.Events(ctx, event.Query{})
		}
	}
	cancel()
	return evs, errors.Join(scene, <-done)
}

func demoScene(ctx context.Context, c *client.Client, out io.Writer) error {
	step := func(format string, args ...any) { fmt.Fprintf(out, "• "+format+"\n", args...) }
	prio := 1
	auth, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: "add token expiry checks", Tags: []string{"auth", "jwt"}, Priority: &prio})
	if err != nil {
		return err
	}
	step("created %s %q (priority 1, tags auth,jwt)", auth.ID, auth.Description)
	ui, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: "login form with token refresh", Tags: []string{"auth", "ui"}})
	if err != nil {
		return err
	}
	step("created %s %q", ui.ID, ui.Description)
	tests, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: "integration tests for the auth flow", NoStart: true})
	if err != nil {
		return err
	}
	step("created %s %q held with --no-start (%s)", tests.ID, tests.Description, tests.Status)
	d, err := c.Depend(ctx, string(tests.ID), string(auth.ID))
	if err != nil {
		return err
	}
	step("%s now waits for %s: %s", tests.ID, auth.ID, d.Readiness)
	if _, err := c.Send(ctx, string(ui.ID), "the token refresh endpoint is /api/refresh"); err != nil {
		return err
	}
	step("queued a message for %s; it waits in the durable queue for the task's next turn", ui.ID)
	if _, err := c.Act(ctx, string(ui.ID), client.Pause, "waiting for a design review"); err != nil {
		return err
	}
	if _, err := c.Act(ctx, string(ui.ID), client.Resume, ""); err != nil {
		return err
	}
	step("paused and resumed %s", ui.ID)
	if _, err := c.Act(ctx, string(auth.ID), client.Cancel, "superseded"); err != nil {
		return err
	}
	d, err = c.GetTask(ctx, string(tests.ID))
	if err != nil {
		return err
	}
	step("cancelled %s; %s, which waited for it, is now %s", auth.ID, tests.ID, d.Readiness)
	var ce *client.Error
	if _, err := c.Act(ctx, string(auth.ID), client.Resume, ""); errors.As(err, &ce) {
		step("resuming the cancelled task is refused: %s", ce.Body.Message)
	}
	step("stopping the daemon; everything above is in the store")
	return nil
}

func demoRestart(ctx context.Context, c *client.Client, out io.Writer) error {
	ts, err := c.ListTasks(ctx, nil, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "• restarted the daemon: %d tasks back from the store\n", len(ts))
	for _, t := range ts {
		fmt.Fprintf(out, "    %s  %-9s %s\n", t.ID, t.Status, t.Description)
	}
	fmt.Fprintln(out, "• the agent runtime has not landed yet, so queued tasks stay queued")
	return nil
}
