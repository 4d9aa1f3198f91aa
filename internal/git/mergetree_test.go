package git_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// TestRangeCommitsAndCommitTree: the commits of a range are read oldest
// first with their authors and whole messages, and a copy made with
// CommitTree keeps them exactly.
func TestRangeCommitsAndCommitTree(t *testing.T) {
	ctx := context.Background()
	dir := rtRepoOn(t, "main", map[string]string{"a.txt": "a\n"})
	base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	if cs, err := git.RangeCommits(ctx, dir, base, base); err != nil || len(cs) != 0 {
		t.Fatalf("empty range = %+v, %v", cs, err)
	}
	write(t, dir, "b.txt", "b\n")
	mustGit(t, dir, "add", "-A")
	msg := "subject: with colon\n\nbody line\n\n\ttabbed\nTrailer: x\n"
	mustGit(t, dir, "commit", "-q", "--author=Ann Author <ann@example.com>", "--cleanup=verbatim", "-m", msg)
	second := rtCommit(t, dir, "second", map[string]string{"c.txt": "c\n"})
	cs, err := git.RangeCommits(ctx, dir, base, second)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[1].ID != second || len(cs[0].Parents) != 1 || cs[0].Parents[0] != base {
		t.Fatalf("range = %+v", cs)
	}
	if cs[0].AuthorName != "Ann Author" || cs[0].AuthorEmail != "ann@example.com" || cs[0].Message != msg {
		t.Errorf("first commit read as %q <%s>: %q, want Ann Author <ann@example.com>: %q", cs[0].AuthorName, cs[0].AuthorEmail, cs[0].Message, msg)
	}
	tree := strings.TrimSpace(mustGit(t, dir, "rev-parse", cs[0].ID+"^{tree}"))
	copied, err := git.CommitTree(ctx, dir, cs[0].AuthorEnv(), tree, []string{base}, cs[0].Message)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustGit(t, dir, "log", "-1", "--format=%an|%ae|%ad|%B", "--date=raw", copied); got != mustGit(t, dir, "log", "-1", "--format=%an|%ae|%ad|%B", "--date=raw", cs[0].ID) {
		t.Errorf("copy %q differs from the original", got)
	}
	if got := strings.TrimSpace(mustGit(t, dir, "rev-parse", copied+"^{tree}")); got != tree {
		t.Errorf("copy's tree %s, want %s", got, tree)
	}
}
