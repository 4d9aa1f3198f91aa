package worktree_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// wtAlternates returns the shared store's alternates of repo.
func wtAlternates(t *testing.T, repo string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, ".git", "objects", "info", "alternates"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// wtTaskCommit commits in the task's worktree as its commands do: with
// GIT_OBJECT_DIRECTORY naming its object directory, listed in the shared
// alternates while it runs, its objects moved into the shared store at its
// end.
func wtTaskCommit(t *testing.T, path, own, msg string) string {
	t.Helper()
	tip := wtTaskCommitKilled(t, path, own, msg)
	if _, err := sandbox.EndObjects(own); err != nil {
		t.Fatal(err)
	}
	return tip
}

// wtTaskCommitKilled is wtTaskCommit for a command whose end the daemon
// never saw (killed with it): its objects stay in the task's directory,
// listed.
func wtTaskCommitKilled(t *testing.T, path, own, msg string) string {
	t.Helper()
	if err := sandbox.BeginObjects(own); err != nil {
		t.Fatal(err)
	}
	env := []string{sandbox.EnvObjects + "=" + own, sandbox.EnvAlternates + "=" + filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(own))), "objects")}
	wtWrite(t, path, msg+".txt", msg+"\n")
	wtGitEnv(t, path, env, "add", "-A")
	wtGitEnv(t, path, env, "commit", "-q", "-m", msg)
	return wtGitEnv(t, path, env, "rev-parse", "HEAD")
}

