package worktree_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// A git killed with the daemon: the daemon's git runs in a process group of
// its own (and dies with the daemon); these tests hold a git operation open
// with a hook that records the group, then SIGKILL the whole group, as the
// daemon's death does to git and the kernel to what it left.

// wtKillHook installs the hook name in repo: when condition (shell) holds,
// it writes its process group to the hit file, runs then (shell) and waits
// until it is killed. It returns the hit file.
func wtKillHook(t *testing.T, repo, name, condition, then string) string {
	t.Helper()
	hit := filepath.Join(t.TempDir(), "hit")
	body := "#!/bin/sh\nif " + condition + "; then\n\t" + then + "\n" +
		"\tcut -d' ' -f5 /proc/$$/stat > '" + hit + ".tmp' && mv '" + hit + ".tmp' '" + hit + "'\n" +
		"\twhile :; do sleep 0.05; done\nfi\nexit 0\n"
	hooks := filepath.Join(repo, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hooks, name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return hit
}

// wtKillGroupAt waits for the hook's hit file and SIGKILLs the process
// group it names, then removes the hook.
func wtKillGroupAt(t *testing.T, repo, name, hit string) {
	t.Helper()
	testkit.WaitFor(t, "the hook holding git", func() bool { return wtExists(hit) })
	b, err := os.ReadFile(hit)
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pgid <= 1 {
		t.Fatalf("hook wrote process group %q", b)
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(repo, ".git", "hooks", name)); err != nil {
		t.Fatal(err)
	}
}

// TestKillDuringWorktreeAdd: the daemon dies while `git worktree add` makes
// a task's worktree (a post-index-change hook holds its checkout once the
// files and the index are written; git's "initializing" lock is still on; a
// file that is not part of the checkout appears meanwhile). The next start
// must finish the job: the worktree made again, the stray file kept, the
// creation recorded. Before the fix the restarted daemon refused the
// worktree ("is locked by git … `git worktree unlock`") and the task paused.
func TestKillDuringWorktreeAdd(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n", "src/a.go": "package a\n"})
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	path := wtDefaultPath(repo, tk.ID)
	hit := wtKillHook(t, repo, "post-index-change",
		`[ "$(pwd -P)" = '`+path+`' ]`,
		`echo "written meanwhile" > '`+path+`/notes.txt'`)

	done := make(chan error, 1)
	go func() {
		_, err := e.m.Provision(context.Background(), tk)
		done <- err
	}()
	wtKillGroupAt(t, repo, "post-index-change", hit)
	if err := <-done; err == nil {
		t.Fatal("Provision succeeded though its git was killed")
	}
	if list := wtWorktrees(t, repo); !slices.ContainsFunc(list, func(w gitWorktree) bool { return w.Path == path && w.Locked }) {
		t.Fatalf("the kill left no locked worktree; the test does not reproduce the fault: %+v", list)
	}

	// The restarted daemon: the killed git's locks first (it held the
	// branch's lock to point the new HEAD at it), then the worktrees.
	m := e.manager(worktree.Config{})
	found, err := m.ClearStaleLocks(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("locks found: %+v", found)
	rep, err := m.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Remade, tk.ID) || len(rep.Problems) > 0 {
		t.Fatalf("Reconcile = %+v; want %s remade and no problem", rep, tk.ID)
	}
	w, err := m.Provision(context.Background(), e.getTask(tk.ID))
	if err != nil {
		t.Fatalf("Provision after the restart: %v", err)
	}
	if w.Path != path || w.State != store.WorktreeActive {
		t.Errorf("worktree = %+v", w)
	}
	if slices.ContainsFunc(wtWorktrees(t, repo), func(w gitWorktree) bool { return w.Locked }) {
		t.Error("a worktree is still locked")
	}
	if got := wtRead(t, path, "src/a.go"); got != "package a\n" {
		t.Errorf("src/a.go = %q", got)
	}
	if got := wtRead(t, path, "notes.txt"); got != "written meanwhile\n" {
		t.Errorf("notes.txt = %q; the file written in the half-made worktree was not kept", got)
	}
	if st := wtGit(t, path, "status", "--porcelain"); st != "?? notes.txt" {
		t.Errorf("status = %q; want only the kept file untracked", st)
	}
	if tk := e.getTask(tk.ID); tk.Worktree != path || tk.Branch != worktree.Branch(tk.ID) {
		t.Errorf("task records worktree %q, branch %q", tk.Worktree, tk.Branch)
	}
	remade := e.events(tk.ID, string(event.KindWorktreeRemade))
	if len(remade) != 1 || !slices.Equal(remade[0].Payload.(event.WorktreeRemade).Kept, []string{"notes.txt"}) {
		t.Errorf("worktree.remade events = %+v", remade)
	}
	if n := len(e.events(tk.ID, string(event.KindWorktreeCreated))); n != 1 {
		t.Errorf("%d worktree.created events; want 1", n)
	}
}

// TestLockedWorktreeNotRemade: a worktree locked for another reason (by
// hand) is never removed; it is refused as before.
func TestLockedWorktreeNotRemade(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	wtWrite(t, w.Path, "work.txt", "mine\n")
	wtGit(t, repo, "worktree", "lock", "--reason", "on a usb disk", w.Path)
	if _, err := e.manager(worktree.Config{}).Provision(context.Background(), tk); err == nil || !strings.Contains(err.Error(), "locked by git") {
		t.Fatalf("Provision of a worktree locked by hand: %v; want the lock refused", err)
	}
	if got := wtRead(t, w.Path, "work.txt"); got != "mine\n" {
		t.Errorf("work.txt = %q", got)
	}
}

// TestKillDuringRefDeletion: the daemon dies while git deletes a task's
// branch (a reference-transaction hook holds the transaction prepared:
// the branch's lock and packed-refs.lock are taken). Before the fix both
// stayed: every later ref deletion waited a second and failed, the user's
// own included. At the next start both are removed and reported.
func TestKillDuringRefDeletion(t *testing.T) {
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	wtGit(t, repo, "branch", "feature")
	wtGit(t, repo, "worktree", "remove", w.Path)
	wtGit(t, repo, "pack-refs", "--all")
	hit := wtKillHook(t, repo, "reference-transaction", `[ "$1" = prepared ]`, ":")
	done := make(chan error, 1)
	go func() {
		_, err := runGit(repo, "branch", "-D", w.Branch)
		done <- err
	}()
	wtKillGroupAt(t, repo, "reference-transaction", hit)
	<-done
	common := filepath.Join(repo, ".git")
	branchLock := filepath.Join(common, "refs", "heads", filepath.FromSlash(w.Branch)+".lock")
	packedLock := filepath.Join(common, "packed-refs.lock")
	if !wtExists(packedLock) {
		t.Fatal("the kill left no packed-refs.lock; the test does not reproduce the fault")
	}
	want := []string{packedLock}
	if wtExists(branchLock) { // git 2.39 takes it later than the hook runs
		want = append(want, branchLock)
	}
	if p := filepath.Join(common, "packed-refs.new"); wtExists(p) { // the packed-refs being written
		want = append(want, p)
	}
	if out, err := exec.Command("git", "-C", repo, "-c", "core.packedRefsTimeout=0", "branch", "-D", "feature").CombinedOutput(); err == nil {
		t.Logf("%s", out)
		t.Fatal("a branch deletion succeeded with packed-refs.lock left; the test does not reproduce the fault")
	}

	found, err := e.manager(worktree.Config{}).ClearStaleLocks(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range want {
		if wtExists(l) {
			t.Errorf("%s still there", l)
		}
		if !slices.ContainsFunc(found, func(f event.GitStaleLock) bool { return f.Lock == l && f.Removed }) {
			t.Errorf("%s not reported removed: %+v", l, found)
		}
	}
	if n := len(e.events("", string(event.KindGitStaleLock))); n != len(want) {
		t.Errorf("%d git.stale_lock events; want %d", n, len(want))
	}
	wtGit(t, repo, "branch", "-D", "feature")
	wtGit(t, repo, "branch", "-D", w.Branch)
}

// TestLiveLockKept: a lock in a shared place that a live git holds (the
// user's, running at that moment in the repository) is never removed, only
// reported; a lock in the daemon's own places is removed.
func TestLiveLockKept(t *testing.T) {
	defer worktree.SetUsersGrace(100 * time.Millisecond)()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	wtGit(t, repo, "branch", "feature")
	wtGit(t, repo, "pack-refs", "--all")
	release := filepath.Join(t.TempDir(), "release")
	hit := filepath.Join(t.TempDir(), "hit")
	hook := "#!/bin/sh\nif [ \"$1\" = prepared ]; then touch '" + hit + "'; while [ ! -e '" + release + "' ]; do sleep 0.05; done; fi\nexit 0\n"
	if err := os.WriteFile(filepath.Join(repo, ".git", "hooks", "reference-transaction"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	user := exec.Command("git", "branch", "-D", "feature") // the user's git, not the daemon's
	user.Dir = repo
	if err := user.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(release, nil, 0o644); user.Wait() })
	testkit.WaitFor(t, "the user's git holding its locks", func() bool { return wtExists(hit) })
	// A lock of the task's branch left by the daemon's killed git.
	ours := filepath.Join(repo, ".git", "refs", "heads", filepath.FromSlash(w.Branch)+".lock")
	if err := os.MkdirAll(filepath.Dir(ours), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ours, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	found, err := e.manager(worktree.Config{}).ClearStaleLocks(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	packed := filepath.Join(repo, ".git", "packed-refs.lock")
	if !wtExists(packed) {
		t.Fatal("packed-refs.lock held by a live git was removed")
	}
	if !slices.ContainsFunc(found, func(f event.GitStaleLock) bool {
		return f.Lock == packed && !f.Removed && strings.Contains(f.Reason, "live process")
	}) {
		t.Errorf("packed-refs.lock not reported as kept: %+v", found)
	}
	if wtExists(ours) {
		t.Error("the lock of the task's branch was not removed")
	}
	os.WriteFile(release, nil, 0o644)
	if err := user.Wait(); err != nil {
		t.Fatalf("the user's git failed: %v", err)
	}
	if wtRev(t, repo, "refs/heads/feature") != "" {
		t.Error("the user's branch deletion did not happen")
	}
}

// TestFinishedPickCleared: a landed worktree left with CHERRY_PICK_HEAD by
// a finished rebase (git could not delete it) loses that ref, and nothing
// else; a worktree whose work did not land keeps it.
func TestFinishedPickCleared(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	tip := wtCommit(t, w.Path, "work", map[string]string{"a.txt": "a\n"})
	wtGit(t, w.Path, "update-ref", "CHERRY_PICK_HEAD", tip)
	wtWrite(t, w.Path, "untracked.txt", "keep\n")
	m := e.manager(worktree.Config{})
	if ok, err := m.ClearFinishedPick(context.Background(), tk.ID); err != nil || ok {
		t.Fatalf("ClearFinishedPick of a worktree not landed = %v, %v; want false", ok, err)
	}
	if err := m.MarkLanded(context.Background(), tk.ID, tip, tip); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.ClearFinishedPick(context.Background(), tk.ID); err != nil || !ok {
		t.Fatalf("ClearFinishedPick = %v, %v; want true", ok, err)
	}
	if wtRev(t, w.Path, "CHERRY_PICK_HEAD") != "" {
		t.Error("CHERRY_PICK_HEAD still there")
	}
	if wtRead(t, w.Path, "untracked.txt") != "keep\n" || wtRev(t, w.Path, "HEAD") != tip {
		t.Error("the worktree changed")
	}
}

type gitWorktree = git.WorktreeInfo

// runGit runs git as the daemon does.
func runGit(dir string, args ...string) (string, error) {
	return git.Run(context.Background(), dir, args...)
}

// TestKillAfterWorktreeAdd: the daemon dies after git made the worktree
// (unlocked, checked out) and before the creation was recorded: git's
// post-checkout hook runs then. The next provisioning finishes the
// creation: the task records its worktree, worktree.created once.
func TestKillAfterWorktreeAdd(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	path := wtDefaultPath(repo, tk.ID)
	hit := wtKillHook(t, repo, "post-checkout", `[ "$(pwd -P)" = '`+path+`' ]`, ":")
	done := make(chan error, 1)
	go func() {
		_, err := e.m.Provision(context.Background(), tk)
		done <- err
	}()
	wtKillGroupAt(t, repo, "post-checkout", hit)
	if err := <-done; err == nil {
		t.Fatal("Provision succeeded though its git was killed")
	}
	if tk := e.getTask(tk.ID); tk.Worktree != "" {
		t.Fatalf("task records worktree %q before the restart; the test does not reproduce the fault", tk.Worktree)
	}
	m := e.manager(worktree.Config{})
	if _, err := m.ClearStaleLocks(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	w, err := m.Provision(context.Background(), e.getTask(tk.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.getTask(tk.ID); got.Worktree != path || w.Path != path {
		t.Errorf("task records worktree %q; provisioned %q; want %q", got.Worktree, w.Path, path)
	}
	if n := len(e.events(tk.ID, string(event.KindWorktreeCreated))); n != 1 {
		t.Errorf("%d worktree.created events; want 1", n)
	}
	if _, err := m.Provision(context.Background(), e.getTask(tk.ID)); err != nil {
		t.Fatal(err)
	}
	if n := len(e.events(tk.ID, string(event.KindWorktreeCreated))); n != 1 {
		t.Errorf("%d worktree.created events after another provisioning; want 1", n)
	}
}

// TestInterruptedRemovalFinished: a `git worktree remove` killed half way
// (with the daemon; found by the chaos test, seed 101) leaves a landed
// worktree with part of its tracked files deleted — the state is made here
// by deleting them as git does, the .git file among them. Before the fix
// every later cleanup refused it ("holds N changed file(s)") for good.
// The missing files are written back from the index and the removal goes
// through; a worktree with any other change is left alone.
func TestInterruptedRemovalFinished(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{"README.md": "hi\n", "a/1.txt": "1\n", "a/2.txt": "2\n", "b.txt": "b\n"})
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	tip := wtCommit(t, w.Path, "work", map[string]string{"c.txt": "c\n"})
	m := e.manager(worktree.Config{})
	if err := m.MarkLanded(context.Background(), tk.ID, tip, tip); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".git", "a/1.txt", "a/2.txt", "c.txt"} {
		if err := os.Remove(filepath.Join(w.Path, filepath.FromSlash(f))); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(w.Path, "a"))
	if _, err := m.Remove(context.Background(), tk.ID, "landed", true); err == nil {
		t.Fatal("a half-removed worktree was removed without the fix; the test does not reproduce the fault")
	}
	ok, err := m.RestoreInterruptedRemoval(context.Background(), tk.ID)
	if err != nil || !ok {
		t.Fatalf("RestoreInterruptedRemoval = %v, %v; want true", ok, err)
	}
	if got := wtRead(t, w.Path, "a/2.txt"); got != "2\n" {
		t.Errorf("a/2.txt = %q", got)
	}
	if _, err := m.Remove(context.Background(), tk.ID, "landed", true); err != nil {
		t.Fatalf("Remove after the restore: %v", err)
	}
	if wtExists(w.Path) || wtHasWorktree(t, repo, w.Path) {
		t.Error("the worktree is still there")
	}

	// Another change: left alone.
	tk2 := e.task(repo)
	w2 := e.provision(tk2)
	tip2 := wtCommit(t, w2.Path, "work", map[string]string{"d.txt": "d\n"})
	if err := m.MarkLanded(context.Background(), tk2.ID, tip2, tip2); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(w2.Path, "b.txt"))
	wtWrite(t, w2.Path, "d.txt", "edited\n")
	if ok, err := m.RestoreInterruptedRemoval(context.Background(), tk2.ID); err != nil || ok {
		t.Fatalf("RestoreInterruptedRemoval with an edited file = %v, %v; want false", ok, err)
	}
	if wtExists(filepath.Join(w2.Path, "b.txt")) || wtRead(t, w2.Path, "d.txt") != "edited\n" {
		t.Error("a worktree with other changes was touched")
	}
}
