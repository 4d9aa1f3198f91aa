package merge_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// The daemon killed with SIGKILL at the exact moment a git operation of
// the merge queue is under way: a child process (this test binary, started
// with childDaemonEnv) runs the queue over the test's store and repository,
// a git hook holds the operation open, the test kills the child, and a new
// queue over the same store and repository must finish the work.

const (
	childDaemonEnv  = "NEURAPHAGE_MERGE_TEST_DAEMON"  // the store's path
	childCleanupEnv = "NEURAPHAGE_MERGE_TEST_CLEANUP" // "1": merge.cleanup
	childStrategy   = "NEURAPHAGE_MERGE_TEST_STRATEGY"
)

// runChildDaemon runs a merge queue over the store at db until killed.
func runChildDaemon(db string) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		os.Stderr.WriteString("child daemon: " + err.Error() + "\n")
		os.Exit(3)
	}
	wt := worktree.New(worktree.Options{Store: st})
	q := merge.New(merge.Options{Store: st, Worktrees: wt, Config: merge.Config{
		Strategy: os.Getenv(childStrategy), MaxSendBacks: 2, Retry: 50 * time.Millisecond, Cleanup: os.Getenv(childCleanupEnv) == "1",
	}})
	q.Run(ctx)
	os.Exit(0)
}

// crashEnv is a merge environment whose store lives at a known path, so a
// child daemon can open it too.
func crashEnv(t *testing.T, cfg merge.Config) (*env, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "db")
	st, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newMergeEnv(t, cfg, withStore(func(store.Store) store.Store { return st }))
	return e, db
}

