package merge_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

func TestLandClean(t *testing.T) {
	for _, strategy := range []string{merge.Rebase, merge.Merge, merge.Squash} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			e := newMergeEnv(t, merge.Config{Strategy: strategy, Cleanup: true, MaxSendBacks: 2})
			e.start()
			base := e.rev(e.repo, "main")
			tk, w := e.newTask("add a feature")
			// One commit by the agent, one file left for Complete to commit.
			agentCommit := e.commitOn(w.Path, "agent: feature", map[string]string{"feature.txt": "feature\n"})
			e.write(w.Path, "notes.txt", "notes\n")
			e.complete(tk.ID, "add the feature")

			ent := e.waitState(tk.ID, store.MergeLanded)
			got := e.waitTask(tk.ID, task.Completed)
			if !strings.Contains(got.CloseReason, "landed on main") {
				t.Errorf("close reason %q does not say it landed on main", got.CloseReason)
			}
			main := e.rev(e.repo, "refs/heads/main")
			if ent.Commit != main {
				t.Errorf("entry commit %s, main at %s", ent.Commit, main)
			}
			e.waitWorktree(tk.ID, store.WorktreeRemoved)
			archive := e.rev(e.repo, worktree.ArchiveRef(tk.ID))
			switch strategy {
			case merge.Rebase:
				// Main moved by fast-forward to the branch tip: linear.
				if archive != main {
					t.Errorf("rebase: main %s is not the branch tip %s", main, archive)
				}
				if n := e.git(e.repo, "rev-list", "--count", "--merges", base+"..main"); n != "0" {
					t.Errorf("rebase: %s merge commits on main, want linear history", n)
				}
				if n := e.git(e.repo, "rev-list", "--count", base+"..main"); n != "2" {
					t.Errorf("rebase: %s new commits on main, want 2", n)
				}
				if main == agentCommit || e.git(e.repo, "rev-parse", "main~1") != agentCommit {
					t.Errorf("rebase: main %s, want a commit on top of the agent's %s", main, agentCommit)
				}
			case merge.Merge:
				parents := strings.Fields(e.git(e.repo, "rev-list", "--parents", "-n1", "main"))
				if len(parents) != 3 {
					t.Fatalf("merge: main %s has parents %v, want two", main, parents[1:])
				}
				if parents[1] != base || parents[2] != archive {
					t.Errorf("merge: parents %v, want [%s %s]", parents[1:], base, archive)
				}
				if msg := e.git(e.repo, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, worktree.Branch(tk.ID)) {
					t.Errorf("merge: message %q does not name the branch", msg)
				}
			case merge.Squash:
				if n := e.git(e.repo, "rev-list", "--count", base+"..main"); n != "1" {
					t.Errorf("squash: %s new commits on main, want 1", n)
				}
				if p := e.git(e.repo, "rev-parse", "main^"); p != base {
					t.Errorf("squash: parent %s, want %s", p, base)
				}
				if mt, bt := e.rev(e.repo, "main^{tree}"), e.rev(e.repo, archive+"^{tree}"); mt != bt {
					t.Errorf("squash: tree %s, branch tree %s", mt, bt)
				}
			}
			if e.read(e.repo, "feature.txt") != "feature\n" || e.read(e.repo, "notes.txt") != "notes\n" {
				t.Error("the user's checkout does not have the landed files")
			}
			if s := e.status(e.repo); s != "" {
				t.Errorf("the user's checkout is not clean after landing:\n%s", s)
			}
			ks := e.kinds(tk.ID)
			for _, k := range []string{"merge.queued", "merge.started", "merge.landed", "git.commit"} {
				if !slices.Contains(ks, k) {
					t.Errorf("events %v lack %s", ks, k)
				}
			}
			// Cleanup: the worktree went, the branch too, its tip archived.
			if exists(w.Path) {
				t.Errorf("worktree %s still there", w.Path)
			}
			if out := e.git(e.repo, "branch", "--list", worktree.Branch(tk.ID)); out != "" {
				t.Errorf("branch still there: %q", out)
			}
			if strategy != merge.Rebase {
				if _, err := gitTry(e.repo, "merge-base", "--is-ancestor", agentCommit, archive); err != nil {
					t.Errorf("archive %s does not hold the agent's commit: %v", archive, err)
				}
			}
			rec, err := e.wt.Get(e.ctx, tk.ID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.State != store.WorktreeRemoved || rec.Landed != main || rec.LandedTip != archive || rec.Archive != worktree.ArchiveRef(tk.ID) {
				t.Errorf("worktree record %+v, want removed, landed as %s from tip %s", rec, main, archive)
			}
		})
	}
}

