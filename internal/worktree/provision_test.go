package worktree_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

func TestProvisionCreates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := wtNewEnv(t, worktree.Config{})
	repo := wtRepo(t, "main", map[string]string{"README.md": "hello\n", "src/a.go": "package a\n"})
	base := wtRev(t, repo, "refs/heads/main")
	// The main checkout is on another branch with its own commit: the task
	// still starts from main.
	wtGit(t, repo, "switch", "-q", "-c", "feature")
	feature := wtCommit(t, repo, "feature work", map[string]string{"feature.txt": "f\n"})
	tk := e.task(repo)

	w := e.provision(tk)

	path := wtDefaultPath(repo, tk.ID)
	want := store.Worktree{
		TaskID: tk.ID, Repo: repo, Branch: "neuraphage/" + string(tk.ID) + "/work", Base: "main", BaseCommit: base,
		Path: path, State: store.WorktreeActive,
	}
	got := w
	got.CreatedAt, got.UpdatedAt = want.CreatedAt, want.UpdatedAt
	if got != want {
		t.Errorf("Provision returned\n %+v\nwant\n %+v", got, want)
	}
	if w.CreatedAt.IsZero() || w.UpdatedAt.IsZero() {
		t.Errorf("times not set: %+v", w)
	}
	if worktree.Branch(tk.ID) != want.Branch || worktree.ArchiveRef(tk.ID) != "refs/neuraphage/archive/"+string(tk.ID) {
		t.Errorf("Branch/ArchiveRef = %q, %q", worktree.Branch(tk.ID), worktree.ArchiveRef(tk.ID))
	}

	// The registry holds the same record.
	rec := e.record(tk.ID)
	if !rec.CreatedAt.Equal(w.CreatedAt) {
		t.Errorf("stored CreatedAt %v, returned %v", rec.CreatedAt, w.CreatedAt)
	}
	rec.CreatedAt, rec.UpdatedAt = want.CreatedAt, want.UpdatedAt
	if rec != want {
		t.Errorf("stored record\n %+v\nwant\n %+v", rec, want)
	}
	if ws, err := e.st.ListWorktrees(ctx, repo); err != nil || len(ws) != 1 || ws[0].TaskID != tk.ID {
		t.Errorf("ListWorktrees(%s) = %+v, %v", repo, ws, err)
	}

	// Branch and worktree on disk.
	if c := wtRev(t, repo, "refs/heads/neuraphage/"+string(tk.ID)+"/work"); c != base {
		t.Errorf("branch at %q, want base %s", c, base)
	}
	if b := wtGit(t, path, "symbolic-ref", "--short", "HEAD"); b != want.Branch {
		t.Errorf("worktree on %q, want %s", b, want.Branch)
	}
	if h := wtRev(t, path, "HEAD"); h != base {
		t.Errorf("worktree HEAD %s, want %s", h, base)
	}
	if got := wtRead(t, path, "src/a.go"); got != "package a\n" {
		t.Errorf("src/a.go = %q", got)
	}
	if wtExists(filepath.Join(path, "feature.txt")) {
		t.Error("the worktree holds the main checkout's feature branch work")
	}
	if !wtHasWorktree(t, repo, path) {
		t.Errorf("git does not list %s: %+v", path, wtWorktrees(t, repo))
	}
	if st, err := git.WorkStatus(ctx, path); err != nil || !st.Clean() {
		t.Errorf("new worktree status %+v, %v; want clean", st, err)
	}
	// The main checkout is untouched.
	if b := wtGit(t, repo, "symbolic-ref", "--short", "HEAD"); b != "feature" {
		t.Errorf("main checkout moved to %q", b)
	}
	if h := wtRev(t, repo, "HEAD"); h != feature {
		t.Errorf("main checkout HEAD moved to %s", h)
	}

	// The task knows its branch and worktree.
	if got := e.getTask(tk.ID); got.Branch != want.Branch || got.Worktree != path {
		t.Errorf("task branch %q worktree %q; want %q %q", got.Branch, got.Worktree, want.Branch, path)
	}

	// worktree.created is logged.
	evs := e.events(tk.ID, string(event.KindWorktreeCreated))
	if len(evs) != 1 {
		t.Fatalf("worktree.created events: %+v", evs)
	}
	p, ok := evs[0].Payload.(event.WorktreeCreated)
	if !ok {
		t.Fatalf("payload %T", evs[0].Payload)
	}
	if p.Repo != repo || p.Path != path || p.Branch != want.Branch || p.Base != "main" || p.BaseCommit != base || p.Port != 0 || p.DurationMs < 0 {
		t.Errorf("worktree.created payload %+v", p)
	}
	e.mu.Lock()
	published := slices.ContainsFunc(e.published, func(ev event.Event) bool { return ev.Kind == event.KindWorktreeCreated && ev.TaskID == tk.ID })
	e.mu.Unlock()
	if !published {
		t.Error("worktree.created was not published")
	}
}

func TestProvisionIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := wtNewEnv(t, worktree.Config{})
	repo := wtRepo(t, "main", nil)
	tk := e.task(repo)
	first := e.provision(tk)
	wtWrite(t, first.Path, "work.txt", "in progress\n")

	// main moves on: a second Provision must not start over from it.
	wtGit(t, repo, "switch", "-q", "main")
	newMain := wtCommit(t, repo, "later", map[string]string{"later.txt": "x"})
	worktreesBefore := wtWorktrees(t, repo)
	eventsBefore, _ := e.st.LastEventID(ctx)

	for i := range 3 {
		again, err := e.m.Provision(ctx, tk)
		if err != nil {
			t.Fatalf("Provision #%d: %v", i+2, err)
		}
		if again != first {
			t.Errorf("Provision #%d returned\n %+v\nwant\n %+v", i+2, again, first)
		}
	}
	// And from a fresh Manager (daemon restart), same answer.
	if again, err := e.manager(worktree.Config{}).Provision(ctx, tk); err != nil || again != first {
		t.Errorf("Provision by a new manager = %+v, %v; want %+v", again, err, first)
	}
	if got := wtWorktrees(t, repo); !slices.Equal(got, worktreesBefore) {
		t.Errorf("worktrees changed:\n %+v\nwas\n %+v", got, worktreesBefore)
	}
	if h := wtRev(t, first.Path, "HEAD"); h != first.BaseCommit || h == newMain {
		t.Errorf("worktree HEAD %s, want %s", h, first.BaseCommit)
	}
	if got := wtRead(t, first.Path, "work.txt"); got != "in progress\n" {
		t.Errorf("work in progress changed: %q", got)
	}
	if last, _ := e.st.LastEventID(ctx); last != eventsBefore {
		evs, _ := e.st.ReadEvents(ctx, event.Query{AfterID: eventsBefore})
		t.Errorf("events logged by a repeated Provision: %+v", evs)
	}
	if ws, _ := e.st.ListWorktrees(ctx, ""); len(ws) != 1 {
		t.Errorf("records: %+v", ws)
	}
}

