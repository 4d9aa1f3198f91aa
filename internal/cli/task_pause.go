package cli

import (
	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

func (a *app) newTaskPauseCmd() *cobra.Command {
	return a.newActionCmd(client.Pause, "Pause a task at its next boundary, keeping its conversation")
}