// TestLandAfterMainMoved: main got a commit (other files) after the task
// branched; the rebase puts the task's work on top and both are there.
func TestLandAfterMainMoved(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	e.commitOn(w.Path, "task work", map[string]string{"task.txt": "task\n"})
	userCommit := e.commitOn(e.repo, "user work", map[string]string{"user.txt": "user\n"})
	e.start()
	e.complete(tk.ID, "task work")
	ent := e.waitState(tk.ID, store.MergeLanded)
	e.waitTask(tk.ID, task.Completed)
	if p := e.git(e.repo, "rev-parse", "main^"); p != userCommit {
		t.Errorf("main^ = %s, want the user's commit %s (task on top)", p, userCommit)
	}
	if ent.Commit != e.rev(e.repo, "main") {
		t.Errorf("entry commit %s, main %s", ent.Commit, e.rev(e.repo, "main"))
	}
	if e.read(e.repo, "task.txt") != "task\n" || e.read(e.repo, "user.txt") != "user\n" {
		t.Error("both changes should be in the checkout")
	}
	if s := e.status(e.repo); s != "" {
		t.Errorf("checkout not clean: %s", s)
	}
	// Without Cleanup the worktree stays, on the rebased branch.
	if !exists(w.Path) || e.rev(w.Path, "HEAD") != ent.Commit {
		t.Errorf("worktree %s should stay at the landed tip", w.Path)
	}
}

// conflictPair lands a first task editing line 2 of shared.txt and sends
// back a second editing the same line.
func conflictPair(t *testing.T, e *env) (second task.Task, w store.Worktree, head string) {
	t.Helper()
	t1, w1 := e.newTask("first")
	t2, w2 := e.newTask("second")
	e.write(w1.Path, "shared.txt", "line 1\nline 2 by first\nline 3\n")
	e.write(w2.Path, "shared.txt", "line 1\nline 2 by second\nline 3\n")
	e.complete(t1.ID, "first edit")
	e.waitState(t1.ID, store.MergeLanded)
	e.complete(t2.ID, "second edit")
	return t2, w2, e.rev(w2.Path, "HEAD")
}