func TestProvisionRoot(t *testing.T) {
	t.Parallel()
	t.Run("absolute", func(t *testing.T) {
		t.Parallel()
		root := filepath.Join(wtReal(t, t.TempDir()), "trees", "here")
		e := wtNewEnv(t, worktree.Config{Root: root})
		repo := wtRepo(t, "main", nil)
		tk := e.task(repo)
		w := e.provision(tk)
		want := filepath.Join(root, string(tk.ID))
		if w.Path != want || e.getTask(tk.ID).Worktree != want {
			t.Errorf("path %s, want %s", w.Path, want)
		}
		if !wtHasWorktree(t, repo, want) || wtGit(t, want, "symbolic-ref", "--short", "HEAD") != w.Branch {
			t.Errorf("no worktree on %s at %s", w.Branch, want)
		}
		if wtExists(filepath.Join(filepath.Dir(repo), ".neuraphage-worktrees")) {
			t.Error("the default root was made too")
		}
		// Idempotent there too.
		if again := e.provision(tk); again != w {
			t.Errorf("second Provision %+v, want %+v", again, w)
		}
	})
	t.Run("absolute unclean", func(t *testing.T) {
		t.Parallel()
		tmp := wtReal(t, t.TempDir())
		e := wtNewEnv(t, worktree.Config{Root: tmp + "/a/../trees/"})
		repo := wtRepo(t, "main", nil)
		tk := e.task(repo)
		w := e.provision(tk)
		if want := filepath.Join(tmp, "trees", string(tk.ID)); w.Path != want {
			t.Errorf("path %s, want %s", w.Path, want)
		}
		if again := e.provision(tk); again != w {
			t.Errorf("second Provision %+v, want %+v", again, w)
		}
	})
	t.Run("relative", func(t *testing.T) {
		t.Parallel()
		e := wtNewEnv(t, worktree.Config{Root: "../rel-trees"})
		repo := wtRepo(t, "main", nil)
		// The task names a subdirectory of the repository: the root is
		// relative to the repository's top, not to that directory.
		if err := os.MkdirAll(filepath.Join(repo, "sub", "dir"), 0o755); err != nil {
			t.Fatal(err)
		}
		tk := e.task(filepath.Join(repo, "sub", "dir"))
		w := e.provision(tk)
		want := filepath.Join(filepath.Dir(repo), "rel-trees", string(tk.ID))
		if w.Path != want || w.Repo != repo {
			t.Errorf("path %s repo %s; want %s %s", w.Path, w.Repo, want, repo)
		}
		if !wtHasWorktree(t, repo, want) {
			t.Errorf("git does not list %s", want)
		}
		if again := e.provision(tk); again != w {
			t.Errorf("second Provision %+v, want %+v", again, w)
		}
	})
	t.Run("relative inside the repository", func(t *testing.T) {
		t.Parallel()
		e := wtNewEnv(t, worktree.Config{Root: ".trees"})
		repo := wtRepo(t, "main", map[string]string{".gitignore": "/.trees/\n"})
		tk := e.task(repo)
		w := e.provision(tk)
		if want := filepath.Join(repo, ".trees", string(tk.ID)); w.Path != want {
			t.Errorf("path %s, want %s", w.Path, want)
		}
		if again := e.provision(tk); again != w {
			t.Errorf("second Provision %+v, want %+v", again, w)
		}
		if st, err := git.WorkStatus(context.Background(), repo); err != nil || !st.Clean() {
			t.Errorf("main checkout status %+v, %v", st, err)
		}
	})
}

func TestProvisionConfiguredBase(t *testing.T) {
	t.Parallel()
	e := wtNewEnv(t, worktree.Config{Base: "develop"})
	repo := wtRepo(t, "main", nil)
	wtGit(t, repo, "switch", "-q", "-c", "develop")
	dev := wtCommit(t, repo, "develop work", map[string]string{"dev.txt": "d\n"})
	wtGit(t, repo, "switch", "-q", "main")
	wtCommit(t, repo, "main work", map[string]string{"main.txt": "m\n"})
	tk := e.task(repo)
	w := e.provision(tk)
	if w.Base != "develop" || w.BaseCommit != dev {
		t.Errorf("base %s at %s, want develop at %s", w.Base, w.BaseCommit, dev)
	}
	if h := wtRev(t, w.Path, "HEAD"); h != dev {
		t.Errorf("worktree HEAD %s, want %s", h, dev)
	}
	if !wtExists(filepath.Join(w.Path, "dev.txt")) || wtExists(filepath.Join(w.Path, "main.txt")) {
		t.Error("worktree content is not develop's")
	}
	evs := e.events(tk.ID, string(event.KindWorktreeCreated))
	if len(evs) != 1 || evs[0].Payload.(event.WorktreeCreated).Base != "develop" {
		t.Errorf("events %+v", evs)
	}
}

func TestProvisionDefaultBranchMaster(t *testing.T) {
	t.Parallel()
	e := wtNewEnv(t, worktree.Config{})
	repo := wtRepo(t, "master", nil)
	tip := wtRev(t, repo, "HEAD")
	tk := e.task(repo)
	w := e.provision(tk)
	if w.Base != "master" || w.BaseCommit != tip {
		t.Errorf("base %s at %s, want master at %s", w.Base, w.BaseCommit, tip)
	}
	if h := wtRev(t, w.Path, "HEAD"); h != tip {
		t.Errorf("worktree HEAD %s, want %s", h, tip)
	}
}

