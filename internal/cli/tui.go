package cli

import (
	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/tui"
)

func (a *app) newTUICmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Show the fleet in a terminal dashboard, with actions",
		Long: `Tui shows every unfinished task on one screen, kept current from the daemon's
event stream: what each is doing, its health, cost and how far behind main it
is, with the tasks that need you (waiting for an answer, paused, failed, merge
parked, rebase conflict) at the top. Enter opens a task's live conversation;
keys answer, nudge, pause, resume, cancel, escalate, rebase or merge it. Press
? for every key. See docs/tui.md.`,
		Args: cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			shell := a.env.Getenv("SHELL")
			if shell == "" {
				shell = "/bin/sh"
			}
			return tui.Run(cmd.Context(), tui.ClientBackend{C: c}, tui.Options{
				Editor: a.env.Getenv("EDITOR"), Shell: shell, All: all,
			})
		}),
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, "show finished tasks too")
	return cmd
}