func TestConflictSentBackThenFixed(t *testing.T) {
	for _, strategy := range []string{merge.Rebase, merge.Merge, merge.Squash} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			e := newMergeEnv(t, merge.Config{Strategy: strategy, MaxSendBacks: 2})
			e.start()
			t2, w2, head := conflictPair(t, e)
			ent := e.waitState(t2.ID, store.MergeSentBack)
			e.waitTask(t2.ID, task.Queued)
			if !slices.Contains(ent.Files, "shared.txt") || !strings.Contains(ent.Detail, "shared.txt") {
				t.Errorf("entry files %v detail %q should name shared.txt", ent.Files, ent.Detail)
			}
			inj := e.inj.forTask(t2.ID)
			if len(inj) != 1 || inj[0].Kind != "rebase" || !strings.Contains(inj[0].Text, "shared.txt") || inj[0].Attrs["files"] != "shared.txt" {
				t.Fatalf("injections %+v, want one rebase naming shared.txt", inj)
			}
			// The worktree is as the agent left it (its work committed).
			if got := e.rev(w2.Path, "HEAD"); got != head {
				t.Errorf("worktree HEAD moved from %s to %s", head, got)
			}
			if s := e.status(w2.Path); s != "" {
				t.Errorf("worktree not clean: %s", s)
			}
			gd := e.git(w2.Path, "rev-parse", "--path-format=absolute", "--git-dir")
			for _, f := range []string{"rebase-merge", "rebase-apply", "MERGE_HEAD"} {
				if exists(filepath.Join(gd, f)) {
					t.Errorf("%s left in %s", f, gd)
				}
			}
			if e.read(w2.Path, "shared.txt") != "line 1\nline 2 by second\nline 3\n" {
				t.Error("the worktree's file changed")
			}
			if got := e.git(w2.Path, "log", "-1", "--format=%s"); got != "second edit" {
				t.Errorf("head commit %q", got)
			}

			// The agent runs again and follows the instructions: merge main,
			// resolve, commit, complete.
			e.move(t2.ID, task.Running)
			if _, err := gitTry(w2.Path, "merge", "main"); err == nil {
				t.Fatal("git merge main should conflict")
			}
			e.write(w2.Path, "shared.txt", "line 1\nline 2 by first\nline 2 by second\nline 3\n")
			e.git(w2.Path, "commit", "-q", "-am", "merge main, keep both")
			e.complete(t2.ID, "second edit, resolved")
			ent = e.waitEntry(t2.ID, "closed", func(m store.MergeEntry) bool { return !m.State.Open() && m.ID != ent.ID })
			if ent.State != store.MergeLanded {
				if strategy == merge.Rebase {
					t.Errorf("rebase strategy: after the agent resolved the conflict as told (git merge main, commit), the rebase drops the merge commit and conflicts again: entry %s: %s", ent.State, ent.Detail)
				}
				t.Fatalf("resolved entry is %s: %s", ent.State, ent.Detail)
			}
			e.waitTask(t2.ID, task.Completed)
			if got := e.read(e.repo, "shared.txt"); got != "line 1\nline 2 by first\nline 2 by second\nline 3\n" {
				t.Errorf("shared.txt on main: %q", got)
			}
			if s := e.status(e.repo); s != "" {
				t.Errorf("checkout not clean: %s", s)
			}
		})
	}
}

// TestConflictParkedThenRetry: with no send-backs allowed the entry parks;
// the user fixes the branch and retries.
func TestConflictParkedThenRetry(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 0})
	e.start()
	t2, w2, head := conflictPair(t, e)
	ent := e.waitState(t2.ID, store.MergeParked)
	if got := e.rev(w2.Path, "HEAD"); got != head {
		t.Errorf("worktree HEAD moved from %s to %s", head, got)
	}
	tk := e.waitTask(t2.ID, task.Paused)
	if !strings.Contains(tk.CloseReason, "merge retry") {
		t.Errorf("paused reason %q does not mention merge retry", tk.CloseReason)
	}
	if !slices.Contains(ent.Files, "shared.txt") {
		t.Errorf("parked entry files %v", ent.Files)
	}
	if inj := e.inj.forTask(t2.ID); len(inj) != 1 || inj[0].Kind != "rebase" {
		t.Errorf("injections %+v, want the conflict told once", inj)
	}
	// The user rebases the branch by hand, resolving the conflict.
	if _, err := gitTry(w2.Path, "rebase", "main"); err == nil {
		t.Fatal("rebase should conflict")
	}
	e.write(w2.Path, "shared.txt", "line 1\nline 2 by first, then second\nline 3\n")
	e.git(w2.Path, "add", "shared.txt")
	e.git(w2.Path, "-c", "core.editor=true", "rebase", "--continue")
	if _, err := e.q.Retry(e.ctx, t2.ID); err != nil {
		t.Fatal(err)
	}
	ent = e.waitEntry(t2.ID, "closed after retry", func(m store.MergeEntry) bool { return m.ID != ent.ID && !m.State.Open() })
	if ent.State != store.MergeLanded {
		t.Fatalf("retried entry %s: %s (task %s: %s)", ent.State, ent.Detail, e.task(t2.ID).Status, e.task(t2.ID).CloseReason)
	}
	e.waitTask(t2.ID, task.Completed)
	if got := e.read(e.repo, "shared.txt"); got != "line 1\nline 2 by first, then second\nline 3\n" {
		t.Errorf("shared.txt %q", got)
	}
}