func TestProvisionPorts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := wtNewEnv(t, worktree.Config{PortEnv: "PORT"})
	repo := wtRepo(t, "main", nil)
	seen := map[int]task.ID{}
	var ws []store.Worktree
	for range 5 {
		tk := e.task(repo)
		w := e.provision(tk)
		if w.Port <= 0 || w.Port > 65535 {
			t.Fatalf("%s got port %d", tk.ID, w.Port)
		}
		if other, ok := seen[w.Port]; ok {
			t.Errorf("port %d handed to %s and %s", w.Port, other, tk.ID)
		}
		seen[w.Port] = tk.ID
		if env := e.m.Env(w); !slices.Equal(env, []string{"PORT=" + strconv.Itoa(w.Port)}) {
			t.Errorf("Env = %q, want PORT=%d", env, w.Port)
		}
		if rec := e.record(tk.ID); rec.Port != w.Port {
			t.Errorf("stored port %d, returned %d", rec.Port, w.Port)
		}
		evs := e.events(tk.ID, string(event.KindWorktreeCreated))
		if len(evs) != 1 || evs[0].Payload.(event.WorktreeCreated).Port != w.Port {
			t.Errorf("created events %+v", evs)
		}
		ws = append(ws, w)
	}
	// A repeated Provision keeps each task's port.
	for _, w := range ws {
		again, err := e.m.Provision(ctx, e.getTask(w.TaskID))
		if err != nil || again.Port != w.Port {
			t.Errorf("Provision again: port %d, %v; want %d", again.Port, err, w.Port)
		}
	}
	// Without PortEnv there is no port and no environment.
	plain := e.manager(worktree.Config{})
	if env := plain.Env(ws[0]); env != nil {
		t.Errorf("Env without PortEnv = %q", env)
	}
	e2 := wtNewEnv(t, worktree.Config{})
	tk := e2.task(wtRepo(t, "main", nil))
	if w := e2.provision(tk); w.Port != 0 || e2.m.Env(w) != nil {
		t.Errorf("port %d env %q without PortEnv", w.Port, e2.m.Env(w))
	}
}

func TestProvisionBootstrapCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", map[string]string{
		".gitignore":  ".env\n*.local\n/secrets/\n",
		"config.json": "{\"tracked\": true}\n",
		"README.md":   "hi\n",
	})
	// The user's main checkout: ignored files to copy, and a tracked file
	// with uncommitted changes that must not replace the committed one.
	wtWrite(t, repo, ".env", "API_KEY=secret\n")
	wtWrite(t, repo, "a.local", "A\n")
	wtWrite(t, repo, "b.local", "B\n")
	wtWrite(t, repo, "secrets/nested/key.pem", "PEM\n")
	wtWrite(t, repo, "config.json", "{\"user edit\": true}\n")
	if err := os.Chmod(filepath.Join(repo, ".env"), 0o600); err != nil {
		t.Fatal(err)
	}
	var calls []string
	var mu sync.Mutex
	e := wtNewEnv(t, worktree.Config{Bootstrap: func(r string) worktree.Bootstrap {
		mu.Lock()
		calls = append(calls, r)
		mu.Unlock()
		return worktree.Bootstrap{Copy: []string{".env", "*.local", "secrets", "config.json", "missing.txt", "README.md"}}
	}})
	tk := e.task(repo)
	w := e.provision(tk)

	for rel, want := range map[string]string{
		".env":                   "API_KEY=secret\n",
		"a.local":                "A\n",
		"b.local":                "B\n",
		"secrets/nested/key.pem": "PEM\n",
		"config.json":            "{\"tracked\": true}\n", // never overwritten
		"README.md":              "hi\n",
	} {
		if got := wtRead(t, w.Path, rel); got != want {
			t.Errorf("%s in the worktree = %q, want %q", rel, got, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(w.Path, ".env")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf(".env mode %v, %v; want 0600", fi.Mode(), err)
	}
	if wtExists(filepath.Join(w.Path, "missing.txt")) {
		t.Error("a pattern matching nothing made a file")
	}
	// The copies are ignored, the tracked file unchanged: a clean worktree.
	if st, err := git.WorkStatus(ctx, w.Path); err != nil || !st.Clean() {
		t.Errorf("worktree status %+v, %v; want clean", st, err)
	}
	// The main checkout is as the user left it.
	if got := wtRead(t, repo, "config.json"); got != "{\"user edit\": true}\n" {
		t.Errorf("main config.json = %q", got)
	}
	if !slices.Equal(calls, []string{repo}) {
		t.Errorf("Bootstrap called with %q, want once with %s", calls, repo)
	}
	// A repeated Provision copies nothing again (nor over the task's edits).
	wtWrite(t, w.Path, ".env", "API_KEY=changed by the task\n")
	if err := os.Remove(filepath.Join(w.Path, "a.local")); err != nil {
		t.Fatal(err)
	}
	e.provision(tk)
	if got := wtRead(t, w.Path, ".env"); got != "API_KEY=changed by the task\n" {
		t.Errorf(".env after a second Provision = %q", got)
	}
	if wtExists(filepath.Join(w.Path, "a.local")) {
		t.Error("a second Provision copied a.local again")
	}
}

func TestProvisionSetupCommand(t *testing.T) {
	t.Parallel()
	repo := wtRepo(t, "main", map[string]string{".gitignore": ".setup-*\n"})
	e := wtNewEnv(t, worktree.Config{PortEnv: "PORT", Bootstrap: func(string) worktree.Bootstrap {
		return worktree.Bootstrap{Setup: `printf '%s' "$PORT" > .setup-port && pwd -P > .setup-dir && printf '%s' "$GIT_AUTHOR_NAME" > .setup-env`}
	}})
	tk := e.task(repo)
	w := e.provision(tk)
	if got := wtRead(t, w.Path, ".setup-port"); got != strconv.Itoa(w.Port) || w.Port == 0 {
		t.Errorf("setup saw PORT=%q, want %d", got, w.Port)
	}
	if got := strings.TrimSpace(wtRead(t, w.Path, ".setup-dir")); got != w.Path {
		t.Errorf("setup ran in %s, want %s", got, w.Path)
	}
	if got := wtRead(t, w.Path, ".setup-env"); got != "Test" {
		t.Errorf("setup did not get the daemon's environment (GIT_AUTHOR_NAME=%q)", got)
	}
	if rec := e.record(tk.ID); rec.Note != "" {
		t.Errorf("note %q after a good setup", rec.Note)
	}
}

// The setup command does not see the daemon's keys, tokens or own
// variables (not parallel: it sets the process environment).
func TestProvisionSetupWithoutSecrets(t *testing.T) {
	t.Setenv("SETUP_PROBE_API_KEY", "sk-secret")
	t.Setenv("SETUP_PROBE_TOKEN", "tok-secret")
	t.Setenv("NEURAPHAGE_SETUP_PROBE", "daemon-own")
	t.Setenv("SETUP_PROBE_PLAIN", "visible")
	repo := wtRepo(t, "main", map[string]string{".gitignore": ".setup-*\n"})
	e := wtNewEnv(t, worktree.Config{Bootstrap: func(string) worktree.Bootstrap {
		return worktree.Bootstrap{Setup: `env > .setup-env`}
	}})
	w := e.provision(e.task(repo))
	got := wtRead(t, w.Path, ".setup-env")
	for _, secret := range []string{"sk-secret", "tok-secret", "daemon-own"} {
		if strings.Contains(got, secret) {
			t.Errorf("the setup saw %q:\n%s", secret, got)
		}
	}
	if !strings.Contains(got, "SETUP_PROBE_PLAIN=visible") {
		t.Errorf("the setup did not get the rest of the daemon's environment:\n%s", got)
	}
}

func TestProvisionSetupFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tmp := wtReal(t, t.TempDir())
	marker, runs := filepath.Join(tmp, "fixed"), filepath.Join(tmp, "runs")
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{Bootstrap: func(string) worktree.Bootstrap {
		return worktree.Bootstrap{Setup: fmt.Sprintf(`echo run >> '%s'; if [ -f '%s' ]; then exit 0; fi; echo 'npm ERR! broken' >&2; exit 3`, runs, marker)}
	}})
	countRuns := func() int {
		b, err := os.ReadFile(runs)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "run\n")
	}
	tk := e.task(repo)
	path := wtDefaultPath(repo, tk.ID)

	_, err := e.m.Provision(ctx, tk)
	if err == nil {
		t.Fatal("Provision with a failing setup succeeded")
	}
	for _, want := range []string{"setup failed", "exited with 3", "npm ERR! broken", path} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if countRuns() != 1 {
		t.Errorf("setup ran %d times", countRuns())
	}
	// The worktree is kept, with a note saying why.
	if !wtHasWorktree(t, repo, path) || wtRev(t, path, "HEAD") == "" {
		t.Errorf("worktree %s not kept", path)
	}
	rec := e.record(tk.ID)
	if !strings.HasPrefix(rec.Note, "setup failed: ") || !strings.Contains(rec.Note, "npm ERR! broken") || rec.State != store.WorktreeActive {
		t.Errorf("record after a failed setup: %+v", rec)
	}
	if got := e.getTask(tk.ID); got.Worktree != path {
		t.Errorf("task worktree %q", got.Worktree)
	}

	// Still broken: the next Provision runs setup again and fails again.
	if _, err := e.m.Provision(ctx, tk); err == nil || !strings.Contains(err.Error(), "setup failed") {
		t.Errorf("second Provision: %v, want the setup failure", err)
	}
	if countRuns() != 2 {
		t.Errorf("setup ran %d times, want 2", countRuns())
	}

	// Fixed: the next Provision runs it again, succeeds and clears the note.
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := e.m.Provision(ctx, tk)
	if err != nil {
		t.Fatalf("Provision after the fix: %v", err)
	}
	if countRuns() != 3 {
		t.Errorf("setup ran %d times, want 3", countRuns())
	}
	if w.Note != "" || e.record(tk.ID).Note != "" || w.Path != path {
		t.Errorf("after the fix: returned %+v, stored note %q", w, e.record(tk.ID).Note)
	}
	// And does not run again once it succeeded.
	e.provision(tk)
	if countRuns() != 3 {
		t.Errorf("setup ran %d times after succeeding, want 3", countRuns())
	}
	if ws := wtWorktrees(t, repo); len(ws) != 2 {
		t.Errorf("worktrees %+v", ws)
	}
}

