package git_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// TestBranchTip: the tip read from the loose ref file is the one git
// names; a packed ref, a symbolic one and a missing one are git's answer.
func TestBranchTip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := rtRepoOn(t, "main", map[string]string{"a.txt": "a\n"})
	r, err := git.Inspect(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	first := rtHead(t, dir)
	loose := filepath.Join(r.CommonDir, "refs", "heads", "main")
	if _, err := os.Stat(loose); err != nil {
		t.Fatalf("the test needs a loose ref: %v", err)
	}
	if got, err := git.BranchTip(ctx, r, "main"); err != nil || got != first {
		t.Errorf("loose: BranchTip = %q, %v; want %q", got, err, first)
	}
	second := rtCommit(t, dir, "second", map[string]string{"b.txt": "b\n"})
	if got, _ := git.BranchTip(ctx, r, "main"); got != second {
		t.Errorf("after a commit: BranchTip = %q, want %q", got, second)
	}
	mustGit(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(loose); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pack-refs left the loose ref: %v", err)
	}
	if got, err := git.BranchTip(ctx, r, "main"); err != nil || got != second {
		t.Errorf("packed: BranchTip = %q, %v; want %q", got, err, second)
	}
	mustGit(t, dir, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
	if got, err := git.BranchTip(ctx, r, "alias"); err != nil || got != second {
		t.Errorf("symbolic: BranchTip = %q, %v; want %q", got, err, second)
	}
	if _, err := git.BranchTip(ctx, r, "nope"); !errors.Is(err, git.ErrNoRef) {
		t.Errorf("missing: BranchTip err = %v, want ErrNoRef", err)
	}
}
