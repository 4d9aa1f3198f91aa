package worktree_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// TestIgnoredFileWrittenDuringRemovalKept: an ignored file written after
// the removal copied the ignored files to the archive and before `git
// worktree remove` (a reference-transaction hook on the archive ref writes
// it, as a process still running in the worktree would) is kept too.
// Before the fix it was deleted with the worktree.
func TestIgnoredFileWrittenDuringRemovalKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtIgnoredRepo(t)
	e := wtNewEnv(t, wtCopyEnv())
	tk := e.task(repo)
	w := e.provision(tk)
	wtWrite(t, w.Path, "dev.env", "SECRET=1\n")
	e.commitWork(tk.ID, "done", map[string]string{"a.txt": "a\n"})
	hook := "#!/bin/sh\n[ \"$1\" = committed ] || exit 0\n" +
		"if grep -q refs/neuraphage/archive/; then echo late > '" + filepath.Join(w.Path, "late.env") + "'; fi\nexit 0\n"
	if err := os.WriteFile(filepath.Join(repo, ".git", "hooks", "reference-transaction"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Remove(ctx, tk.ID, "cancelled", false); err != nil {
		t.Fatal(err)
	}
	if wtExists(w.Path) {
		t.Fatal("worktree still there")
	}
	archive, err := worktree.IgnoredArchive(ctx, repo, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !wtExists(filepath.Join(archive, "late.env")) {
		t.Fatal("late.env, written while the worktree was being removed, was lost")
	}
	if got := wtRead(t, archive, "late.env"); got != "late\n" {
		t.Errorf("archived late.env = %q", got)
	}
	if got := wtRead(t, archive, "dev.env"); got != "SECRET=1\n" {
		t.Errorf("archived dev.env = %q", got)
	}
	if ev := e.removedEvent(tk.ID); !slices.Equal(ev.Kept, []string{"dev.env", "late.env"}) {
		t.Errorf("removal event kept %q; want dev.env, late.env", ev.Kept)
	}
}
