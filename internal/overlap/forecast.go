package overlap

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// GitForecaster forecasts with git: each side's work tree, committed and
// uncommitted work as on disk, photographed as a commit on its HEAD (a
// temporary index; the worktree, its index and the refs are untouched),
// then `git merge-tree --write-tree` of the two.
type GitForecaster struct{}

// Forecast implements Forecaster.
func (GitForecaster) Forecast(ctx context.Context, a, b Side) (Forecast, error) {
	ca, err := photograph(ctx, a.Path)
	if err != nil {
		return Forecast{}, fmt.Errorf("reading %s's work tree: %w", a.TaskID, err)
	}
	cb, err := photograph(ctx, b.Path)
	if err != nil {
		return Forecast{}, fmt.Errorf("reading %s's work tree: %w", b.TaskID, err)
	}
	began := time.Now()
	res, err := git.MergeTree(ctx, a.Repo, ca, cb)
	took := time.Since(began)
	if err != nil {
		return Forecast{}, err
	}
	f := Forecast{Result: Clean, Took: took}
	if !res.Clean {
		f.Result, f.Conflicts = Conflict, res.Conflicts
	}
	if base, err := git.Run(ctx, a.Repo, "merge-base", ca, cb); err == nil {
		base = strings.TrimSpace(base)
		f.StatA = diffStat(ctx, a.Repo, base, ca)
		f.StatB = diffStat(ctx, a.Repo, base, cb)
		f.Lines = pairLines(ctx, a.Repo, base, ca, cb, a.Files)
	}
	return f, nil
}

// photograph returns a commit of the work tree at dir as it is on disk,
// on its HEAD.
func photograph(ctx context.Context, dir string) (string, error) {
	tree, err := git.WorkTreeTree(ctx, dir)
	if err != nil {
		return "", err
	}
	head, err := git.Run(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	env := []string{"GIT_AUTHOR_NAME=neuraphage", "GIT_AUTHOR_EMAIL=neuraphage@localhost",
		"GIT_COMMITTER_NAME=neuraphage", "GIT_COMMITTER_EMAIL=neuraphage@localhost"}
	return git.CommitTree(ctx, dir, env, tree, []string{strings.TrimSpace(head)}, "overlap forecast\n")
}

// diffStat is `git diff --stat` of base..tip, "" when git cannot say.
func diffStat(ctx context.Context, dir, base, tip string) string {
	out, err := git.Run(ctx, dir, "diff", "--stat=100", base, tip)
	if err != nil {
		return ""
	}
	return strings.TrimRight(out, "\n")
}

// maxStat bounds the diff stat a notice carries.
const maxStat = 2000

// Notice is the text a task is told about other, with which it shares
// files; forecast and conflicts are the pair's forecast, stat other's diff
// stat. other's description is escaped: it cannot forge a wrapper.
func Notice(other task.Task, files []string, forecast string, conflicts []string, stat string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s is changing files you changed too: %s.\n", other.ID, strings.Join(files, ", "))
	fmt.Fprintf(&b, "Its task: %s\n", engine.Neutralize(words.Clip(other.Description, 300)))
	switch forecast {
	case Conflict:
		fmt.Fprintf(&b, "git merge-tree predicts a conflict between your work and its (in %s): agree on the shared code, or keep your changes away from it.\n", strings.Join(conflicts, ", "))
	case Clean:
		b.WriteString("Your work and its merge cleanly for now; mind the shared files.\n")
	}
	if stat != "" {
		fmt.Fprintf(&b, "Its changes:\n%s\n", engine.Neutralize(words.Clip(stat, maxStat)))
	}
	return b.String()
}
