package worktree_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// commitWork writes files in w's worktree and commits them with Commit.
func (e *wtEnv) commitWork(id task.ID, msg string, files map[string]string) string {
	e.t.Helper()
	w := e.record(id)
	for rel, content := range files {
		wtWrite(e.t, w.Path, rel, content)
	}
	tip, made, err := e.m.Commit(context.Background(), id, msg)
	if err != nil || !made {
		e.t.Fatalf("Commit(%s) = %s, %v, %v", id, tip, made, err)
	}
	return tip
}

func (e *wtEnv) inspect(id task.ID) worktree.Info {
	e.t.Helper()
	in, err := e.m.Inspect(context.Background(), id)
	if err != nil {
		e.t.Fatalf("Inspect(%s): %v", id, err)
	}
	return in
}

func TestRecreateMissingDirectory(t *testing.T) {
	t.Parallel()
	e := wtNewEnv(t, worktree.Config{})
	repo := wtRepo(t, "main", nil)
	tk := e.task(repo)
	w := e.provision(tk)
	tip := e.commitWork(tk.ID, "task work", map[string]string{"work/done.txt": "done\n"})
	if err := os.RemoveAll(w.Path); err != nil {
		t.Fatal(err)
	}
	if in := e.inspect(tk.ID); in.Exists || in.Tip != tip {
		t.Errorf("Inspect of a missing directory: %+v", in)
	}

	again := e.provision(tk)
	if again.Path != w.Path || again.Branch != w.Branch || again.State != store.WorktreeActive || again.Note != "" {
		t.Errorf("recreated %+v, was %+v", again, w)
	}
	if got := wtRead(t, w.Path, "work/done.txt"); got != "done\n" {
		t.Errorf("committed work = %q", got)
	}
	if h := wtRev(t, w.Path, "HEAD"); h != tip {
		t.Errorf("HEAD %s, want %s", h, tip)
	}
	if b := wtGit(t, w.Path, "symbolic-ref", "--short", "HEAD"); b != w.Branch {
		t.Errorf("on %q, want %s", b, w.Branch)
	}
	if list := wtWorktrees(t, repo); len(list) != 2 || list[1].Prunable {
		t.Errorf("worktrees %+v", list)
	}
	evs := e.events(tk.ID, string(event.KindWorktreeRecreated))
	if len(evs) != 1 {
		t.Fatalf("recreated events %+v", evs)
	}
	if p := evs[0].Payload.(event.WorktreeRecreated); p.Path != w.Path || p.Branch != w.Branch || p.From != "refs/heads/"+w.Branch || p.Reason == "" {
		t.Errorf("recreated payload %+v", p)
	}
	if in := e.inspect(tk.ID); !in.Exists || in.Tip != tip || in.Ahead != 1 {
		t.Errorf("Inspect after recreation: %+v", in)
	}
}

func TestReconcileAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := worktree.Config{PortEnv: "PORT"}
	e := wtNewEnv(t, cfg)
	repo := wtRepo(t, "main", nil)
	gone, kept := e.task(repo), e.task(repo)
	wGone, wKept := e.provision(gone), e.provision(kept)
	tip := e.commitWork(gone.ID, "task work", map[string]string{"done.txt": "done\n"})
	wtWrite(t, wKept.Path, "wip.txt", "uncommitted\n")
	if err := os.RemoveAll(wGone.Path); err != nil {
		t.Fatal(err)
	}
	// Stray worktrees made by hand: one on a neuraphage branch nobody
	// registered, one under the worktree root on another branch. Each
	// holds the user's uncommitted file.
	strayPath := filepath.Join(filepath.Dir(repo), "by-hand")
	wtGit(t, repo, "worktree", "add", "-q", "-b", "neuraphage/t-zzzzz", strayPath, "main")
	wtWrite(t, strayPath, "precious.txt", "do not delete\n")
	underRoot := filepath.Join(filepath.Dir(repo), ".neuraphage-worktrees", "manual")
	wtGit(t, repo, "worktree", "add", "-q", "-b", "experiment", underRoot, "main")
	wtWrite(t, underRoot, "precious.txt", "do not delete either\n")
	// An unrelated worktree elsewhere is not stray.
	wtGit(t, repo, "worktree", "add", "-q", "-b", "unrelated", filepath.Join(filepath.Dir(repo), "other"), "main")

	// The daemon restarts.
	m := e.manager(cfg)
	rep, err := m.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 2 || !slices.Equal(rep.Recreated, []task.ID{gone.ID}) || len(rep.Problems) != 0 {
		t.Errorf("report %+v", rep)
	}
	var strayPaths []string
	for _, s := range rep.Strays {
		strayPaths = append(strayPaths, s.Path)
	}
	slices.Sort(strayPaths)
	if want := []string{underRoot, strayPath}; !slices.Equal(strayPaths, want) {
		t.Errorf("strays %q, want %q", strayPaths, want)
	}
	// Recreated with its committed work; the other untouched.
	if got := wtRead(t, wGone.Path, "done.txt"); got != "done\n" || wtRev(t, wGone.Path, "HEAD") != tip {
		t.Errorf("recreated worktree: done.txt %q", got)
	}
	if got := wtRead(t, wKept.Path, "wip.txt"); got != "uncommitted\n" {
		t.Errorf("present worktree's wip.txt = %q", got)
	}
	if evs := e.events(gone.ID, string(event.KindWorktreeRecreated)); len(evs) != 1 ||
		!strings.Contains(evs[0].Payload.(event.WorktreeRecreated).Reason, "daemon start") {
		t.Errorf("recreated events %+v", evs)
	}
	if evs := e.events(kept.ID, string(event.KindWorktreeRecreated)); len(evs) != 0 {
		t.Errorf("a present worktree was recreated: %+v", evs)
	}
	strayEvents := e.events("", string(event.KindWorktreeStray))
	if len(strayEvents) != 2 {
		t.Errorf("stray events %+v", strayEvents)
	}
	for _, ev := range strayEvents {
		if p := ev.Payload.(event.WorktreeStray); p.Repo != repo || (p.Path != strayPath && p.Path != underRoot) {
			t.Errorf("stray payload %+v", p)
		}
	}
	// Strays are left alone.
	for p, want := range map[string]string{strayPath: "do not delete\n", underRoot: "do not delete either\n"} {
		if got := wtRead(t, p, "precious.txt"); got != want || !wtHasWorktree(t, repo, p) {
			t.Errorf("stray %s: precious.txt %q", p, got)
		}
	}
	if wtRev(t, repo, "refs/heads/neuraphage/t-zzzzz") == "" {
		t.Error("the stray's branch was deleted")
	}

	// List shows the records and the strays.
	list, err := m.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 {
		t.Fatalf("List: %+v", list)
	}
	byPath := map[string]worktree.Info{}
	for _, in := range list {
		byPath[in.Path] = in
	}
	if in := byPath[wGone.Path]; in.TaskID != gone.ID || !in.Exists || in.Stray || in.Tip != tip || in.Ahead != 1 {
		t.Errorf("List entry of %s: %+v", gone.ID, in)
	}
	if in := byPath[wKept.Path]; in.TaskID != kept.ID || !slices.Equal(in.Untracked, []string{"wip.txt"}) || in.Stray {
		t.Errorf("List entry of %s: %+v", kept.ID, in)
	}
	if in := byPath[strayPath]; !in.Stray || in.Branch != "neuraphage/t-zzzzz" || in.TaskID != "" || !in.Exists {
		t.Errorf("List entry of the stray: %+v", in)
	}
	if in := byPath[underRoot]; !in.Stray || in.Branch != "experiment" {
		t.Errorf("List entry of the stray under the root: %+v", in)
	}
	// A second Reconcile finds nothing to recreate and deletes nothing.
	rep, err = m.Reconcile(ctx)
	if err != nil || len(rep.Recreated) != 0 || len(rep.Strays) != 2 {
		t.Errorf("second Reconcile %+v, %v", rep, err)
	}
	if !wtExists(filepath.Join(strayPath, "precious.txt")) {
		t.Error("stray deleted")
	}
	// The restarted manager knows the ports already handed.
	tk := e.task(repo)
	w, err := m.Provision(ctx, tk)
	if err != nil {
		t.Fatal(err)
	}
	if w.Port == wGone.Port || w.Port == wKept.Port {
		t.Errorf("port %d handed again", w.Port)
	}
}

