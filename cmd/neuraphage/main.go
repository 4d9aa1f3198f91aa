// Command neuraphage runs and supervises many AI coding agents on one
// repository. See README.md and docs/.
package main

import (
	"os"

	"github.com/neuraphage/neuraphage-go/internal/cli"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func main() {
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
	}))
}