func TestGate(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 3, Gate: `test -f ok.txt || { echo "ok.txt is missing in $PWD"; exit 3; }`})
	e.start()
	tk, w := e.newTask("gated")
	e.write(w.Path, "work.txt", "work\n")
	e.complete(tk.ID, "work")
	ent := e.waitState(tk.ID, store.MergeSentBack)
	e.waitTask(tk.ID, task.Queued)
	if !strings.Contains(ent.Detail, "exit 3") || !strings.Contains(ent.Detail, "ok.txt is missing") {
		t.Errorf("detail %q", ent.Detail)
	}
	inj := e.inj.forTask(tk.ID)
	if len(inj) != 1 || inj[0].Kind != "message" || !strings.Contains(inj[0].Text, "ok.txt is missing in "+w.Path) {
		t.Fatalf("injections %+v, want a message with the gate's output", inj)
	}
	if e.rev(e.repo, "main") == e.rev(w.Path, "HEAD") || exists(filepath.Join(e.repo, "work.txt")) {
		t.Error("a failed gate must not land")
	}
	e.move(tk.ID, task.Running)
	e.write(w.Path, "ok.txt", "ok\n")
	e.complete(tk.ID, "work, gate fixed")
	e.waitEntry(tk.ID, "landed", func(m store.MergeEntry) bool { return m.ID != ent.ID && m.State == store.MergeLanded })
	e.waitTask(tk.ID, task.Completed)
	if !exists(filepath.Join(e.repo, "ok.txt")) || !exists(filepath.Join(e.repo, "work.txt")) {
		t.Error("landed files missing from the checkout")
	}
}

// TestGateSeesMain: the gate runs on the branch brought up to date with
// main, so it sees a file only main has.
func TestGateSeesMain(t *testing.T) {
	for _, strategy := range []string{merge.Rebase, merge.Merge, merge.Squash} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			e := newMergeEnv(t, merge.Config{Strategy: strategy, MaxSendBacks: 3, Gate: "test -f onmain.txt && test -f work.txt"})
			tk, w := e.newTask("gated")
			e.write(w.Path, "work.txt", "work\n")
			e.commitOn(e.repo, "main only", map[string]string{"onmain.txt": "main\n"})
			e.start()
			e.complete(tk.ID, "work")
			ent := e.waitEntry(tk.ID, "closed", func(m store.MergeEntry) bool { return !m.State.Open() })
			if ent.State != store.MergeLanded {
				t.Fatalf("entry %s: %s", ent.State, ent.Detail)
			}
			e.waitTask(tk.ID, task.Completed)
		})
	}
}

// TestDirtyCheckoutWaits: a changed tracked file in the user's checkout of
// main holds the landing; the change is not touched; it lands once reverted.
func TestDirtyCheckoutWaits(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	before := e.rev(e.repo, "main")
	dirty := "readme, edited by the user and not saved in git\r\n\x00binary"
	e.write(e.repo, "README", dirty)
	e.start()
	tk, w := e.newTask("task")
	e.write(w.Path, "task.txt", "task\n")
	e.complete(tk.ID, "task")
	ent := e.waitState(tk.ID, store.MergeWaiting)
	if !strings.Contains(ent.Detail, e.repo) || !strings.Contains(ent.Detail, "README") {
		t.Errorf("waiting detail %q should name the checkout %s and the file", ent.Detail, e.repo)
	}
	// It keeps waiting through several retries, touching nothing.
	for range 5 {
		prev := ent.Attempts
		ent = e.waitEntry(tk.ID, "retried", func(m store.MergeEntry) bool { return m.Attempts > prev && m.State != store.MergeRunning })
	}
	if ent.State != store.MergeWaiting {
		t.Fatalf("entry %s: %s", ent.State, ent.Detail)
	}
	if got := e.read(e.repo, "README"); got != dirty {
		t.Fatalf("the user's edit changed: %q", got)
	}
	if e.rev(e.repo, "main") != before || exists(filepath.Join(e.repo, "task.txt")) {
		t.Fatal("main moved while its checkout was dirty")
	}
	if tk := e.task(tk.ID); tk.Status != task.Merging {
		t.Errorf("task %s while waiting", tk.Status)
	}
	// Retries for the same reason log nothing new: one waiting, one started.
	count := map[string]int{}
	for _, k := range e.kinds(tk.ID) {
		count[k]++
	}
	if count["merge.waiting"] != 1 || count["merge.started"] != 1 {
		t.Errorf("after %d attempts: %d merge.waiting and %d merge.started events, want 1 each", ent.Attempts, count["merge.waiting"], count["merge.started"])
	}
	e.git(e.repo, "checkout", "--", "README")
	e.waitState(tk.ID, store.MergeLanded)
	e.waitTask(tk.ID, task.Completed)
	if e.read(e.repo, "task.txt") != "task\n" || e.status(e.repo) != "" {
		t.Error("not landed cleanly in the checkout")
	}
}

