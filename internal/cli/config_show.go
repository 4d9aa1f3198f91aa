package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/config"
)

func (a *app) newConfigShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration (file merged over defaults) as YAML",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runConfigShow(cmd.OutOrStdout())
		}),
	}
}

func (a *app) runConfigShow(out io.Writer) error {
	cfg, err := a.getConfig()
	if err != nil {
		return err
	}
	b, err := config.Marshal(cfg)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}