// wtLoose counts the loose objects in the object directory dir.
func wtLoose(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "??", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// wtClean runs git fsck in repo and fails on any error.
func wtClean(t *testing.T, repo, when string) {
	t.Helper()
	out, err := git.Run(context.Background(), repo, "fsck", "--full", "--strict", "--no-dangling")
	if err != nil || strings.Contains(out, "missing") {
		t.Fatalf("%s: git fsck: %v\n%s", when, err, out)
	}
}

// TestTaskObjectsLifecycle: provisioning gives the task its object
// directory, unlisted in the shared alternates until a command runs; after
// each command its objects are in the shared store, so the daemon's commit
// on its branch and the user's log --all, gc and fsck find them; removal
// ends the directory, the archive ref resolving.
func TestTaskObjectsLifecycle(t *testing.T) {
	t.Parallel()
	e := wtNewEnv(t, worktree.Config{})
	repo := wtRepo(t, "main", nil)
	tk := e.task(repo)
	w := e.provision(tk)
	common := filepath.Join(repo, ".git")
	own := sandbox.ObjectDir(common, string(tk.ID))
	if fi, err := os.Stat(own); err != nil || !fi.IsDir() {
		t.Fatalf("no object directory after provisioning: %v", err)
	}
	if strings.Contains(wtAlternates(t, repo), string(tk.ID)) {
		t.Fatalf("the shared alternates name an idle task: %q", wtAlternates(t, repo))
	}
	tip := wtTaskCommit(t, w.Path, own, "task work")
	if _, err := os.Stat(filepath.Join(common, "objects", tip[:2], tip[2:])); err != nil || wtLoose(t, own) != 0 {
		t.Fatalf("after the command, the task's commit is not in the shared store alone: %v", err)
	}
	if strings.Contains(wtAlternates(t, repo), string(tk.ID)) {
		t.Fatalf("the shared alternates name the task after its command: %q", wtAlternates(t, repo))
	}
	// The daemon's own commit of what the task left, on its branch.
	wtWrite(t, w.Path, "left.txt", "left over\n")
	if _, ok, err := e.m.Commit(context.Background(), tk.ID, "leftovers"); err != nil || !ok {
		t.Fatalf("Commit: %v %v", ok, err)
	}
	if got := wtGit(t, repo, "log", "--all", "--format=%s"); !strings.Contains(got, "task work") || !strings.Contains(got, "leftovers") {
		t.Errorf("git log --all: %q", got)
	}
	wtClean(t, repo, "with the task's commits")
	wtGit(t, repo, "gc", "-q", "--prune=now")
	wtClean(t, repo, "after the user's gc")

	e.setStatus(tk.ID, task.Failed)
	if _, err := e.m.Remove(context.Background(), tk.ID, "done", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Errorf("the object directory is still there after removal (%v)", err)
	}
	if strings.Contains(wtAlternates(t, repo), string(tk.ID)) {
		t.Errorf("the shared alternates still name the task: %q", wtAlternates(t, repo))
	}
	if got := wtGit(t, repo, "log", "--format=%s", "-2", worktree.ArchiveRef(tk.ID)); got != "leftovers\ntask work" {
		t.Errorf("the archive ref shows %q", got)
	}
	wtClean(t, repo, "after removal")

	// Restored, the task has an object directory again.
	if _, err := e.m.Provision(context.Background(), e.getTask(tk.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(own); err != nil {
		t.Errorf("no object directory after restoring: %v", err)
	}
}

// TestTaskObjectsRecoveredAtStart: what a daemon stopped half way left is
// finished by Reconcile: a removed worktree's objects whose release was cut
// short after they were moved (its alternates line and directory still
// there) are released; the objects an active one's command left (killed
// with the daemon, its line lost) are moved into the shared store; a line
// whose directory is gone is dropped; a directory of a task this daemon
// does not know is left alone.
func TestTaskObjectsRecoveredAtStart(t *testing.T) {
	t.Parallel()
	e := wtNewEnv(t, worktree.Config{})
	repo := wtRepo(t, "main", nil)
	common := filepath.Join(repo, ".git")
	gone, live := e.task(repo), e.task(repo)
	wGone, wLive := e.provision(gone), e.provision(live)
	tip := wtTaskCommitKilled(t, wGone.Path, sandbox.ObjectDir(common, string(gone.ID)), "gone's work")
	liveTip := wtTaskCommitKilled(t, wLive.Path, sandbox.ObjectDir(common, string(live.ID)), "live's work")

	// The release is cut short after the objects were moved: the
	// alternates cannot be rewritten (the file it is written beside is
	// in the way).
	block := filepath.Join(common, "objects", "info", "alternates.tmp")
	if err := os.Mkdir(block, 0o755); err != nil {
		t.Fatal(err)
	}
	e.setStatus(gone.ID, task.Failed)
	if _, err := e.m.Remove(context.Background(), gone.ID, "done", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sandbox.ObjectDir(common, string(gone.ID))); err != nil {
		t.Fatalf("the release was not cut short: %v", err)
	}
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	// The active task's line is lost (the rewrite that listed it, not
	// synced, lost with the machine); a stale line and a stranger's
	// directory are there.
	alt := strings.ReplaceAll(wtAlternates(t, repo), "../neuraphage/objects/"+string(live.ID)+"\n", "")
	wtWrite(t, common, "objects/info/alternates", alt+"../neuraphage/objects/t-vanished\n")
	stranger := sandbox.ObjectDir(common, "t-stranger")
	if err := os.MkdirAll(stranger, 0o755); err != nil {
		t.Fatal(err)
	}

	if _, err := e.manager(worktree.Config{}).Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	alt = wtAlternates(t, repo)
	if strings.Contains(alt, string(gone.ID)) || strings.Contains(alt, "t-vanished") || strings.Contains(alt, string(live.ID)) {
		t.Errorf("alternates after Reconcile: %q; want no task's line", alt)
	}
	if _, err := os.Stat(filepath.Join(common, "objects", liveTip[:2], liveTip[2:])); err != nil || wtLoose(t, sandbox.ObjectDir(common, string(live.ID))) != 0 {
		t.Errorf("the live task's commit is not in the shared store alone: %v", err)
	}
	if _, err := os.Stat(sandbox.ObjectDir(common, string(gone.ID))); !os.IsNotExist(err) {
		t.Errorf("the removed task's object directory is still there (%v)", err)
	}
	if _, err := os.Stat(stranger); err != nil {
		t.Errorf("a directory no record names was touched: %v", err)
	}
	if got := wtGit(t, repo, "rev-parse", worktree.ArchiveRef(gone.ID)); got != tip {
		t.Errorf("the archive ref is %s, want %s", got, tip)
	}
	wtClean(t, repo, "after Reconcile")
	if got := wtGit(t, repo, "log", "--format=%s", "-1", worktree.Branch(live.ID)); got != "live's work" {
		t.Errorf("the live task's branch shows %q", got)
	}
}

// TestSetupConfined: the setup command is run in the form Confine gives it,
// with the task's object directory made first; a Confine that refuses fails
// the setup with its reason, the worktree kept.
func TestSetupConfined(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{".gitignore": ".setup-*\n"})
	var got store.Worktree
	var sawObjects bool
	refuse := false
	e := wtNewEnv(t, worktree.Config{
		Bootstrap: func(string) worktree.Bootstrap { return worktree.Bootstrap{Setup: `echo plain > .setup-out`} },
		Confine: func(_ context.Context, c proc.Cmd, w store.Worktree) (proc.Cmd, error) {
			got = w
			_, err := os.Stat(sandbox.ObjectDir(filepath.Join(w.Repo, ".git"), string(w.TaskID)))
			sawObjects = err == nil
			if refuse {
				return c, errors.New("sandbox.require is set and commands cannot be confined")
			}
			c.Shell = `echo confined > .setup-out`
			return c, nil
		},
	})
	tk := e.task(repo)
	w := e.provision(tk)
	if got.TaskID != tk.ID || got.Path != w.Path || got.Branch != w.Branch || got.Repo != repo {
		t.Errorf("Confine got %+v, want the task's worktree %+v", got, w)
	}
	if !sawObjects {
		t.Errorf("the task's object directory was not made before the setup")
	}
	if out := wtRead(t, w.Path, ".setup-out"); out != "confined\n" {
		t.Errorf("the setup ran as %q, want the confined form", out)
	}
	refuse = true
	tk2 := e.task(repo)
	if _, err := e.m.Provision(context.Background(), tk2); err == nil || !strings.Contains(err.Error(), "sandbox.require") {
		t.Errorf("Provision with a refusing Confine: %v, want the refusal", err)
	}
	if rec := e.record(tk2.ID); !strings.Contains(rec.Note, "sandbox.require") {
		t.Errorf("note %q, want the refusal", rec.Note)
	}
}