// TestUntrackedInTheWay: an untracked file in the user's checkout where the
// landing adds one: git refuses, the entry waits, the file stays.
func TestUntrackedInTheWay(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	e.write(e.repo, "new.txt", "the user's own new.txt\n")
	e.write(e.repo, "other-untracked.txt", "x\n")
	e.start()
	tk, w := e.newTask("task")
	e.write(w.Path, "new.txt", "the task's new.txt\n")
	e.complete(tk.ID, "task")
	ent := e.waitState(tk.ID, store.MergeWaiting)
	// Note: the detail keeps git's last two lines, which do not name the
	// file ("Please move or remove them before you merge. / Aborting").
	if !strings.Contains(ent.Detail, "would not fast-forward") {
		t.Errorf("detail %q should say why", ent.Detail)
	}
	e.waitEntry(tk.ID, "retried", func(m store.MergeEntry) bool { return m.Attempts > ent.Attempts+1 })
	if got := e.read(e.repo, "new.txt"); got != "the user's own new.txt\n" {
		t.Fatalf("the user's untracked file changed: %q", got)
	}
	if e.rev(e.repo, "HEAD") != e.rev(e.repo, "main") || e.task(tk.ID).Status != task.Merging {
		t.Fatal("state changed")
	}
	// The user moves it away: it lands, the other untracked file stays.
	if err := os.Rename(filepath.Join(e.repo, "new.txt"), filepath.Join(e.repo, "..", "new.txt.bak")); err != nil {
		t.Fatal(err)
	}
	e.waitState(tk.ID, store.MergeLanded)
	if e.read(e.repo, "new.txt") != "the task's new.txt\n" || e.read(e.repo, "other-untracked.txt") != "x\n" {
		t.Error("checkout after landing")
	}
}

// TestMainNotCheckedOut: the user works on another branch; main moves by
// update-ref and the user's branch and files stay.
func TestMainNotCheckedOut(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Merge, MaxSendBacks: 2})
	e.git(e.repo, "checkout", "-q", "-b", "mine")
	mine := e.commitOn(e.repo, "mine", map[string]string{"mine.txt": "mine\n"})
	e.write(e.repo, "README", "dirty on my branch\n")
	e.start()
	tk, w := e.newTask("task")
	e.write(w.Path, "task.txt", "task\n")
	e.complete(tk.ID, "task")
	ent := e.waitState(tk.ID, store.MergeLanded)
	e.waitTask(tk.ID, task.Completed)
	if e.rev(e.repo, "refs/heads/main") != ent.Commit {
		t.Error("main did not move to the landed commit")
	}
	if e.git(e.repo, "symbolic-ref", "--short", "HEAD") != "mine" || e.rev(e.repo, "HEAD") != mine {
		t.Error("the user's branch moved")
	}
	if e.read(e.repo, "README") != "dirty on my branch\n" || exists(filepath.Join(e.repo, "task.txt")) {
		t.Error("the user's files changed")
	}
	if e.git(e.repo, "show", "main:task.txt") != "task" {
		t.Error("task.txt not on main")
	}
}

