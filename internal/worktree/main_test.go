package worktree_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/git/gittest"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

func TestMain(m *testing.M) {
	gittest.Isolate()
	code := m.Run()
	benchCleanup()
	os.Exit(code)
}

// The helpers of the package's tests are prefixed "wt" so that they do not
// collide with those of other test files.

// wtEnv is a real sqlite store and a Manager on it.
type wtEnv struct {
	t  *testing.T
	st *sqlite.Store
	m  *worktree.Manager

	mu        sync.Mutex
	published []event.Event
}

// wtNewEnv opens a store in a temporary directory and a Manager with cfg.
func wtNewEnv(t *testing.T, cfg worktree.Config) *wtEnv {
	t.Helper()
	e := &wtEnv{t: t}
	st := testkit.OpenStore(t, sqlite.Options{
		Publish: func(evs ...event.Event) {
			e.mu.Lock()
			e.published = append(e.published, evs...)
			e.mu.Unlock()
		},
	})
	e.st = st
	e.m = worktree.New(worktree.Options{Store: st, Config: cfg})
	return e
}

// manager returns another Manager on the same store: the daemon restarted.
func (e *wtEnv) manager(cfg worktree.Config) *worktree.Manager {
	return worktree.New(worktree.Options{Store: e.st, Config: cfg})
}

// task creates a task of repo in the store.
func (e *wtEnv) task(repo string) task.Task {
	e.t.Helper()
	for {
		id, err := task.NewID(rand.Reader)
		if err != nil {
			e.t.Fatal(err)
		}
		tk, err := task.New(id, task.Spec{Description: "work in " + repo, Priority: 2, Repo: repo}, time.Now())
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.st.CreateTask(context.Background(), tk); errors.Is(err, store.ErrExists) {
			continue
		} else if err != nil {
			e.t.Fatal(err)
		}
		return tk
	}
}

// getTask reads a task back.
func (e *wtEnv) getTask(id task.ID) task.Task {
	e.t.Helper()
	tk, err := e.st.GetTask(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return tk
}

// setStatus moves a task through legal transitions to status s.
func (e *wtEnv) setStatus(id task.ID, path ...task.Status) {
	e.t.Helper()
	_, _, err := e.st.UpdateTask(context.Background(), id, func(tk *task.Task) ([]event.Event, error) {
		for _, s := range path {
			if err := tk.Transition(s, "test", time.Now()); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// record returns a task's worktree record.
func (e *wtEnv) record(id task.ID) store.Worktree {
	e.t.Helper()
	w, err := e.st.GetWorktree(context.Background(), id)
	if err != nil {
		e.t.Fatalf("GetWorktree(%s): %v", id, err)
	}
	return w
}

// events returns the logged events of kind (a pattern) about task id (""
// for any task).
func (e *wtEnv) events(id task.ID, kind string) []event.Event {
	e.t.Helper()
	evs, err := e.st.ReadEvents(context.Background(), event.Query{Filter: event.Filter{TaskID: id, Kinds: []string{kind}}})
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

// provision provisions tk's worktree and fails the test on an error.
func (e *wtEnv) provision(tk task.Task) store.Worktree {
	e.t.Helper()
	w, err := e.m.Provision(context.Background(), tk)
	if err != nil {
		e.t.Fatalf("Provision(%s): %v", tk.ID, err)
	}
	return w
}

// noRecord checks that id has no worktree record and no branch or worktree
// was made for it in repo (repo "" skips the git checks).
func (e *wtEnv) nothingFor(id task.ID, repo string) {
	e.t.Helper()
	if w, err := e.st.GetWorktree(context.Background(), id); !errors.Is(err, store.ErrNotFound) {
		e.t.Errorf("GetWorktree(%s) = %+v, %v; want ErrNotFound", id, w, err)
	}
	if tk := e.getTask(id); tk.Branch != "" || tk.Worktree != "" {
		e.t.Errorf("task %s got branch %q, worktree %q; want none", id, tk.Branch, tk.Worktree)
	}
	if ws, _ := e.st.ListWorktrees(context.Background(), ""); len(ws) != 0 {
		e.t.Errorf("registry holds %+v; want nothing", ws)
	}
	if repo == "" {
		return
	}
	if refs := wtGit(e.t, repo, "for-each-ref", "--format=%(refname)", "refs/heads/neuraphage/", "refs/neuraphage/"); refs != "" {
		e.t.Errorf("refs made: %q", refs)
	}
	if list := wtWorktrees(e.t, repo); len(list) != 1 {
		e.t.Errorf("worktrees of %s: %+v; want the main one only", repo, list)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(repo), ".neuraphage-worktrees")); !errors.Is(err, os.ErrNotExist) {
		e.t.Errorf("worktree root made next to %s (Lstat: %v)", repo, err)
	}
}

// wtReal resolves symbolic links in p (git reports physical paths).
func wtReal(t testing.TB, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(r)
}

// wtGit runs git in dir and returns its trimmed output.
func wtGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := git.Run(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// wtGitEnv is wtGit with extra environment.
func wtGitEnv(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := git.RunEnv(context.Background(), dir, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// wtWrite writes content to dir/rel, making the directories.
func wtWrite(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wtRead returns the content of dir/rel.
func wtRead(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wtRepo makes a repository in a fresh temporary subdirectory (so that the
// default worktree root, its sibling, is inside the temporary directory too)
// on branch with files committed, and returns its physical path.
func wtRepo(t *testing.T, branch string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(wtReal(t, t.TempDir()), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	wtGit(t, dir, "-c", "init.defaultBranch="+branch, "init", "-q")
	if files == nil {
		files = map[string]string{"README.md": "hello\n"}
	}
	wtCommit(t, dir, "initial", files)
	return dir
}

// wtCommit writes files in dir and commits everything, returning the commit.
func wtCommit(t testing.TB, dir, msg string, files map[string]string) string {
	t.Helper()
	for rel, content := range files {
		wtWrite(t, dir, rel, content)
	}
	wtGit(t, dir, "add", "-A")
	wtGit(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return wtGit(t, dir, "rev-parse", "HEAD")
}

// wtRev returns the commit rev names in dir, "" when there is none.
func wtRev(t testing.TB, dir, rev string) string {
	t.Helper()
	c, err := git.RevParse(context.Background(), dir, rev)
	if errors.Is(err, git.ErrNoRef) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wtWorktrees lists the worktrees of the repository dir is in.
func wtWorktrees(t testing.TB, dir string) []git.WorktreeInfo {
	t.Helper()
	list, err := git.Worktrees(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// wtHasWorktree reports whether git lists a worktree at path.
func wtHasWorktree(t testing.TB, repo, path string) bool {
	t.Helper()
	return slices.ContainsFunc(wtWorktrees(t, repo), func(w git.WorktreeInfo) bool { return w.Path == path })
}

// wtExists reports whether p exists.
func wtExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// wtDefaultPath is where a task's worktree goes by default.
func wtDefaultPath(repo string, id task.ID) string {
	return filepath.Join(filepath.Dir(repo), ".neuraphage-worktrees", string(id))
}
