package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
)

type daemonStartOpts struct {
	foreground bool
	cpuProfile string
}

func (a *app) newDaemonStartCmd() *cobra.Command {
	var opts daemonStartOpts
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start the daemon (in the background unless --foreground)",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runDaemonStart(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.foreground, "foreground", false, "run in this process until SIGTERM, SIGINT or daemon stop")
	cmd.Flags().StringVar(&opts.cpuProfile, "cpuprofile", "", "with --foreground: write the daemon's CPU profile (pprof) to this file until it stops")
	return cmd
}

func (a *app) runDaemonStart(ctx context.Context, opts daemonStartOpts, out io.Writer) error {
	p, err := a.getPaths()
	if err != nil {
		return err
	}
	cfg, err := a.getConfig()
	if err != nil {
		return err
	}
	if opts.cpuProfile != "" && !opts.foreground {
		return usageErrorf("--cpuprofile needs --foreground")
	}
	if opts.foreground {
		if err := a.hideSecrets(cfg); err != nil {
			return err
		}
		if opts.cpuProfile != "" {
			stop, err := startCPUProfile(opts.cpuProfile)
			if err != nil {
				return err
			}
			defer stop()
		}
		return a.env.RunDaemon(ctx, p, cfg, a.env.Getenv, func() { fmt.Fprintf(out, "neuraphage daemon listening on %s\n", p.Socket) })
	}
	c := client.New(p.Socket)
	defer c.Close()
	if h, err := c.Health(ctx); err == nil {
		return fmt.Errorf("a daemon is already running for this home (pid %d on %s); stop it with `neuraphage daemon stop`", h.PID, p.Socket)
	} else if !errors.Is(err, client.ErrUnreachable) {
		return err
	}
	if err := a.startDaemon(ctx, c, p, cfg); err != nil {
		return err
	}
	h, err := c.Health(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "daemon started (pid %d) on %s\n", h.PID, p.Socket)
	return nil
}

// hideSecrets keeps secret variables out of the exec-time environment of a
// daemon about to run in this process: a sandboxed command may be able to
// read /proc/<pid>/environ of the daemon (see docs/sandbox.md).
func (a *app) hideSecrets(cfg config.Config) error {
	if a.env.HideSecrets == nil {
		return nil
	}
	if err := a.env.HideSecrets(secretNames(cfg)); err != nil {
		return fmt.Errorf("keeping the secret variables out of the daemon's environment: %w", err)
	}
	return nil
}

// secretNames are the variables named in cfg as holding provider keys.
func secretNames(cfg config.Config) []string {
	p := cfg.LLM.Providers
	return []string{p.Anthropic.APIKeyEnv, p.OpenAI.APIKeyEnv, p.Gemini.APIKeyEnv}
}

// startCPUProfile profiles this process's CPU into path until the returned
// function is called (`go tool pprof` reads the file).
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting the CPU profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
