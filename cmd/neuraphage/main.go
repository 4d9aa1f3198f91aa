// Command neuraphage runs and supervises many AI coding agents on one
// repository. See README.md and docs/.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/neuraphage/neuraphage-go/internal/cli"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
	"github.com/neuraphage/neuraphage-go/internal/spawn"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func main() {
	// Secret variables a parent kept out of this process's exec-time
	// environment (a daemon's: see spawn.Detached) are set again first.
	if err := spawn.ReceiveSecrets(); err != nil {
		fmt.Fprintln(os.Stderr, "neuraphage:", err)
		os.Exit(1)
	}
	v := daemon.Version(version)
	os.Exit(cli.Main(cli.Env{
		Args:       os.Args[1:],
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		Version:    v,
		Executable: os.Executable,
		Argv0:      os.Args[0],
		RunDaemon:  daemon.RunFunc(v),
		RunWorker: func(ctx context.Context, p config.Paths, c config.Config, getenv func(string) string, w cli.WorkerArgs) error {
			return daemon.RunWorker(ctx, daemon.WorkerOptions{Paths: p, Config: c, Getenv: getenv,
				Join: w.Join, Token: w.Token, CAFile: w.CA, Labels: w.Labels, Capacity: w.Capacity})
		},
		HideSecrets: func(extra []string) error {
			// The running image itself, even if its file was replaced.
			exe := "/proc/self/exe"
			if _, err := os.Stat(exe); err != nil {
				if exe, err = os.Executable(); err != nil {
					return err
				}
			}
			return spawn.HideSecrets(exe, os.Args, extra)
		},
	}))
}