// TestProvisionRefusals: what a worktree cannot be made for is refused
// with a clear error, and nothing is made.
func TestProvisionRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		cfg   worktree.Config
		setup func(t *testing.T) (dir, repo string) // task's Repo; the repository to check ("" for none)
		want  []string
		is    error
	}{{
		name: "no main and detached HEAD",
		setup: func(t *testing.T) (string, string) {
			repo := wtRepo(t, "trunk", nil)
			wtCommit(t, repo, "second", nil)
			wtGit(t, repo, "switch", "-q", "--detach", "HEAD~1")
			return repo, repo
		},
		want: []string{"no main branch", "HEAD is not on a branch", "worktree.base"},
	}, {
		name: "configured base missing",
		cfg:  worktree.Config{Base: "nope"},
		setup: func(t *testing.T) (string, string) {
			repo := wtRepo(t, "main", nil)
			return repo, repo
		},
		want: []string{`no branch "nope"`, "worktree.base"},
	}, {
		name: "bare repository",
		setup: func(t *testing.T) (string, string) {
			src := wtRepo(t, "main", nil)
			bare := filepath.Join(wtReal(t, t.TempDir()), "bare.git")
			wtGit(t, filepath.Dir(bare), "clone", "-q", "--bare", src, bare)
			return bare, ""
		},
		want: []string{"bare repository"},
		is:   git.ErrBare,
	}, {
		name: "submodules",
		setup: func(t *testing.T) (string, string) {
			repo := wtRepo(t, "main", map[string]string{
				".gitmodules": "[submodule \"lib\"]\n\tpath = lib\n\turl = https://example.com/lib.git\n",
			})
			return repo, repo
		},
		want: []string{".gitmodules", "submodules"},
	}, {
		name: "not a repository",
		setup: func(t *testing.T) (string, string) {
			dir := filepath.Join(wtReal(t, t.TempDir()), "plain")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			return dir, ""
		},
		want: []string{"not inside a git repository"},
	}, {
		name:  "no repository",
		setup: func(t *testing.T) (string, string) { return "", "" },
		want:  []string{"no repository", "--repo"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := wtNewEnv(t, c.cfg)
			dir, repo := c.setup(t)
			var before []byte
			if repo != "" {
				before = wtSnapshot(t, repo)
			}
			tk := e.task(dir)
			w, err := e.m.Provision(context.Background(), tk)
			if err == nil {
				t.Fatalf("Provision succeeded: %+v", w)
			}
			for _, s := range c.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
			e.nothingFor(tk.ID, repo)
			if repo != "" {
				if after := wtSnapshot(t, repo); !bytes.Equal(before, after) {
					t.Errorf("repository changed:\n%s\nwas\n%s", after, before)
				}
			}
			if dir != "" {
				if wtExists(filepath.Join(filepath.Dir(dir), ".neuraphage-worktrees")) {
					t.Error("a worktree root was made")
				}
			}
		})
	}
}

