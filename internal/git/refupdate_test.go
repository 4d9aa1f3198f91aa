package git_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// TestUpdateRefsAllOrNothing: the updates of one transaction are made
// together; when one ref is not at its expected commit, none is made.
func TestUpdateRefsAllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := repo(t, nil)
	c1 := rtHead(t, dir)
	c2 := rtCommit(t, dir, "2", map[string]string{"a": "2"})
	mustGit(t, dir, "branch", "b", c1)
	tip := func(ref string) string {
		out, _ := git.Tips(ctx, dir, ref)
		return out[0]
	}
	// The branch moved: deleting it from c2 is refused, and the archive
	// ref of the same transaction is not made.
	err := git.UpdateRefs(ctx, dir,
		git.RefUpdate{Ref: "refs/keep/b", New: c1},
		git.RefUpdate{Ref: "refs/heads/b", Old: c2, Delete: true})
	if err == nil {
		t.Fatal("a delete from the wrong commit went through")
	}
	if got := tip("refs/keep/b"); got != "" {
		t.Errorf("refs/keep/b = %s after a refused transaction, want none", got)
	}
	if got := tip("refs/heads/b"); got != c1 {
		t.Errorf("refs/heads/b = %s after a refused transaction, want %s", got, c1)
	}
	before := git.Started()
	err = git.UpdateRefs(ctx, dir,
		git.RefUpdate{Ref: "refs/keep/b", New: c1},
		git.RefUpdate{Ref: "refs/heads/b", Old: c1, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := git.Started() - before; n < 1 {
		t.Errorf("%d git processes counted, want at least 1", n)
	}
	if got := tip("refs/keep/b"); got != c1 {
		t.Errorf("refs/keep/b = %s, want %s", got, c1)
	}
	if got := tip("refs/heads/b"); got != "" {
		t.Errorf("refs/heads/b = %s after its deletion, want none", got)
	}
	// An update without an expected commit overwrites.
	if err := git.UpdateRefs(ctx, dir, git.RefUpdate{Ref: "refs/keep/b", New: c2}); err != nil || tip("refs/keep/b") != c2 {
		t.Errorf("overwriting refs/keep/b: %v, at %s", err, tip("refs/keep/b"))
	}
	if err := git.UpdateRefs(ctx, dir, git.RefUpdate{Ref: "refs/keep/b c", New: c2}); err == nil || !strings.Contains(err.Error(), "bad ref update") {
		t.Errorf("a ref name with a space: %v, want a bad ref update", err)
	}
}
