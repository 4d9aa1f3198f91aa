package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/gitserve"
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
	for _, ref := range []string{a.SnapshotRef, a.Main} {
		if ref != "" && ref != a.Branch {
			steps = append(steps, g.args("fetch", "-q", "--no-tags", a.RepoURL, "+refs/heads/"+ref+":refs/heads/"+ref))
		}
	}
	for _, s := range steps {
		if _, err := git.Run(ctx, dir, s...); err != nil {
			return fmt.Errorf("getting the task's code: %w", err)
		}
	}
	return checkout(ctx, a, dir)
}

// Push implements Code.
func (g GitCode) Push(ctx context.Context, a Assignment, dir, commit, ref string) error {
	if _, err := git.Run(ctx, dir, g.args("push", "-q", "--force", a.RepoURL, commit+":refs/heads/"+ref)...); err != nil {
		return fmt.Errorf("pushing the task's work: %w", err)
	}
	return nil
}

// ServedCode is Code against the coordinator's git server (package
// gitserve), with the assignment's token; an assignment without one uses
// GitCode (a repository path). CAFile, when set, is the PEM file of the CA
// that signed the coordinator's certificate (https).
type ServedCode struct{ CAFile string }

// Checkout implements Code.
func (s ServedCode) Checkout(ctx context.Context, a Assignment, dir string) error {
	if a.GitToken == "" {
		return GitCode{}.Checkout(ctx, a, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := git.Run(ctx, dir, "init", "-q"); err != nil {
		return err
	}
	remote := gitserve.Remote{URL: a.RepoURL, Token: a.GitToken, CAFile: s.CAFile}
	specs := []string{"+refs/heads/" + a.Branch + ":refs/heads/" + a.Branch}
	for _, ref := range []string{a.SnapshotRef, a.Main} {
		if ref != "" && ref != a.Branch {
			specs = append(specs, "+refs/heads/"+ref+":refs/heads/"+ref)
		}
	}
	if err := gitserve.Fetch(ctx, dir, remote, specs...); err != nil {
		return fmt.Errorf("getting the task's code: %w", err)
	}
	return checkout(ctx, a, dir)
}

// Push implements Code: the run's branch is set to commit and pushed (a
// new branch or a fast-forward).
func (s ServedCode) Push(ctx context.Context, a Assignment, dir, commit, ref string) error {
	if a.GitToken == "" {
		return GitCode{}.Push(ctx, a, dir, commit, ref)
	}
	if _, err := git.Run(ctx, dir, "update-ref", "refs/heads/"+ref, commit); err != nil {
		return err
	}
	// A push the coordinator's git rejects for a passing reason (its
	// connectivity check met another task's worktree being removed:
	// "bad object worktrees/…") is tried again; a refusal (a fenced
	// epoch) is not.
	var err error
	for attempt := range pushAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		err = gitserve.Push(ctx, dir, gitserve.Remote{URL: a.RepoURL, Token: a.GitToken, CAFile: s.CAFile}, ref)
		if err == nil || strings.Contains(err.Error(), "access denied") {
			return err
		}
	}
	return err
}

// pushAttempts bounds the tries of one push.
const pushAttempts = 4

// checkout puts the branch at its base with the snapshot's tree.
func checkout(ctx context.Context, a Assignment, dir string) error {
	steps := [][]string{{"checkout", "-q", "-B", a.Branch, a.Base}}
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
