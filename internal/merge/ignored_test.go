package merge_test

import (
	"path/filepath"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// An ignored file the task wrote survives the cleanup after landing, in the
// task's archive, and restore brings it back.
func TestLandKeepsIgnoredFiles(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, Cleanup: true, MaxSendBacks: 2})
	e.start()
	tk, w := e.newTask("add a feature")
	e.write(w.Path, "feature.txt", "feature\n")
	e.write(w.Path, "dev.log", "kept\n") // ignored by the repository
	e.complete(tk.ID, "add the feature")

	e.waitWorktree(tk.ID, store.WorktreeRemoved)
	if exists(w.Path) {
		t.Fatalf("worktree %s still there", w.Path)
	}
	archive, err := worktree.IgnoredArchive(e.ctx, e.repo, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.read(archive, "dev.log"); got != "kept\n" {
		t.Errorf("archived dev.log = %q", got)
	}
	rw, err := e.wt.Restore(e.ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.read(rw.Path, "dev.log"); got != "kept\n" {
		t.Errorf("restored dev.log = %q", got)
	}
	if exists(filepath.Join(archive, "dev.log")) {
		t.Error("archive kept after a full restore")
	}
}