// TestConcurrentCompletes: two tasks complete at once; both land, in the
// order of their entries.
func TestConcurrentCompletes(t *testing.T) {
	t.Parallel()
	for round := range 3 {
		e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
		e.start()
		a, wa := e.newTask("a")
		b, wb := e.newTask("b")
		e.write(wa.Path, "a.txt", "a\n")
		e.write(wb.Path, "b.txt", "b\n")
		var wg sync.WaitGroup
		for _, id := range []task.ID{a.ID, b.ID} {
			wg.Go(func() { e.complete(id, "work of "+string(id)) })
		}
		wg.Wait()
		ea := e.waitState(a.ID, store.MergeLanded)
		eb := e.waitState(b.ID, store.MergeLanded)
		first, second := ea, eb
		if eb.ID < ea.ID {
			first, second = eb, ea
		}
		// FIFO: the first entry's commit is an ancestor of the second's.
		if _, err := gitTry(e.repo, "merge-base", "--is-ancestor", first.Commit, second.Commit); err != nil || first.Commit == second.Commit {
			t.Errorf("round %d: entry %d (%s) should land before entry %d (%s)", round, first.ID, first.Commit, second.ID, second.Commit)
		}
		if e.rev(e.repo, "main") != second.Commit {
			t.Errorf("round %d: main is not the second landing", round)
		}
		logs := strings.Fields(e.git(e.repo, "log", "--format=%H", "--reverse", "-2", "main"))
		if !slices.Equal(logs, []string{first.Commit, second.Commit}) {
			t.Errorf("round %d: git log %v, want %v", round, logs, []string{first.Commit, second.Commit})
		}
		e.waitTask(a.ID, task.Completed)
		e.waitTask(b.ID, task.Completed)
		e.stop()
	}
}

