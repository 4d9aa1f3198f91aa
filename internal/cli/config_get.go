package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/config"
)

func (a *app) newConfigGetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "get KEY",
		Short: "Print one setting (a dotted key such as log.level, or a section)",
		Args:  exactArgs("KEY"),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return config.Keys(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runConfigGet(args[0], cmd.OutOrStdout())
		}),
	}
}

func (a *app) runConfigGet(key string, out io.Writer) error {
	cfg, err := a.getConfig()
	if err != nil {
		return err
	}
	v, err := config.Get(cfg, key)
	if err != nil {
		return asUsage(err)
	}
	fmt.Fprintln(out, v)
	return nil
}

// asUsage marks a configuration error about a key the user typed as a usage
// error, so it exits 2.
func asUsage(err error) error {
	var ce *config.Error
	if errors.As(err, &ce) && ce.File == "" {
		return &usageError{msg: err.Error(), hint: "`neuraphage config show` lists every key; docs/config.md documents them"}
	}
	return err
}
