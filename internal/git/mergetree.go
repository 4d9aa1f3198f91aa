package git

import (
	"context"
	"fmt"
	"strings"
)

// RangeCommit is one commit of a range, as RangeCommits reads it.
type RangeCommit struct {
	ID      string
	Parents []string
	// AuthorName, AuthorEmail and AuthorDate ("<unix seconds> <zone>",
	// git's internal form) sign a copy of the commit as its author did.
	AuthorName, AuthorEmail, AuthorDate string
	Message                             string
}

// AuthorEnv returns the environment that makes commit-tree keep c's author.
func (c RangeCommit) AuthorEnv() []string {
	return []string{"GIT_AUTHOR_NAME=" + c.AuthorName, "GIT_AUTHOR_EMAIL=" + c.AuthorEmail, "GIT_AUTHOR_DATE=" + c.AuthorDate}
}

// RangeCommits returns the commits reachable from tip and not from base,
// oldest first (`git log --reverse base..tip`), in one git process; none,
// without asking git, when base and tip are the same object id (a task
// that committed nothing).
func RangeCommits(ctx context.Context, dir, base, tip string) ([]RangeCommit, error) {
	if base == tip && isObjectID(base) {
		return nil, nil
	}
	const fields = 6
	out, err := run(ctx, dir, nil, "log", "-z", "--reverse", "--date=raw",
		"--format=%H%x00%P%x00%an%x00%ae%x00%ad%x00%B", base+".."+tip, "--")
	if err != nil {
		return nil, err
	}
	out = strings.TrimSuffix(out, "\x00")
	if out == "" {
		return nil, nil
	}
	parts := strings.Split(out, "\x00")
	if len(parts)%fields != 0 {
		return nil, fmt.Errorf("reading the commits of %s..%s: %d fields, not a multiple of %d", base, tip, len(parts), fields)
	}
	cs := make([]RangeCommit, 0, len(parts)/fields)
	for i := 0; i < len(parts); i += fields {
		cs = append(cs, RangeCommit{
			ID: parts[i], Parents: strings.Fields(parts[i+1]),
			AuthorName: parts[i+2], AuthorEmail: parts[i+3], AuthorDate: parts[i+4],
			Message: parts[i+5],
		})
	}
	return cs, nil
}

// CommitTree makes a commit of tree with parents and message (given on
// standard input, kept as it is) and returns it; env signs it. It writes
// objects only: no ref, index or work tree changes.
func CommitTree(ctx context.Context, dir string, env []string, tree string, parents []string, message string) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	out, err := runOnceIn(ctx, dir, env, strings.NewReader(message), append(args, "-F", "-")...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}
