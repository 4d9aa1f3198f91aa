package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

// loadGit is what the tasks of a load run cost in git: the daemon's count
// of git processes started (daemon status) read before the tasks are
// released and once they have all finished.
type loadGit struct {
	Processes int64   `json:"processes"`
	PerTask   float64 `json:"per_task"`
}

// gitProcesses reads the daemon's count of git processes started.
func gitProcesses(ctx context.Context, c *client.Client) (int64, error) {
	st, err := c.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the daemon's count of git processes: %w", err)
	}
	return st.GitProcesses, nil
}

// measureGit sets g from the counts before and after tasks tasks.
func (g *loadGit) measure(before, after int64, tasks int) {
	g.Processes = after - before
	if tasks > 0 {
		g.PerTask = float64(g.Processes) / float64(tasks)
	}
}

// write prints g as a row of the load report's table.
func (g loadGit) write(tw io.Writer) {
	fmt.Fprintf(tw, "  git processes\t%.1f per task\t%d from release to the last finish (provision, commit, landing, cleanup)\n", g.PerTask, g.Processes)
}
