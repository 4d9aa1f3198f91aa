package daemon

import (
	"context"
	"runtime/debug"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Version returns the version to report: the one set at build time, else the
// module version or VCS revision recorded by the Go toolchain, else "dev".
func Version(set string) string {
	if set != "" {
		return set
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			return "dev-" + words.ShortCommit(s.Value)
		}
	}
	return "dev"
}

// RunFunc adapts Run to the CLI's RunDaemon hook.
func RunFunc(version string) func(ctx context.Context, p config.Paths, c config.Config, getenv func(string) string, ready func()) error {
	return func(ctx context.Context, p config.Paths, c config.Config, getenv func(string) string, ready func()) error {
		return Run(ctx, Options{Paths: p, Config: c, Version: version, Getenv: getenv, Ready: ready})
	}
}