// startChild starts the child daemon; the returned func SIGKILLs it.
func (e *env) startChild(db string, cleanup bool) (kill func()) {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childDaemonEnv+"="+db, childStrategy+"="+e.opts.Config.Strategy)
	if cleanup {
		cmd.Env = append(cmd.Env, childCleanupEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	killed := false
	kill = func() {
		if killed {
			return
		}
		killed = true
		cmd.Process.Kill() // SIGKILL
		cmd.Wait()
	}
	e.t.Cleanup(kill)
	return kill
}

// holdHook installs the git hook name in the repository: while the arm
// file exists and the hook's condition (shell) holds, it creates the hit
// file and waits for the arm file to go. It returns release, which removes
// the arm file.
func (e *env) holdHook(name, condition string) (hit string, release func()) {
	e.t.Helper()
	dir := e.t.TempDir()
	arm, hit := filepath.Join(dir, "armed"), filepath.Join(dir, "hit")
	body := "#!/bin/sh\nif [ -e '" + arm + "' ] && " + condition + "; then\n\ttouch '" + hit + "'\n" +
		"\twhile [ -e '" + arm + "' ]; do sleep 0.05; done\nfi\nexit 0\n"
	hooks := filepath.Join(e.repo, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hooks, name), []byte(body), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(arm, nil, 0o644); err != nil {
		e.t.Fatal(err)
	}
	release = func() { os.Remove(arm) }
	e.t.Cleanup(release)
	return hit, release
}

// reopen opens the store at db again, as a restarted daemon does (the
// store keeps its next event ID in memory: the one open while the child
// wrote is stale), and makes a new manager and queue on it.
func (e *env) reopen(db string) {
	e.t.Helper()
	st, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	e.st, e.opts.Store = st, st
	e.newQueue()
}

func (e *env) waitFile(p, what string) {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for !exists(p) {
		if time.Now().After(deadline) {
			e.t.Fatalf("%s never happened; logs:\n%s", what, e.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKillDuringRebase: the daemon is SIGKILLed while the queue's `git
// rebase` runs in the task's worktree (a post-checkout hook holds it after
// its first checkout). The next daemon must roll the rebase back and land
// the entry from the start, losing nothing. Before the fix it found "a
// rebase in progress", parked the entry and paused the task.
func TestKillDuringRebase(t *testing.T) {
	t.Parallel()
	e, db := crashEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	tip := e.commitOn(w.Path, "agent work", map[string]string{"task.txt": "task\n"})
	e.write(w.Path, "keep.log", "ignored, the task's\n") // ignored: must survive
	e.commitOn(e.repo, "other work", map[string]string{"other.txt": "other\n"})
	hit, release := e.holdHook("post-checkout", `[ -d "$(git rev-parse --git-path rebase-merge)" ]`)
	e.complete(tk.ID, "task work")

	kill := e.startChild(db, false)
	e.waitFile(hit, "the rebase's checkout")
	if got := e.entries(tk.ID); len(got) != 1 || got[0].Step != "rebase" || got[0].StepTip != tip {
		t.Fatalf("entry while rebasing = %+v, want step rebase from %s", got, tip)
	}
	kill()
	release()
	if st := e.git(w.Path, "status"); !strings.Contains(st, "rebase in progress") {
		t.Fatalf("the kill left no rebase in progress; the test does not reproduce the fault:\n%s", st)
	}

	e.reopen(db)
	e.start()
	m := e.waitState(tk.ID, store.MergeLanded)
	e.waitTask(tk.ID, task.Completed)
	for _, f := range []string{"task.txt", "other.txt"} {
		if out := e.git(e.repo, "ls-tree", "--name-only", m.Commit, f); out != f {
			t.Errorf("landed commit %s lacks %s", m.Commit, f)
		}
	}
	if e.read(w.Path, "keep.log") != "ignored, the task's\n" {
		t.Error("the task's ignored file changed")
	}
	if st := e.git(w.Path, "status", "--porcelain"); st != "" {
		t.Errorf("worktree after landing: %s", st)
	}
	if m.Step != "" {
		t.Errorf("landed entry still records step %q", m.Step)
	}
	if k := e.kinds(tk.ID); !slices.Contains(k, "merge.rolled_back") {
		t.Errorf("no merge.rolled_back event: %v", k)
	}
}

// TestKillDuringUpdateMerge: as TestKillDuringRebase with the merge
// strategy: the daemon dies while `git merge` of the target into the task's
// branch is about to commit (a prepare-commit-msg hook holds it with
// MERGE_HEAD written). The next daemon aborts that merge and lands.
func TestKillDuringUpdateMerge(t *testing.T) {
	t.Parallel()
	e, db := crashEnv(t, merge.Config{Strategy: merge.Merge, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	tip := e.commitOn(w.Path, "agent work", map[string]string{"task.txt": "task\n"})
	e.commitOn(e.repo, "other work", map[string]string{"other.txt": "other\n"})
	hit, release := e.holdHook("prepare-commit-msg", `[ -e "$(git rev-parse --git-path MERGE_HEAD)" ]`)
	e.complete(tk.ID, "task work")

	kill := e.startChild(db, false)
	e.waitFile(hit, "the merge's commit")
	kill()
	release()
	if st := e.git(w.Path, "status"); !strings.Contains(st, "unmerged paths") && !strings.Contains(st, "All conflicts fixed but you are still merging") {
		t.Fatalf("the kill left no merge in progress; the test does not reproduce the fault:\n%s", st)
	}

	e.reopen(db)
	e.start()
	m := e.waitState(tk.ID, store.MergeLanded)
	e.waitTask(tk.ID, task.Completed)
	if out := e.git(e.repo, "ls-tree", "--name-only", m.Commit, "task.txt"); out != "task.txt" {
		t.Errorf("landed commit %s lacks task.txt", m.Commit)
	}
	if !slices.Contains(e.kinds(tk.ID), "merge.rolled_back") {
		t.Errorf("no merge.rolled_back event: %v", e.kinds(tk.ID))
	}
	if base := e.git(e.repo, "merge-base", "--is-ancestor", tip, m.Commit); base != "" {
		t.Errorf("the task's commit is not in what landed: %s", base)
	}
}

// TestUserRebaseNotRolledBack: a rebase in progress that the queue did not
// record (the user's or the agent's) is not aborted: the entry parks and the
// task pauses with the reason, and the rebase is still there.
func TestUserRebaseNotRolledBack(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	e.commitOn(w.Path, "agent work", map[string]string{"shared.txt": "task 1\nline 2\nline 3\n"})
	e.commitOn(e.repo, "other work", map[string]string{"shared.txt": "main 1\nline 2\nline 3\n"})
	e.complete(tk.ID, "task work")
	// The user starts a rebase that stops on the conflict.
	if _, err := gitTry(w.Path, "rebase", "main"); err == nil {
		t.Fatal("the user's rebase did not stop on a conflict")
	}
	// A step recorded from another tip is not this rebase either.
	m := e.entries(tk.ID)[0]
	if _, _, err := e.st.UpdateMerge(e.ctx, m.ID, func(m *store.MergeEntry) ([]evt, error) {
		m.Step, m.StepTip = "rebase", strings.Repeat("0", 40)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	e.start()
	e.waitState(tk.ID, store.MergeParked)
	if tk := e.waitTask(tk.ID, task.Paused); !strings.Contains(tk.CloseReason+e.entries(tk.ID)[0].Detail, "rebase in progress") {
		t.Errorf("pause reason %q does not say a rebase is in progress", tk.CloseReason)
	}
	if st := e.git(w.Path, "status"); !strings.Contains(st, "rebase in progress") {
		t.Errorf("the user's rebase was aborted:\n%s", st)
	}
}

// TestKillBeforeLandingCleanup: the daemon is SIGKILLed after the landing,
// while the worktree's cleanup archives the branch tip (a
// reference-transaction hook holds the archive ref's update). The next
// daemon must finish the cleanup: ignored files archived, worktree removed,
// worktree.removed recorded once. Before the fix the worktree stayed active.
func TestKillBeforeLandingCleanup(t *testing.T) {
	t.Parallel()
	e, db := crashEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2, Cleanup: true})
	tk, w := e.newTask("task")
	e.commitOn(w.Path, "agent work", map[string]string{"task.txt": "task\n"})
	e.write(w.Path, "notes.log", "the task's notes\n") // ignored
	hit, release := e.holdHook("reference-transaction", `[ "$1" = prepared ] && grep -q refs/neuraphage/archive/`)
	e.complete(tk.ID, "task work")

	kill := e.startChild(db, true)
	e.waitFile(hit, "the archive ref's update")
	kill()
	release()
	if m := e.entries(tk.ID); len(m) != 1 || m[0].State != store.MergeLanded {
		t.Fatalf("entries at the kill: %+v, want one landed", m)
	}
	if wt, err := e.st.GetWorktree(e.ctx, tk.ID); err != nil || wt.State != store.WorktreeActive {
		t.Fatalf("worktree at the kill: %+v, %v; want active (the fault's state)", wt, err)
	}

	e.reopen(db)
	e.start()
	e.waitWorktree(tk.ID, store.WorktreeRemoved)
	if exists(w.Path) {
		t.Errorf("%s still exists", w.Path)
	}
	arch, err := worktree.IgnoredArchive(e.ctx, e.repo, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(arch, "notes.log")); err != nil || string(b) != "the task's notes\n" {
		t.Errorf("archived notes.log = %q, %v", b, err)
	}
	if got := e.rev(e.repo, worktree.ArchiveRef(tk.ID)); got == "" {
		t.Error("no archive ref")
	}
	removed := 0
	for _, k := range e.kinds(tk.ID) {
		if k == "worktree.removed" {
			removed++
		}
	}
	if removed != 1 {
		t.Errorf("%d worktree.removed events, want 1", removed)
	}
	// Idempotent: another start does nothing more.
	e.restart()
	e.stop()
	removed = 0
	for _, k := range e.kinds(tk.ID) {
		if k == "worktree.removed" {
			removed++
		}
	}
	if removed != 1 {
		t.Errorf("cleanup redone after a further start: %d worktree.removed events", removed)
	}
}

// TestKillBeforeCleanupOfEmptyLanding: a task whose branch has nothing to
// land ("already on main": it changed nothing) lands all the same, and the
// daemon is SIGKILLed while that landing's cleanup archives the branch tip.
// The next daemon must finish the cleanup as for any landing. Before the
// fix such a landing was never recorded on the worktree (no landed commit),
// so the start-time cleanup did not see it and the worktree stayed active.
func TestKillBeforeCleanupOfEmptyLanding(t *testing.T) {
	t.Parallel()
	e, db := crashEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2, Cleanup: true})
	tk, w := e.newTask("task")
	hit, release := e.holdHook("reference-transaction", `[ "$1" = prepared ] && grep -q refs/neuraphage/archive/`)
	e.complete(tk.ID, "nothing to change")

	kill := e.startChild(db, true)
	e.waitFile(hit, "the archive ref's update")
	kill()
	release()
	if m := e.entries(tk.ID); len(m) != 1 || m[0].State != store.MergeLanded {
		t.Fatalf("entries at the kill: %+v, want one landed", m)
	}

	e.reopen(db)
	e.start()
	e.waitWorktree(tk.ID, store.WorktreeRemoved)
	if exists(w.Path) {
		t.Errorf("%s still exists", w.Path)
	}
	if wt, err := e.st.GetWorktree(e.ctx, tk.ID); err != nil || wt.Landed == "" {
		t.Errorf("worktree record %+v, %v: want the commit it landed as", wt, err)
	}
}

// TestKillDuringRebasePick: the daemon is SIGKILLed while the queue's
// rebase records the pick it is making (a reference-transaction hook holds
// the update of CHERRY_PICK_HEAD, whose lock in the worktree's own git
// directory is taken). The killed git leaves CHERRY_PICK_HEAD.lock there.
// The next start removes that lock (the task's worktree is the daemon's
// while no task runs), rolls the rebase back and lands. Before the fix
// every later rebase in the worktree failed on the lock, the runner ran it
// again as if the lock were busy, git found "already a rebase-merge
// directory" and the entry was parked.
func TestKillDuringRebasePick(t *testing.T) {
	t.Parallel()
	e, db := crashEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	e.commitOn(w.Path, "agent work", map[string]string{"task.txt": "task\n"})
	e.commitOn(e.repo, "other work", map[string]string{"other.txt": "other\n"})
	hit, release := e.holdHook("reference-transaction", `[ "$1" = prepared ] && grep -q ' CHERRY_PICK_HEAD$'`)
	e.complete(tk.ID, "task work")

	kill := e.startChild(db, false)
	e.waitFile(hit, "the rebase's pick")
	kill()
	release()
	admin := strings.TrimSpace(e.git(w.Path, "rev-parse", "--path-format=absolute", "--git-dir"))
	lock := filepath.Join(admin, "CHERRY_PICK_HEAD.lock")
	if !exists(lock) {
		t.Fatalf("the kill left no %s; the test does not reproduce the fault", lock)
	}
	if err := os.Remove(filepath.Join(e.repo, ".git", "hooks", "reference-transaction")); err != nil {
		t.Fatal(err)
	}

	e.reopen(db)
	found, err := e.wt.ClearStaleLocks(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(found, func(f event.GitStaleLock) bool { return f.Lock == lock && f.Removed }) {
		t.Errorf("%s not reported removed: %+v", lock, found)
	}
	e.start()
	m := e.waitState(tk.ID, store.MergeLanded)
	e.waitTask(tk.ID, task.Completed)
	for _, f := range []string{"task.txt", "other.txt"} {
		if out := e.git(e.repo, "ls-tree", "--name-only", m.Commit, f); out != f {
			t.Errorf("landed commit %s lacks %s", m.Commit, f)
		}
	}
	if st := e.git(w.Path, "status", "--porcelain"); st != "" {
		t.Errorf("worktree after landing: %s", st)
	}
	if k := e.kinds(tk.ID); !slices.Contains(k, "merge.rolled_back") {
		t.Errorf("no merge.rolled_back event: %v", k)
	}
}

// TestRebaseStateWithoutOrigHead: the state a kill leaves while git writes
// a rebase's state, or while `rebase --abort` removes it, is part of the
// rebase-merge directory without orig-head, HEAD on the branch at the
// recorded tip (the chaos test, seed 101011450, left head-name,
// author-script and drop_redundant_commits). --abort cannot read it; the
// next start drops it (rebase --quit) and lands. Before the fix the entry
// was parked "has a rebase in progress" for good.
func TestRebaseStateWithoutOrigHead(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t, merge.Config{Strategy: merge.Rebase, MaxSendBacks: 2})
	tk, w := e.newTask("task")
	tip := e.commitOn(w.Path, "agent work", map[string]string{"task.txt": "task\n"})
	e.commitOn(e.repo, "other work", map[string]string{"other.txt": "other\n"})
	e.complete(tk.ID, "task work")
	m := e.entries(tk.ID)[0]
	if _, _, err := e.st.UpdateMerge(e.ctx, m.ID, func(m *store.MergeEntry) ([]evt, error) {
		m.Step, m.StepTip = "rebase", tip
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	state := e.git(w.Path, "rev-parse", "--path-format=absolute", "--git-path", "rebase-merge")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, c := range map[string]string{"head-name": "refs/heads/" + w.Branch + "\n", "author-script": "GIT_AUTHOR_NAME='Test'\n", "drop_redundant_commits": ""} {
		if err := os.WriteFile(filepath.Join(state, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if st := e.git(w.Path, "status"); !strings.Contains(st, "rebase") {
		t.Fatalf("git does not see a rebase in progress; the test does not reproduce the state:\n%s", st)
	}
	e.start()
	landed := e.waitState(tk.ID, store.MergeLanded)
	e.waitTask(tk.ID, task.Completed)
	if out := e.git(e.repo, "ls-tree", "--name-only", landed.Commit, "task.txt"); out != "task.txt" {
		t.Errorf("landed commit lacks task.txt")
	}
	if k := e.kinds(tk.ID); !slices.Contains(k, "merge.rolled_back") {
		t.Errorf("no merge.rolled_back event: %v", k)
	}
	if exists(state) {
		t.Errorf("the rebase state %s is still there", state)
	}
}
