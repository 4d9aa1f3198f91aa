package cli

import (
	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

func (a *app) newTaskCancelCmd() *cobra.Command {
	return a.newActionCmd(client.Cancel, "Cancel a task for good (its worktree is kept)")
}