func TestReconcileProblems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := wtNewEnv(t, worktree.Config{})
	repo := wtRepo(t, "main", nil)
	// The branch and the directory are gone and there is no archive.
	lost := e.task(repo)
	w := e.provision(lost)
	if err := os.RemoveAll(w.Path); err != nil {
		t.Fatal(err)
	}
	wtGit(t, repo, "worktree", "prune")
	wtGit(t, repo, "branch", "-D", w.Branch)
	// The directory is there but is not a worktree.
	squat := e.task(repo)
	ws := e.provision(squat)
	if err := os.RemoveAll(ws.Path); err != nil {
		t.Fatal(err)
	}
	wtWrite(t, ws.Path, "user.txt", "mine\n")

	rep, err := e.manager(worktree.Config{}).Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 2 || len(rep.Recreated) != 0 || len(rep.Problems) != 2 {
		t.Fatalf("report %+v", rep)
	}
	if p := rep.Problems[lost.ID]; !strings.Contains(p, "no archive") {
		t.Errorf("problem of %s: %q", lost.ID, p)
	}
	if p := rep.Problems[squat.ID]; !strings.Contains(p, "not a git work tree") {
		t.Errorf("problem of %s: %q", squat.ID, p)
	}
	if got := wtRead(t, ws.Path, "user.txt"); got != "mine\n" {
		t.Errorf("user's file = %q", got)
	}
	if n := e.record(lost.ID).Note; !strings.Contains(n, "no archive") {
		t.Errorf("note of %s: %q", lost.ID, n)
	}
	if _, err := e.m.Provision(ctx, e.getTask(squat.ID)); err == nil || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("Provision over a squatted path: %v", err)
	}
}

func TestCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n", ".gitignore": "*.log\n", "old.txt": "old\n"})
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	base := w.BaseCommit

	// A clean tree: nothing to commit.
	tip, made, err := e.m.Commit(ctx, tk.ID, "nothing")
	if err != nil || made || tip != base {
		t.Errorf("Commit on a clean tree = %s, %v, %v; want %s, false", tip, made, err, base)
	}
	if evs := e.events(tk.ID, string(event.KindCommitMade)); len(evs) != 0 {
		t.Errorf("commit events for a no-op: %+v", evs)
	}

	wtWrite(t, w.Path, "README.md", "hello, changed\n")
	wtWrite(t, w.Path, "deep/new/file.txt", "new\n")
	wtWrite(t, w.Path, "debug.log", "ignored\n")
	if err := os.Remove(filepath.Join(w.Path, "old.txt")); err != nil {
		t.Fatal(err)
	}
	msg := "Implement the thing\n\nWith a body."
	tip, made, err = e.m.Commit(ctx, tk.ID, msg)
	if err != nil || !made {
		t.Fatalf("Commit = %s, %v, %v", tip, made, err)
	}
	if h := wtRev(t, w.Path, "HEAD"); h != tip || wtRev(t, repo, "refs/heads/"+w.Branch) != tip {
		t.Errorf("tip %s, HEAD %s", tip, h)
	}
	if p := wtGit(t, repo, "rev-parse", tip+"^"); p != base {
		t.Errorf("parent %s, want %s", p, base)
	}
	if got := wtGit(t, repo, "log", "-1", "--format=%B", tip); got != msg {
		t.Errorf("message %q, want %q", got, msg)
	}
	names := strings.Fields(wtGit(t, repo, "show", "--name-only", "--format=", tip))
	slices.Sort(names)
	if want := []string{"README.md", "deep/new/file.txt", "old.txt"}; !slices.Equal(names, want) {
		t.Errorf("committed %q, want %q", names, want)
	}
	if got := wtGit(t, repo, "log", "-1", "--format=%an <%ae>", tip); got != "Test <test@example.com>" {
		t.Errorf("author %q, want git's configured identity", got)
	}
	if st, err := git.WorkStatus(ctx, w.Path); err != nil || !st.Clean() {
		t.Errorf("status after commit %+v, %v", st, err)
	}
	if got := wtRead(t, w.Path, "debug.log"); got != "ignored\n" {
		t.Errorf("ignored file = %q", got)
	}
	evs := e.events(tk.ID, string(event.KindCommitMade))
	if len(evs) != 1 {
		t.Fatalf("commit events %+v", evs)
	}
	if p := evs[0].Payload.(event.CommitMade); p.Branch != w.Branch || p.Commit != tip || p.Files != 3 || p.Message != "Implement the thing" {
		t.Errorf("git.commit payload %+v", p)
	}
	// The main checkout is not touched.
	if st, err := git.WorkStatus(ctx, repo); err != nil || !st.Clean() || wtRev(t, repo, "HEAD") != base {
		t.Errorf("main checkout %+v, %v", st, err)
	}

	// Again: a no-op returning the tip.
	again, made, err := e.m.Commit(ctx, tk.ID, "again")
	if err != nil || made || again != tip {
		t.Errorf("Commit again = %s, %v, %v; want %s, false", again, made, err, tip)
	}
	// An empty message gets a default one.
	wtWrite(t, w.Path, "more.txt", "more\n")
	tip2, made, err := e.m.Commit(ctx, tk.ID, "  \n")
	if err != nil || !made {
		t.Fatalf("Commit with no message = %v, %v", made, err)
	}
	if got := wtGit(t, repo, "log", "-1", "--format=%s", tip2); got != "neuraphage: work of "+string(tk.ID) {
		t.Errorf("default message %q", got)
	}
	// A task without a worktree is an error.
	other := e.task(repo)
	if _, _, err := e.m.Commit(ctx, other.ID, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Commit without a worktree: %v", err)
	}
}

func TestCommitRefusesOperationInProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", map[string]string{"f.txt": "base\n"})
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	wtCommit(t, repo, "main side", map[string]string{"f.txt": "main\n"})
	e.commitWork(tk.ID, "task side", map[string]string{"f.txt": "task\n"})
	if _, err := git.Run(ctx, w.Path, "merge", "main"); err == nil {
		t.Fatal("merge did not conflict")
	}
	before := wtRead(t, w.Path, "f.txt")
	tip := wtRev(t, w.Path, "HEAD")
	if _, _, err := e.m.Commit(ctx, tk.ID, "x"); err == nil || !strings.Contains(err.Error(), "merge in progress") {
		t.Errorf("Commit during a merge: %v", err)
	}
	if wtRead(t, w.Path, "f.txt") != before || wtRev(t, w.Path, "HEAD") != tip {
		t.Error("Commit changed the worktree during a merge")
	}
	if _, err := e.m.Remove(ctx, tk.ID, "test", false); !isRefused(err) || !strings.Contains(err.Error(), "merge in progress") {
		t.Errorf("Remove during a merge: %v", err)
	}
}

func TestCommitAuthorFromConfig(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{AuthorName: "Robo Author", AuthorEmail: "robo@example.org"})
	tk := e.task(repo)
	e.provision(tk)
	tip := e.commitWork(tk.ID, "by config", map[string]string{"x.txt": "x\n"})
	if got := wtGit(t, repo, "log", "-1", "--format=%an <%ae>", tip); got != "Robo Author <robo@example.org>" {
		t.Errorf("author %q", got)
	}
	if got := wtGit(t, repo, "log", "-1", "--format=%cn <%ce>", tip); got != "Robo Author <robo@example.org>" {
		t.Errorf("committer %q", got)
	}
}

// TestCommitNoIdentity: without any git identity commits are signed
// Neuraphage. It changes the environment: not parallel.
func TestCommitNoIdentity(t *testing.T) {
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	e.provision(tk)

	// gittest.Isolate gives git an identity through the environment: take
	// it away, and forbid git from guessing one from the host.
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		wtUnsetenv(t, k)
	}
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "user.useConfigOnly")
	t.Setenv("GIT_CONFIG_VALUE_0", "true")
	if out, err := git.Run(context.Background(), repo, "var", "GIT_AUTHOR_IDENT"); err == nil {
		t.Fatalf("git still has an identity: %q", out)
	}

	tip := e.commitWork(tk.ID, "anonymous", map[string]string{"x.txt": "x\n"})
	if got := wtGit(t, repo, "log", "-1", "--format=%an <%ae>", tip); got != "Neuraphage <neuraphage@localhost>" {
		t.Errorf("author %q", got)
	}
	if got := wtGit(t, repo, "log", "-1", "--format=%cn <%ce>", tip); got != "Neuraphage <neuraphage@localhost>" {
		t.Errorf("committer %q", got)
	}
}

// wtUnsetenv unsets k for the rest of the test.
func wtUnsetenv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "") // refuses parallel tests and restores k afterwards
	if err := os.Unsetenv(k); err != nil {
		t.Fatal(err)
	}
}