// wtSnapshot returns what a repository's refs, HEAD, status and worktrees
// are, to compare before and after.
func wtSnapshot(t *testing.T, repo string) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(wtGit(t, repo, "for-each-ref", "--format=%(refname) %(objectname)"))
	b.WriteString("\nHEAD " + wtGit(t, repo, "rev-parse", "HEAD") + "\n")
	b.WriteString(wtGit(t, repo, "status", "--porcelain=v1", "--untracked-files=all", "--ignored"))
	b.WriteString("\n" + wtGit(t, repo, "worktree", "list", "--porcelain"))
	return b.Bytes()
}

func TestProvisionDirtyMainCheckout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", map[string]string{"a.txt": "committed a\n", "b.txt": "committed b\n", "c.txt": "committed c\n"})
	base := wtRev(t, repo, "HEAD")
	// Unstaged, staged, untracked, deleted: the user's work in progress.
	wtWrite(t, repo, "a.txt", "user's unstaged edit\n")
	wtWrite(t, repo, "b.txt", "user's staged edit\n")
	wtGit(t, repo, "add", "b.txt")
	wtWrite(t, repo, "new.txt", "user's untracked file\n")
	if err := os.Remove(filepath.Join(repo, "c.txt")); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range []string{"a.txt", "b.txt", "new.txt", ".git/index"} {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
	}
	status := wtGit(t, repo, "status", "--porcelain=v1", "--untracked-files=all")
	diff := wtGit(t, repo, "diff")
	cached := wtGit(t, repo, "diff", "--cached")

	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	w := e.provision(tk)

	if w.BaseCommit != base || wtRev(t, w.Path, "HEAD") != base {
		t.Errorf("worktree not at the committed base %s: %+v", base, w)
	}
	for f, want := range map[string]string{"a.txt": "committed a\n", "b.txt": "committed b\n", "c.txt": "committed c\n"} {
		if got := wtRead(t, w.Path, f); got != want {
			t.Errorf("worktree %s = %q, want the committed %q", f, got, want)
		}
	}
	if wtExists(filepath.Join(w.Path, "new.txt")) {
		t.Error("the user's untracked file is in the worktree")
	}
	if st, err := git.WorkStatus(ctx, w.Path); err != nil || !st.Clean() {
		t.Errorf("worktree status %+v, %v", st, err)
	}
	for f, want := range files {
		got, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("main checkout %s changed (%v)", f, err)
		}
	}
	if wtExists(filepath.Join(repo, "c.txt")) {
		t.Error("the user's deleted c.txt came back")
	}
	if got := wtGit(t, repo, "status", "--porcelain=v1", "--untracked-files=all"); got != status {
		t.Errorf("main status\n%s\nwas\n%s", got, status)
	}
	if wtGit(t, repo, "diff") != diff || wtGit(t, repo, "diff", "--cached") != cached {
		t.Error("main checkout's diff changed")
	}
	if s := wtGit(t, repo, "stash", "list"); s != "" {
		t.Errorf("stash: %q", s)
	}
}

// TestProvisionNoGit: git missing from PATH is an error naming it, and
// nothing is recorded. It changes PATH: not parallel.
func TestProvisionNoGit(t *testing.T) {
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{})
	tk := e.task(repo)
	before := wtSnapshot(t, repo)
	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir())
	_, err := e.m.Provision(context.Background(), tk)
	t.Setenv("PATH", path)
	if err == nil {
		t.Fatal("Provision without git succeeded")
	}
	if !errors.Is(err, git.ErrNoGit) || !strings.Contains(err.Error(), "git is not installed or not in PATH") {
		t.Errorf("error %v, want git.ErrNoGit", err)
	}
	e.nothingFor(tk.ID, repo)
	if after := wtSnapshot(t, repo); !bytes.Equal(before, after) {
		t.Errorf("repository changed:\n%s\nwas\n%s", after, before)
	}
	// With git back it works.
	e.provision(tk)
}

