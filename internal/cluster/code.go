package cluster

import (
	"context"
	"fmt"
	"os"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// Code is how a worker gets a task's code and sends its work back.
type Code interface {
	// Checkout makes dir a work tree of the assignment's branch at its
	// base commit, with the last snapshot's tree when there is one.
	Checkout(ctx context.Context, a Assignment, dir string) error
	// Push sends commit to ref of the assignment's repository.
	Push(ctx context.Context, a Assignment, dir, commit, ref string) error
}

// GitCode is Code over plain git URLs (a path, file://, or an HTTP URL
// with Header as an extra HTTP header, such as an Authorization).
type GitCode struct {
	Header string
}

func (g GitCode) args(args ...string) []string {
	if g.Header == "" {
		return args
	}
	return append([]string{"-c", "http.extraHeader=" + g.Header}, args...)
}

// Checkout implements Code.
func (g GitCode) Checkout(ctx context.Context, a Assignment, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	steps := [][]string{
		{"init", "-q"},
		g.args("fetch", "-q", "--no-tags", a.RepoURL, "+refs/heads/"+a.Branch+":refs/heads/"+a.Branch),
	}
	if a.SnapshotRef != "" {
		steps = append(steps, g.args("fetch", "-q", "--no-tags", a.RepoURL, "+refs/heads/"+a.SnapshotRef+":refs/heads/"+a.SnapshotRef))
	}
	steps = append(steps, []string{"checkout", "-q", "-B", a.Branch, a.Base})
	if a.Snapshot != "" {
		steps = append(steps, []string{"read-tree", "--reset", "-u", a.Snapshot})
	}
	for _, s := range steps {
		if _, err := git.Run(ctx, dir, s...); err != nil {
			return fmt.Errorf("getting the task's code: %w", err)
		}
	}
	return nil
}

// Push implements Code.
func (g GitCode) Push(ctx context.Context, a Assignment, dir, commit, ref string) error {
	if _, err := git.Run(ctx, dir, g.args("push", "-q", "--force", a.RepoURL, commit+":refs/heads/"+ref)...); err != nil {
		return fmt.Errorf("pushing the task's work: %w", err)
	}
	return nil
}