func TestCancelAndRefusals(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	e.write(e.repo, "README", "dirty\n") // holds the entry waiting
	e.start()
	tk, w := e.newTask("task")
	e.write(w.Path, "task.txt", "task\n")

	// A running task is refused, and so is one without a worktree.
	if _, err := e.q.Enqueue(e.ctx, tk.ID); err == nil || !strings.Contains(err.Error(), "running") {
		t.Errorf("Enqueue of a running task: %v", err)
	}
	bare, err := task.New(newID(t), task.Spec{Description: "no worktree", Priority: 2, Repo: e.repo}, e.task(tk.ID).CreatedAt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.CreateTask(e.ctx, bare); err != nil {
		t.Fatal(err)
	}
	e.move(bare.ID, task.Running)
	e.move(bare.ID, task.Paused)
	if _, err := e.q.Enqueue(e.ctx, bare.ID); err == nil || !strings.Contains(err.Error(), "no worktree") {
		t.Errorf("Enqueue without a worktree: %v", err)
	}
	if e.q.Complete(e.ctx, bare.ID, "x", true) {
		t.Error("Complete without a worktree should report false")
	}
	if _, err := e.q.Cancel(e.ctx, bare.ID, ""); err == nil {
		t.Error("Cancel with nothing queued should fail")
	}

	e.complete(tk.ID, "task")
	e.waitState(tk.ID, store.MergeWaiting)
	// A second enqueue while one is open is refused.
	if _, err := e.q.Enqueue(e.ctx, tk.ID); err == nil {
		t.Error("a second open entry for the task")
	}
	ent, err := e.q.Cancel(e.ctx, tk.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if ent.State != store.MergeCancelled {
		t.Errorf("cancelled entry %s", ent.State)
	}
	got := e.waitTask(tk.ID, task.Paused)
	if !strings.Contains(got.CloseReason, worktree.Branch(tk.ID)) {
		t.Errorf("paused reason %q should name the branch", got.CloseReason)
	}
	if !slices.Contains(e.kinds(tk.ID), "merge.cancelled") {
		t.Error("no merge.cancelled event")
	}
	open, closed, err := e.q.Status(e.ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 0 || len(closed) != 1 || closed[0].State != store.MergeCancelled {
		t.Errorf("status open %+v closed %+v", open, closed)
	}
	// The work is still on the branch and the worktree.
	if e.read(w.Path, "task.txt") != "task\n" || e.git(e.repo, "show", worktree.Branch(tk.ID)+":task.txt") != "task" {
		t.Error("cancelled work lost")
	}
	if e.read(e.repo, "README") != "dirty\n" {
		t.Error("the user's edit changed")
	}
}

// TestRestartRunningEntry: an entry left running by a stopped daemon is
// taken up by the next queue.
func TestRestartRunningEntry(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	e.write(w.Path, "task.txt", "task\n")
	e.complete(tk.ID, "task") // queued; no queue runs
	ent := e.entries(tk.ID)[0]
	if _, _, err := e.st.UpdateMerge(e.ctx, ent.ID, func(m *store.MergeEntry) ([]evt, error) {
		m.State, m.Attempts = store.MergeRunning, 1
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	e.newQueue()
	if _, err := e.wt.Reconcile(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.start()
	got := e.waitState(tk.ID, store.MergeLanded)
	if got.ID != ent.ID || got.Attempts != 2 {
		t.Errorf("entry %d attempts %d, want %d taken up again", got.ID, got.Attempts, ent.ID)
	}
	e.waitTask(tk.ID, task.Completed)
}

// TestRecoverMergingWithoutEntry: a task moved to merging whose enqueue
// never happened is enqueued by Run.
func TestRecoverMergingWithoutEntry(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Squash, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	e.write(w.Path, "task.txt", "task\n")
	e.move(tk.ID, task.Merging)
	if n := len(e.entries(tk.ID)); n != 0 {
		t.Fatalf("%d entries", n)
	}
	e.start()
	e.waitState(tk.ID, store.MergeLanded)
	e.waitTask(tk.ID, task.Completed)
	if e.git(e.repo, "show", "main:task.txt") != "task" {
		t.Error("uncommitted work found at merge time did not land")
	}
}

// TestResolvedByMergeThenMainMoves: the agent resolves a conflict as it is
// told (git merge main), and before its completion lands another change (to
// other files) lands on main. Merging is clean (merge-tree says so), so the
// work should land without a second send-back.
func TestResolvedByMergeThenMainMoves(t *testing.T) {
	for _, strategy := range []string{merge.Rebase, merge.Merge, merge.Squash} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			e := newMergeEnv(t, merge.Config{Strategy: strategy, MaxSendBacks: 1})
			e.start()
			t2, w2, _ := conflictPair(t, e)
			sent := e.waitState(t2.ID, store.MergeSentBack)
			e.waitTask(t2.ID, task.Queued)
			e.move(t2.ID, task.Running)
			if _, err := gitTry(w2.Path, "merge", "main"); err == nil {
				t.Fatal("git merge main should conflict")
			}
			resolved := "line 1\nline 2 by first\nline 2 by second\nline 3\n"
			e.write(w2.Path, "shared.txt", resolved)
			e.git(w2.Path, "commit", "-q", "-am", "merge main, keep both")
			// Meanwhile a third task lands an unrelated file.
			t3, w3 := e.newTask("third")
			e.write(w3.Path, "third.txt", "third\n")
			e.complete(t3.ID, "third")
			e.waitState(t3.ID, store.MergeLanded)

			e.complete(t2.ID, "second edit, resolved")
			ent := e.waitEntry(t2.ID, "closed", func(m store.MergeEntry) bool { return m.ID != sent.ID && !m.State.Open() })
			if ent.State != store.MergeLanded {
				if strategy == merge.Rebase {
					t.Errorf("rebase strategy re-conflicts on a branch resolved with `git merge main` once main moved on: entry %s: %s", ent.State, ent.Detail)
				}
				t.Fatalf("entry %s: %s", ent.State, ent.Detail)
			}
			if got := e.read(e.repo, "shared.txt"); got != resolved {
				t.Errorf("shared.txt %q", got)
			}
			if !exists(filepath.Join(e.repo, "third.txt")) {
				t.Error("third.txt gone")
			}
		})
	}
}

// TestCancelDuringGate: cancelling an entry while its gate runs stops the
// gate; nothing lands and the task is paused with its work on its branch.
func TestCancelDuringGate(t *testing.T) {
	t.Parallel()
	hit := filepath.Join(t.TempDir(), "gate-started")
	e := newMergeEnv(t, merge.Config{Strategy: merge.Merge, MaxSendBacks: 2, Gate: "touch '" + hit + "'; sleep 30"})
	e.start()
	before := e.rev(e.repo, "main")
	tk, w := e.newTask("task")
	e.write(w.Path, "task.txt", "task\n")
	e.complete(tk.ID, "task")
	testkit.WaitFor(t, "the gate to start", func() bool { return exists(hit) })
	start := time.Now()
	ent, err := e.q.Cancel(e.ctx, tk.ID, "the user changed their mind")
	if err != nil {
		t.Fatal(err)
	}
	if ent.State != store.MergeCancelled || ent.Detail != "the user changed their mind" {
		t.Errorf("entry %s %q", ent.State, ent.Detail)
	}
	e.waitTask(tk.ID, task.Paused)
	e.stop() // joins the worker: the gate was stopped, not waited for
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancel took %s: the gate was not stopped", d)
	}
	if got := e.entries(tk.ID); len(got) != 1 || got[0].State != store.MergeCancelled {
		t.Errorf("entries %+v", got)
	}
	if e.rev(e.repo, "main") != before {
		t.Error("main moved")
	}
	if e.git(e.repo, "show", worktree.Branch(tk.ID)+":task.txt") != "task" {
		t.Error("the work is not on the branch")
	}
}

// TestReviewThenEnqueue: a task completed without auto-merge keeps its
// work on its branch; enqueueing it later lands it and it stays completed.
func TestReviewThenEnqueue(t *testing.T) {
	t.Parallel()
	var landed []string
	var mu sync.Mutex
	e := newMergeEnv(t, merge.Config{Strategy: merge.Squash, MaxSendBacks: 2, Cleanup: true}, func(o *merge.Options) {
		o.Landed = func(repo, target, commit string) {
			mu.Lock()
			defer mu.Unlock()
			landed = append(landed, repo+" "+target+" "+commit)
		}
	})
	e.start()
	before := e.rev(e.repo, "main")
	tk, w := e.newTask("task")
	e.write(w.Path, "task.txt", "task\n")
	if !e.q.Complete(e.ctx, tk.ID, "for review", false) {
		t.Fatal("Complete = false")
	}
	got := e.task(tk.ID)
	if got.Status != task.Completed || !strings.Contains(got.CloseReason, "left for review") {
		t.Fatalf("task %s %q", got.Status, got.CloseReason)
	}
	if len(e.entries(tk.ID)) != 0 || e.rev(e.repo, "main") != before {
		t.Fatal("a review task was queued")
	}
	if _, err := e.q.Enqueue(e.ctx, tk.ID); err != nil {
		t.Fatal(err)
	}
	ent := e.waitState(tk.ID, store.MergeLanded)
	if e.task(tk.ID).Status != task.Completed {
		t.Errorf("task %s", e.task(tk.ID).Status)
	}
	if e.read(e.repo, "task.txt") != "task\n" {
		t.Error("not in the checkout")
	}
	e.waitWorktree(tk.ID, store.WorktreeRemoved)
	mu.Lock()
	defer mu.Unlock()
	if want := e.repo + " main " + ent.Commit; len(landed) != 1 || landed[0] != want {
		t.Errorf("Landed calls %q, want [%q]", landed, want)
	}
}

// TestGateWithoutSecrets: the gate runs code the task wrote, so it gets the
// daemon's environment without its keys, tokens and own variables.
func TestGateWithoutSecrets(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-secret")
	t.Setenv("NEURAPHAGE_HOME", "/secret/home")
	t.Setenv("GATE_VISIBLE", "yes")
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 3,
		Gate: `test -z "$ANTHROPIC_API_KEY$NEURAPHAGE_HOME" || { echo leaked; exit 3; }; test "$GATE_VISIBLE" = yes || { echo lost; exit 4; }`})
	e.start()
	tk, w := e.newTask("gated")
	e.write(w.Path, "work.txt", "work\n")
	e.complete(tk.ID, "work")
	ent := e.waitEntry(tk.ID, "landed or sent back", func(m store.MergeEntry) bool {
		return m.State == store.MergeLanded || m.State == store.MergeSentBack
	})
	if ent.State != store.MergeLanded {
		t.Fatalf("entry %s: %s", ent.State, ent.Detail)
	}
}
