package merge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TestKilledFastForwardFinished: a `git merge --ff-only` of the user's
// checkout killed half way (with the daemon; found by the chaos test, seed
// 32) leaves files of the commit it was moving to in the checkout while
// HEAD and the index stay: a new file untracked, a changed one modified.
// git offers no hook inside the checkout's file writes, so the test makes
// that state by writing them as git does. Before the fix every later
// fast-forward refused ("untracked working tree files would be
// overwritten") and the entry waited for good. Now it lands; the files are
// kept aside, and the user's own untracked file is not touched.
func TestKilledFastForwardFinished(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	e.commitOn(e.repo, "shared", map[string]string{"shared.txt": "v1\n"})
	tk, w := e.newTask("task")
	e.commitOn(w.Path, "task work", map[string]string{"task.txt": "task\n", "shared.txt": "v2\n"})
	// What the killed fast-forward wrote, and a file of the user's.
	e.write(e.repo, "task.txt", "task\n")
	e.write(e.repo, "shared.txt", "v2\n")
	e.write(e.repo, "mine.txt", "the user's\n")
	e.start()
	e.complete(tk.ID, "task")
	ent := e.waitEntry(tk.ID, "closed", func(m store.MergeEntry) bool { return !m.State.Open() || m.State == store.MergeWaiting })
	if ent.State != store.MergeLanded {
		t.Fatalf("entry %s: %s", ent.State, ent.Detail)
	}
	e.waitTask(tk.ID, task.Completed)
	if st := e.git(e.repo, "status", "--porcelain"); st != "?? mine.txt" {
		t.Errorf("status of the checkout = %q; want only the user's file", st)
	}
	if e.read(e.repo, "shared.txt") != "v2\n" || e.read(e.repo, "task.txt") != "task\n" || e.read(e.repo, "mine.txt") != "the user's\n" {
		t.Error("the checkout's files are not as landed")
	}
	kept, _ := filepath.Glob(filepath.Join(e.repo, ".git", "neuraphage", "fast-forward", "*", "task.txt"))
	if len(kept) != 1 {
		t.Errorf("the file in the way was not kept aside: %v", kept)
	}
}

// TestKilledFastForwardAfterItsIndexFinished: killed after git wrote the
// index and before it moved HEAD, the fast-forward leaves the commit's
// files staged in the checkout (seen in the chaos test); they are the
// commit's, so they are unstaged, kept aside and the fast-forward runs. A
// file the user staged with other content makes the entry wait instead
// (TestStagedChangeOfTheUsersWaits).
func TestKilledFastForwardAfterItsIndexFinished(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	e.commitOn(e.repo, "shared", map[string]string{"shared.txt": "v1\n", "gone.txt": "old\n"})
	tk, w := e.newTask("task")
	e.commitOn(w.Path, "task work", map[string]string{"task.txt": "task\n", "shared.txt": "v2\n"})
	e.git(w.Path, "rm", "-q", "gone.txt")
	e.git(w.Path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "drop gone.txt")
	// What the killed fast-forward left: the index and work tree at the
	// task's commit, HEAD where it was.
	e.git(e.repo, "read-tree", "-m", "-u", "HEAD", strings.TrimSpace(e.git(w.Path, "rev-parse", "HEAD")))
	if st := e.git(e.repo, "status", "--porcelain"); !strings.Contains(st, "A  task.txt") {
		t.Fatalf("the state was not built: %q", st)
	}
	e.write(e.repo, "mine.txt", "the user's\n")
	e.start()
	e.complete(tk.ID, "task")
	ent := e.waitEntry(tk.ID, "closed", func(m store.MergeEntry) bool { return !m.State.Open() || m.State == store.MergeWaiting })
	if ent.State != store.MergeLanded {
		t.Fatalf("entry %s: %s", ent.State, ent.Detail)
	}
	if st := e.git(e.repo, "status", "--porcelain"); st != "?? mine.txt" {
		t.Errorf("status of the checkout = %q; want only the user's file", st)
	}
	if e.read(e.repo, "shared.txt") != "v2\n" || e.read(e.repo, "task.txt") != "task\n" {
		t.Error("the checkout's files are not as landed")
	}
}

// TestStagedChangeOfTheUsersWaits: a change the user staged, with other
// content than the landing's, makes the entry wait and stays staged.
func TestStagedChangeOfTheUsersWaits(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	e.commitOn(w.Path, "task work", map[string]string{"task.txt": "task\n"})
	e.write(e.repo, "task.txt", "the user's own\n")
	e.git(e.repo, "add", "task.txt")
	e.start()
	e.complete(tk.ID, "task")
	e.waitState(tk.ID, store.MergeWaiting)
	if st := e.git(e.repo, "status", "--porcelain"); st != "A  task.txt" {
		t.Errorf("status of the checkout = %q; want the user's staged file as it was", st)
	}
	if e.read(e.repo, "task.txt") != "the user's own\n" {
		t.Error("the user's file changed")
	}
}

// TestFastForwardInTheWayOfOtherContentWaits: an untracked file in the
// checkout with other content than the landing's is the user's: the entry
// waits and the file is not touched.
func TestFastForwardInTheWayOfOtherContentWaits(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	e.commitOn(w.Path, "task work", map[string]string{"task.txt": "task\n"})
	e.write(e.repo, "task.txt", "the user's own\n")
	e.start()
	e.complete(tk.ID, "task")
	ent := e.waitState(tk.ID, store.MergeWaiting)
	if !strings.Contains(ent.Detail, "task.txt") {
		t.Errorf("waiting detail %q should name the file", ent.Detail)
	}
	if e.read(e.repo, "task.txt") != "the user's own\n" {
		t.Error("the user's file changed")
	}
	if _, err := os.Stat(filepath.Join(e.repo, ".git", "neuraphage", "fast-forward")); err == nil {
		t.Error("something was kept aside")
	}
}
