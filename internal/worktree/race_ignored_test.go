package worktree_test

import (
	"strings"
	"time"

	"context"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// TestIgnoredFileWrittenDuringRemovalKept: an ignored file written after
// the removal copied the ignored files to the archive and before the
// worktree is deleted (while the first ones are copied, as a process still
// running in the worktree would) is kept too: the removal lists them again
// until a listing finds nothing new. Before the fix it was deleted with the
// worktree.
func TestIgnoredFileWrittenDuringRemovalKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtIgnoredRepo(t)
	e := wtNewEnv(t, wtCopyEnv())
	tk := e.task(repo)
	w := e.provision(tk)
	wtWrite(t, w.Path, "dev.env", "SECRET=1\n")
	e.commitWork(tk.ID, "done", map[string]string{"a.txt": "a\n"})
	e.m.AfterKeptRound(func(round int) {
		if round == 0 {
			wtWrite(t, w.Path, "late.env", "late\n")
		}
	})
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

// TestPruneArchives: an archive of a restored worktree whose files are all
// back is deleted; one whose copies differ from the worktree's is kept
// with the files named; an archive of a removed worktree is kept unless
// older than --older-than.
func TestPruneArchives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtIgnoredRepo(t)
	e := wtNewEnv(t, wtCopyEnv())

	// restored: the archive is left as a restore that met files in the
	// way leaves it (the copies stay): one equal, one different.
	restored := e.task(repo)
	rw := e.provision(restored)
	wtWrite(t, rw.Path, "same.env", "S=1\n")
	wtWrite(t, rw.Path, "base.env", "KEY=changed\n")
	e.commitWork(restored.ID, "done", map[string]string{"a.txt": "a\n"})
	if _, err := e.m.Remove(ctx, restored.ID, "cancelled", false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Restore(ctx, restored.ID); err != nil {
		t.Fatal(err)
	}
	restoredDir, _ := worktree.IgnoredArchive(ctx, repo, restored.ID)
	if wtExists(restoredDir) {
		t.Fatal("a clean restore left its archive")
	}
	wtWrite(t, restoredDir, "same.env", "S=1\n")
	wtWrite(t, restoredDir, "base.env", "KEY=archived\n")

	// removed: its worktree is gone, the archive is all that is left.
	removed := e.task(repo)
	mw := e.provision(removed)
	wtWrite(t, mw.Path, "dev.env", "SECRET=1\n")
	e.commitWork(removed.ID, "done", map[string]string{"b.txt": "b\n"})
	if _, err := e.m.Remove(ctx, removed.ID, "cancelled", false); err != nil {
		t.Fatal(err)
	}
	removedDir, _ := worktree.IgnoredArchive(ctx, repo, removed.ID)

	byTask := func(res []worktree.ArchivePruneResult) map[task.ID]worktree.ArchivePruneResult {
		out := map[task.ID]worktree.ArchivePruneResult{}
		for _, r := range res {
			out[r.TaskID] = r
		}
		return out
	}
	res, err := e.m.PruneArchives(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := byTask(res)
	if r := got[restored.ID]; r.Removed || !strings.Contains(r.Reason, "base.env") || strings.Contains(r.Reason, "same.env") || !wtExists(restoredDir) {
		t.Errorf("restored archive with a differing copy: %+v; want kept, naming base.env", r)
	}
	if r := got[removed.ID]; r.Removed || r.Files != 1 || !wtExists(removedDir) {
		t.Errorf("removed worktree's archive without --older-than: %+v; want kept", r)
	}

	// The user settles base.env: every archived file is in the worktree.
	wtWrite(t, rw.Path, "base.env", "KEY=archived\n")
	later := worktree.New(worktree.Options{Store: e.st, Config: wtCopyEnv(), Now: func() time.Time { return time.Now().Add(48 * time.Hour) }})
	res, err = later.PruneArchives(ctx, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	got = byTask(res)
	if r := got[restored.ID]; !r.Removed || wtExists(restoredDir) {
		t.Errorf("restored archive, all files back: %+v; want deleted", r)
	}
	if r := got[removed.ID]; !r.Removed || wtExists(removedDir) {
		t.Errorf("removed worktree's archive older than 24h: %+v; want deleted", r)
	}
	if got := wtRead(t, rw.Path, "base.env"); got != "KEY=archived\n" {
		t.Errorf("the restored worktree's base.env = %q", got)
	}
	if res, err := later.PruneArchives(ctx, 24*time.Hour); err != nil || len(res) != 0 {
		t.Errorf("second prune = %+v, %v; want nothing", res, err)
	}
}