func isRefused(err error) bool {
	var re *worktree.RefusedError
	return errors.As(err, &re)
}

func TestRemoveRefusesUncommittedWork(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T, path string) map[string]string{
		"changed file": func(t *testing.T, path string) map[string]string {
			wtWrite(t, path, "README.md", "edited\n")
			return map[string]string{"README.md": "edited\n"}
		},
		"untracked file": func(t *testing.T, path string) map[string]string {
			wtWrite(t, path, "notes/new.txt", "new\n")
			return map[string]string{"notes/new.txt": "new\n"}
		},
		"staged file": func(t *testing.T, path string) map[string]string {
			wtWrite(t, path, "staged.txt", "staged\n")
			wtGit(t, path, "add", "staged.txt")
			return map[string]string{"staged.txt": "staged\n"}
		},
	}
	for name, dirty := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo := wtRepo(t, "main", nil)
			e := wtNewEnv(t, worktree.Config{})
			tk := e.task(repo)
			w := e.provision(tk)
			tip := e.commitWork(tk.ID, "work", map[string]string{"work.txt": "w\n"})
			files := dirty(t, w.Path)
			check := func(what string) {
				t.Helper()
				for rel, want := range files {
					if got := wtRead(t, w.Path, rel); got != want {
						t.Errorf("%s: %s = %q, want %q", what, rel, got, want)
					}
				}
				if rec := e.record(tk.ID); rec.State != store.WorktreeActive || rec.Archive != "" {
					t.Errorf("%s: record %+v", what, rec)
				}
				if wtRev(t, repo, "refs/heads/"+w.Branch) != tip || wtRev(t, repo, worktree.ArchiveRef(tk.ID)) != "" {
					t.Errorf("%s: refs changed", what)
				}
				if !wtHasWorktree(t, repo, w.Path) {
					t.Errorf("%s: worktree gone", what)
				}
				if evs := e.events(tk.ID, string(event.KindWorktreeRemoved)); len(evs) != 0 {
					t.Errorf("%s: removed events %+v", what, evs)
				}
			}

			for _, keep := range []bool{false, true} {
				_, err := e.m.Remove(ctx, tk.ID, "test", keep)
				var re *worktree.RefusedError
				if !errors.As(err, &re) {
					t.Fatalf("Remove(keep=%v) = %v, want a *RefusedError", keep, err)
				}
				if re.TaskID != tk.ID || !strings.Contains(re.Reason, w.Path) || !strings.Contains(err.Error(), "not removed") {
					t.Errorf("refusal %+v (%v)", re, err)
				}
				for rel := range files {
					if !strings.Contains(re.Reason, rel) {
						t.Errorf("refusal %q does not name %s", re.Reason, rel)
					}
				}
				check("Remove")
			}

			e.setStatus(tk.ID, task.Cancelled)
			res, err := e.m.Prune(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].TaskID != tk.ID || res[0].Removed || res[0].Path != w.Path || !strings.Contains(res[0].Reason, "commit or remove") {
				t.Errorf("Prune = %+v", res)
			}
			check("Prune")
		})
	}
}

func TestPruneAndRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{PortEnv: "PORT"})

	// running: in flight, with committed work; never pruned.
	running := e.task(repo)
	wRunning := e.provision(running)
	e.commitWork(running.ID, "wip", map[string]string{"r.txt": "r\n"})
	e.setStatus(running.ID, task.Running)
	// queued: nothing done yet, not terminal.
	queued := e.task(repo)
	wQueued := e.provision(queued)
	// cancelled: unmerged commits.
	cancelled := e.task(repo)
	wCancelled := e.provision(cancelled)
	e.commitWork(cancelled.ID, "first", map[string]string{"c1.txt": "1\n"})
	cancelledTip := e.commitWork(cancelled.ID, "second", map[string]string{"c2.txt": "2\n"})
	e.setStatus(cancelled.ID, task.Cancelled)
	// completed: its work fast-forwarded onto main.
	completed := e.task(repo)
	wCompleted := e.provision(completed)
	completedTip := e.commitWork(completed.ID, "done", map[string]string{"d.txt": "d\n"})
	wtGit(t, repo, "merge", "-q", "--ff-only", wCompleted.Branch)
	e.setStatus(completed.ID, task.Running, task.Completed)
	// failed: never committed anything.
	failed := e.task(repo)
	wFailed := e.provision(failed)
	e.setStatus(failed.ID, task.Failed)

	// Inspect before.
	if in := e.inspect(cancelled.ID); in.Ahead != 2 || in.Behind != 1 || in.Merged || in.Archived || in.Tip != cancelledTip || !in.Exists {
		t.Errorf("Inspect(cancelled) before: %+v", in)
	}
	if in := e.inspect(completed.ID); in.Ahead != 0 || in.Behind != 0 || !in.Merged || in.Archived || in.Tip != completedTip {
		t.Errorf("Inspect(completed) before: %+v", in)
	}
	if in := e.inspect(failed.ID); in.Ahead != 0 || in.Behind != 0 || !in.Merged || in.Archived || in.Tip != wFailed.BaseCommit {
		t.Errorf("Inspect(failed) before: %+v", in)
	}

	res, err := e.m.Prune(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[task.ID]worktree.PruneResult{}
	for _, r := range res {
		byID[r.TaskID] = r
	}
	if len(res) != 3 || !byID[cancelled.ID].Removed || !byID[completed.ID].Removed || !byID[failed.ID].Removed {
		t.Fatalf("Prune = %+v", res)
	}
	if r := byID[cancelled.ID]; r.Path != wCancelled.Path || !strings.Contains(r.Reason, worktree.ArchiveRef(cancelled.ID)) {
		t.Errorf("prune result %+v", r)
	}
	// In-flight tasks untouched.
	for _, w := range []store.Worktree{wRunning, wQueued} {
		if !wtHasWorktree(t, repo, w.Path) || e.record(w.TaskID).State != store.WorktreeActive || wtRev(t, repo, "refs/heads/"+w.Branch) == "" {
			t.Errorf("%s was pruned", w.TaskID)
		}
	}
	// Removed: worktree, directory and branch gone, the tip archived.
	for id, tip := range map[task.ID]string{cancelled.ID: cancelledTip, completed.ID: completedTip, failed.ID: wFailed.BaseCommit} {
		w := e.record(id)
		if w.State != store.WorktreeRemoved || w.Archive != worktree.ArchiveRef(id) {
			t.Errorf("record of %s after prune: %+v", id, w)
		}
		if wtExists(w.Path) || wtHasWorktree(t, repo, w.Path) {
			t.Errorf("worktree of %s still there", id)
		}
		if wtRev(t, repo, "refs/heads/"+w.Branch) != "" {
			t.Errorf("branch of %s still there", id)
		}
		if a := wtRev(t, repo, worktree.ArchiveRef(id)); a != tip {
			t.Errorf("archive of %s = %q, want %s", id, a, tip)
		}
		evs := e.events(id, string(event.KindWorktreeRemoved))
		if len(evs) != 1 {
			t.Errorf("removed events of %s: %+v", id, evs)
			continue
		}
		if p := evs[0].Payload.(event.WorktreeRemoved); !p.BranchDeleted || p.Archive != worktree.ArchiveRef(id) || p.Path != w.Path || !strings.Contains(p.Reason, "pruned") {
			t.Errorf("removed payload of %s: %+v", id, p)
		}
		// Merged after the branch is gone: its archived tip is on main.
		onMain, err := git.IsAncestor(ctx, repo, tip, "refs/heads/main")
		if err != nil {
			t.Fatal(err)
		}
		if in := e.inspect(id); in.Exists || in.Tip != "" || !in.Archived || in.Ahead != 0 || in.Merged != onMain {
			t.Errorf("Inspect(%s) after prune: %+v", id, in)
		}
	}
	// Pruning again does nothing more.
	if res, err := e.m.Prune(ctx); err != nil || len(res) != 0 {
		t.Errorf("second Prune = %+v, %v", res, err)
	}
	// Remove of a removed worktree is a no-op.
	if w, err := e.m.Remove(ctx, cancelled.ID, "again", false); err != nil || w.State != store.WorktreeRemoved {
		t.Errorf("Remove again = %+v, %v", w, err)
	}

	// Restore brings the unmerged work back.
	w, err := e.m.Restore(ctx, cancelled.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w.State != store.WorktreeActive || w.Path != wCancelled.Path || w.Branch != wCancelled.Branch || e.record(cancelled.ID).State != store.WorktreeActive {
		t.Errorf("restored %+v", w)
	}
	if b := wtRev(t, repo, "refs/heads/"+w.Branch); b != cancelledTip {
		t.Errorf("branch restored at %q, want %s", b, cancelledTip)
	}
	if h := wtRev(t, w.Path, "HEAD"); h != cancelledTip || wtGit(t, w.Path, "symbolic-ref", "--short", "HEAD") != w.Branch {
		t.Errorf("restored worktree at %s", h)
	}
	if wtRead(t, w.Path, "c1.txt") != "1\n" || wtRead(t, w.Path, "c2.txt") != "2\n" {
		t.Error("restored worktree lacks the committed work")
	}
	evs := e.events(cancelled.ID, string(event.KindWorktreeRecreated))
	if len(evs) != 1 || evs[0].Payload.(event.WorktreeRecreated).From != worktree.ArchiveRef(cancelled.ID) {
		t.Errorf("recreated events %+v", evs)
	}
	if in := e.inspect(cancelled.ID); !in.Exists || in.Tip != cancelledTip || in.Ahead != 2 || in.Behind != 1 || in.Merged || !in.Archived {
		t.Errorf("Inspect after restore: %+v", in)
	}
	// Restoring what is there is a no-op.
	if again, err := e.m.Restore(ctx, cancelled.ID); err != nil || again.Path != w.Path {
		t.Errorf("Restore again = %+v, %v", again, err)
	}
	// The merged one comes back too.
	if w, err := e.m.Restore(ctx, completed.ID); err != nil || wtRev(t, w.Path, "HEAD") != completedTip {
		t.Errorf("Restore(completed) = %+v, %v", w, err)
	}
	// Restore of a task without a worktree is ErrNotFound.
	if _, err := e.m.Restore(ctx, e.task(repo).ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Restore without a record: %v", err)
	}
}

func TestRemoveKeepUnmerged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	tip := e.commitWork(tk.ID, "unmerged", map[string]string{"u.txt": "u\n"})

	removed, err := e.m.Remove(ctx, tk.ID, "user asked", true)
	if err != nil {
		t.Fatal(err)
	}
	if removed.State != store.WorktreeRemoved || removed.Archive != worktree.ArchiveRef(tk.ID) || wtExists(w.Path) {
		t.Errorf("Remove = %+v", removed)
	}
	if b := wtRev(t, repo, "refs/heads/"+w.Branch); b != tip {
		t.Errorf("unmerged branch not kept: %q", b)
	}
	evs := e.events(tk.ID, string(event.KindWorktreeRemoved))
	if len(evs) != 1 || evs[0].Payload.(event.WorktreeRemoved).BranchDeleted {
		t.Errorf("removed events %+v", evs)
	}
	if in := e.inspect(tk.ID); in.Exists || in.Tip != tip || in.Ahead != 1 || in.Merged || !in.Archived {
		t.Errorf("Inspect after a removal keeping the branch: %+v", in)
	}
	// Commit on a removed worktree is refused.
	if _, _, err := e.m.Commit(ctx, tk.ID, "x"); err == nil || !strings.Contains(err.Error(), "restore") {
		t.Errorf("Commit on a removed worktree: %v", err)
	}
	// Provision brings it back on the kept branch.
	back := e.provision(e.getTask(tk.ID))
	if back.State != store.WorktreeActive || wtRev(t, back.Path, "HEAD") != tip || wtRead(t, back.Path, "u.txt") != "u\n" {
		t.Errorf("Provision after removal = %+v", back)
	}
	if evs := e.events(tk.ID, string(event.KindWorktreeRecreated)); len(evs) != 1 || evs[0].Payload.(event.WorktreeRecreated).From != "refs/heads/"+w.Branch {
		t.Errorf("recreated events %+v", evs)
	}
}

func TestRemoveMissingDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	tip := e.commitWork(tk.ID, "work", map[string]string{"x.txt": "x\n"})
	if err := os.RemoveAll(w.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Remove(ctx, tk.ID, "gone", false); err != nil {
		t.Fatal(err)
	}
	if wtHasWorktree(t, repo, w.Path) {
		t.Errorf("git still lists %s: %+v", w.Path, wtWorktrees(t, repo))
	}
	if wtRev(t, repo, "refs/heads/"+w.Branch) != "" || wtRev(t, repo, worktree.ArchiveRef(tk.ID)) != tip {
		t.Error("branch not archived and deleted")
	}
	if w, err := e.m.Restore(ctx, tk.ID); err != nil || wtRead(t, w.Path, "x.txt") != "x\n" {
		t.Errorf("Restore = %+v, %v", w, err)
	}
}

func TestInspectMergedAndLanded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})

	// Merged with a merge commit: ancestor of main.
	merged := e.task(repo)
	wMerged := e.provision(merged)
	mergedTip := e.commitWork(merged.ID, "merged work", map[string]string{"m.txt": "m\n"})
	wtGit(t, repo, "merge", "-q", "--no-ff", "-m", "merge", wMerged.Branch)
	if in := e.inspect(merged.ID); in.Ahead != 0 || in.Behind != 1 || !in.Merged || in.Tip != mergedTip {
		t.Errorf("Inspect(merged): %+v", in)
	}

	// Landed as a squash: not an ancestor, but its tip is recorded.
	squashed := e.task(repo)
	wSquashed := e.provision(squashed)
	squashedTip := e.commitWork(squashed.ID, "squashed work", map[string]string{"s.txt": "s\n"})
	wtGit(t, repo, "merge", "-q", "--squash", wSquashed.Branch)
	landed := wtCommit(t, repo, "squash", nil)
	if in := e.inspect(squashed.ID); in.Ahead != 1 || in.Behind != 1 || in.Merged {
		t.Errorf("Inspect(squashed) before MarkLanded: %+v", in)
	}
	if err := e.m.MarkLanded(ctx, squashed.ID, landed, squashedTip); err != nil {
		t.Fatal(err)
	}
	if rec := e.record(squashed.ID); rec.Landed != landed || rec.LandedTip != squashedTip {
		t.Errorf("record after MarkLanded: %+v", rec)
	}
	if in := e.inspect(squashed.ID); in.Ahead != 1 || !in.Merged {
		t.Errorf("Inspect(squashed) after MarkLanded: %+v", in)
	}
	// A commit after the landed tip is not merged.
	e.commitWork(squashed.ID, "after landing", map[string]string{"late.txt": "late\n"})
	if in := e.inspect(squashed.ID); in.Ahead != 2 || in.Merged {
		t.Errorf("Inspect(squashed) after more work: %+v", in)
	}
	wtGit(t, wSquashed.Path, "reset", "-q", "--hard", squashedTip)

	// Merged work: the branch is deleted even when asked to keep unmerged
	// ones.
	for _, id := range []task.ID{merged.ID, squashed.ID} {
		if _, err := e.m.Remove(ctx, id, "landed", true); err != nil {
			t.Fatalf("Remove(%s): %v", id, err)
		}
		w := e.record(id)
		if wtRev(t, repo, "refs/heads/"+w.Branch) != "" || wtRev(t, repo, worktree.ArchiveRef(id)) == "" || wtExists(w.Path) {
			t.Errorf("%s: merged branch kept or not archived", id)
		}
		if in := e.inspect(id); in.Tip != "" || !in.Archived {
			t.Errorf("Inspect(%s) after removal: %+v", id, in)
		}
	}
	// Restoring clears the landing.
	w, err := e.m.Restore(ctx, squashed.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w.Landed != "" || w.LandedTip != "" || e.record(squashed.ID).Landed != "" {
		t.Errorf("restored record keeps its landing: %+v", w)
	}
	if in := e.inspect(squashed.ID); in.Merged || in.Tip != squashedTip {
		t.Errorf("Inspect after restore: %+v", in)
	}
}

func TestRestoreRefusesExistingPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)
	if _, err := e.m.Remove(ctx, tk.ID, "done", false); err != nil {
		t.Fatal(err)
	}
	wtWrite(t, w.Path, "user.txt", "mine\n")
	if _, err := e.m.Restore(ctx, tk.ID); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Restore over a directory: %v", err)
	}
	if got := wtRead(t, w.Path, "user.txt"); got != "mine\n" {
		t.Errorf("user's file = %q", got)
	}
	if rec := e.record(tk.ID); rec.State != store.WorktreeRemoved {
		t.Errorf("record %+v", rec)
	}
	if wtRev(t, repo, "refs/heads/"+w.Branch) != "" {
		t.Error("branch restored although the worktree was not")
	}
}
