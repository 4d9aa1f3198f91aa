package cli

import (
	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

func (a *app) newTaskResumeCmd() *cobra.Command {
	return a.newActionCmd(client.Resume, "Resume a paused task (it is queued again)")
}