func TestProvisionTargetExists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{PortEnv: "PORT"})
	tk := e.task(repo)
	path := wtDefaultPath(repo, tk.ID)
	wtWrite(t, path, "mine.txt", "the user's own file\n")
	before := wtSnapshot(t, repo)

	_, err := e.m.Provision(ctx, tk)
	if err == nil {
		t.Fatal("Provision over an existing directory succeeded")
	}
	for _, want := range []string{path, "already exists", "nothing was changed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if got := wtRead(t, path, "mine.txt"); got != "the user's own file\n" {
		t.Errorf("user's file = %q", got)
	}
	if ents, _ := os.ReadDir(path); len(ents) != 1 {
		t.Errorf("directory now holds %v", ents)
	}
	if w, err := e.st.GetWorktree(ctx, tk.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("record %+v, %v", w, err)
	}
	if wtRev(t, repo, "refs/heads/"+worktree.Branch(tk.ID)) != "" {
		t.Error("branch made")
	}
	if after := wtSnapshot(t, repo); !bytes.Equal(before, after) {
		t.Errorf("repository changed:\n%s\nwas\n%s", after, before)
	}
	// A file in the way is refused the same way.
	tk2 := e.task(repo)
	wtWrite(t, filepath.Dir(path), string(tk2.ID), "a file\n")
	if _, err := e.m.Provision(ctx, tk2); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Provision over a file: %v", err)
	}
	if got := wtRead(t, filepath.Dir(path), string(tk2.ID)); got != "a file\n" {
		t.Errorf("file in the way = %q", got)
	}
}

// TestProvisionConcurrent: ten tasks provisioned at once in one repository
// all get their worktrees (git's locks are serialized), with distinct
// ports; and one task provisioned five times at once gets one worktree.
func TestProvisionConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	base := wtRev(t, repo, "HEAD")
	e := wtNewEnv(t, worktree.Config{PortEnv: "PORT", Bootstrap: func(string) worktree.Bootstrap {
		return worktree.Bootstrap{Setup: "true"}
	}})
	tasks := make([]task.Task, 10)
	for i := range tasks {
		tasks[i] = e.task(repo)
	}
	res := make([]store.Worktree, len(tasks))
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, tk := range tasks {
		wg.Go(func() { res[i], errs[i] = e.m.Provision(ctx, tk) })
	}
	wg.Wait()
	ports := map[int]bool{}
	for i, tk := range tasks {
		if errs[i] != nil {
			t.Errorf("Provision(%s): %v", tk.ID, errs[i])
			continue
		}
		w := res[i]
		if w.Path != wtDefaultPath(repo, tk.ID) || wtRev(t, w.Path, "HEAD") != base {
			t.Errorf("%s: %+v", tk.ID, w)
		}
		if ports[w.Port] {
			t.Errorf("port %d handed twice", w.Port)
		}
		ports[w.Port] = true
	}
	if list := wtWorktrees(t, repo); len(list) != 11 {
		t.Errorf("%d worktrees, want 11", len(list))
	}
	if ws, _ := e.st.ListWorktrees(ctx, repo); len(ws) != 10 {
		t.Errorf("%d records, want 10", len(ws))
	}

	tk := e.task(repo)
	same := make([]store.Worktree, 5)
	for i := range same {
		wg.Go(func() {
			var err error
			if same[i], err = e.m.Provision(ctx, tk); err != nil {
				t.Errorf("Provision: %v", err)
			}
		})
	}
	wg.Wait()
	for _, w := range same[1:] {
		if w != same[0] {
			t.Errorf("concurrent Provisions of one task disagree: %+v vs %+v", w, same[0])
		}
	}
	if evs := e.events(tk.ID, string(event.KindWorktreeCreated)); len(evs) != 1 {
		t.Errorf("%d worktree.created events for one task", len(evs))
	}
}

func TestProvisionSetupTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := wtRepo(t, "main", nil)
	e := wtNewEnv(t, worktree.Config{Bootstrap: func(string) worktree.Bootstrap {
		return worktree.Bootstrap{Setup: "sleep 30", SetupTimeout: 300 * time.Millisecond}
	}})
	tk := e.task(repo)
	start := time.Now()
	_, err := e.m.Provision(ctx, tk)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("Provision with a hanging setup: %v", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s", d)
	}
	if n := e.record(tk.ID).Note; !strings.HasPrefix(n, "setup failed: ") || !strings.Contains(n, "timed out") {
		t.Errorf("note %q", n)
	}
	if !wtExists(wtDefaultPath(repo, tk.ID)) {
		t.Error("worktree not kept")
	}
}
