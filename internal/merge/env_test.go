package merge_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git/gittest"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// TestMain isolates git from the machine's configuration and from any
// repository above the temporary directory, and gives commits an author.
func TestMain(m *testing.M) {
	gittest.Isolate()
	if db := os.Getenv(childDaemonEnv); db != "" {
		runChildDaemon(db) // never returns: it is killed
	}
	os.Exit(m.Run())
}

// injection is one call of the fake injector.
type injection struct {
	Task  task.ID
	Kind  string
	Text  string
	Attrs map[string]string
}

// injector records what the queue sends tasks.
type injector struct {
	mu    sync.Mutex
	calls []injection
}

func (i *injector) inject(_ context.Context, inj inject.Injection) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if inj.Source != inject.FromMergeQueue {
		return fmt.Errorf("injection from %q, want the merge queue", inj.Source)
	}
	i.calls = append(i.calls, injection{Task: inj.TaskID, Kind: string(inj.Kind), Text: inj.Text, Attrs: inj.Attrs})
	return nil
}

// await waits until the queue has told task id something (an entry's
// state is stored before its task is told) and returns what it was told.
func (i *injector) await(t *testing.T, id task.ID) []injection {
	t.Helper()
	testkit.WaitFor(t, "the task to be told", func() bool { return len(i.forTask(id)) > 0 })
	return i.forTask(id)
}

func (i *injector) forTask(id task.ID) []injection {
	i.mu.Lock()
	defer i.mu.Unlock()
	var out []injection
	for _, c := range i.calls {
		if c.Task == id {
			out = append(out, c)
		}
	}
	return out
}

// syncBuffer collects the components' logs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// env is a real store, a real repository with main checked out in its
// directory (the user's checkout), a worktree manager and a queue.
type env struct {
	t    testing.TB
	ctx  context.Context
	st   store.Store
	repo string // the user's checkout of main
	wt   *worktree.Manager
	q    *merge.Queue
	inj  *injector
	opts merge.Options
	logs *syncBuffer

	cancel context.CancelFunc
	done   chan error
}

type envOption func(*merge.Options)

func withLookPath(f func(string) (string, error)) envOption {
	return func(o *merge.Options) { o.LookPath = f }
}

// withStore wraps the whole store the environment uses (queue, worktree
// manager and the test itself): newEnv hands the options a store.Store.
func withStore(wrap func(store.Store) store.Store) envOption {
	return func(o *merge.Options) { o.Store = wrap(o.Store.(store.Store)) }
}

// newMergeEnv makes the environment; the queue is not running (start runs it).
func newMergeEnv(t testing.TB, cfg merge.Config, opts ...envOption) *env {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := testkit.OpenStore(t, sqlite.Options{})
	repo := filepath.Join(tmp, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: context.Background(), st: st, repo: repo, inj: &injector{}}
	e.git(repo, "-c", "init.defaultBranch=main", "init", "-q")
	e.write(repo, "README", "readme\n")
	e.write(repo, "shared.txt", "line 1\nline 2\nline 3\n")
	e.write(repo, ".gitignore", "*.log\n")
	e.git(repo, "add", "-A")
	e.git(repo, "commit", "-q", "-m", "initial")
	if cfg.Retry == 0 {
		cfg.Retry = 50 * time.Millisecond
	}
	e.logs = &syncBuffer{}
	e.opts = merge.Options{Store: st, Config: cfg, Inject: e.inj.inject, Logger: slog.New(slog.NewTextHandler(e.logs, nil))}
	for _, o := range opts {
		o(&e.opts)
	}
	e.st = e.opts.Store.(store.Store)
	e.newQueue()
	t.Cleanup(e.stop)
	return e
}

// newQueue makes a new worktree manager and queue on the same store, as a
// restarted daemon does.
func (e *env) newQueue() {
	e.wt = worktree.New(worktree.Options{Store: e.st, Logger: e.opts.Logger})
	o := e.opts
	o.Worktrees = e.wt
	e.q = merge.New(o)
}

// start runs the queue until stop.
func (e *env) start() {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan error, 1)
	q := e.q
	go func() { e.done <- q.Run(ctx) }()
}

// stop stops the queue and waits for it.
func (e *env) stop() {
	if e.cancel == nil {
		return
	}
	e.cancel()
	if err := <-e.done; err != nil {
		e.t.Errorf("queue Run: %v", err)
	}
	e.cancel = nil
}

// restart is a daemon kill and start: new manager and queue on the store.
func (e *env) restart() {
	e.stop()
	e.newQueue()
	if _, err := e.wt.Reconcile(e.ctx); err != nil {
		e.t.Fatalf("reconcile: %v", err)
	}
	e.start()
}

// gitTry runs git as another process would (the user, the agent),
// retrying briefly while the daemon holds a lock.
func gitTry(dir string, args ...string) (string, error) {
	for attempt := 0; ; attempt++ {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil {
			return string(out), nil
		}
		if attempt < 40 && strings.Contains(stderr.String(), ".lock") {
			time.Sleep(25 * time.Millisecond)
			continue
		}
		return string(out), fmt.Errorf("git %s (in %s): %v: %s", strings.Join(args, " "), dir, err, stderr.String())
	}
}

func (e *env) git(dir string, args ...string) string {
	e.t.Helper()
	out, err := gitTry(dir, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

func (e *env) rev(dir, rev string) string {
	e.t.Helper()
	return e.git(dir, "rev-parse", "--verify", rev)
}

func (e *env) write(dir, path, content string) {
	e.t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(dir, path string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// commitOn commits files on the branch checked out in dir.
func (e *env) commitOn(dir, msg string, files map[string]string) string {
	e.t.Helper()
	for _, p := range slices.Sorted(mapsKeys(files)) {
		e.write(dir, p, files[p])
		e.git(dir, "add", "--", p)
	}
	e.git(dir, "commit", "-q", "-m", msg)
	return e.rev(dir, "HEAD")
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// newTask creates a task on the repository, moves it to running and
// provisions its worktree, as the executor does.
func (e *env) newTask(desc string) (task.Task, store.Worktree) {
	e.t.Helper()
	return e.newTaskID(newID(e.t), desc)
}

func newID(t testing.TB) task.ID {
	id, err := task.NewID(crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (e *env) newTaskID(id task.ID, desc string) (task.Task, store.Worktree) {
	e.t.Helper()
	tk, err := task.New(id, task.Spec{Description: desc, Priority: 2, Repo: e.repo}, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.st.CreateTask(e.ctx, tk); err != nil {
		e.t.Fatal(err)
	}
	e.move(id, task.Running)
	w, err := e.wt.Provision(e.ctx, e.task(id))
	if err != nil {
		e.t.Fatal(err)
	}
	return e.task(id), w
}

func (e *env) move(id task.ID, to task.Status) {
	e.t.Helper()
	if _, _, err := e.st.UpdateTask(e.ctx, id, store.Transition(to, "test", time.Now())); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) task(id task.ID) task.Task {
	e.t.Helper()
	tk, err := e.st.GetTask(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return tk
}

func (e *env) complete(id task.ID, summary string) {
	e.t.Helper()
	if !e.q.Complete(e.ctx, id, summary, true) {
		e.t.Fatalf("Complete(%s) = false: no worktree", id)
	}
}

// entries returns the task's entries, oldest first.
func (e *env) entries(id task.ID) []store.MergeEntry {
	e.t.Helper()
	es, err := e.st.ListMerges(e.ctx, store.MergeQuery{TaskID: id})
	if err != nil {
		e.t.Fatal(err)
	}
	return es
}

const waitFor = 30 * time.Second

// waitEntry waits until the task's newest entry satisfies ok.
func (e *env) waitEntry(id task.ID, what string, ok func(store.MergeEntry) bool) store.MergeEntry {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		es := e.entries(id)
		if len(es) > 0 && ok(es[len(es)-1]) {
			return es[len(es)-1]
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s: no entry %s; entries: %+v\nlogs:\n%s", id, what, es, e.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) waitState(id task.ID, s store.MergeState) store.MergeEntry {
	e.t.Helper()
	return e.waitEntry(id, "in state "+string(s), func(m store.MergeEntry) bool { return m.State == s })
}

func (e *env) waitTask(id task.ID, s task.Status) task.Task {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		tk := e.task(id)
		if tk.Status == s {
			return tk
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s is %s (%s), want %s; entries %+v", id, tk.Status, tk.CloseReason, s, e.entries(id))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) waitWorktree(id task.ID, s store.WorktreeState) store.Worktree {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		w, err := e.st.GetWorktree(e.ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if w.State == s {
			return w
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("worktree of %s is %s (%s), want %s", id, w.State, w.Note, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kinds returns the kinds of the task's logged events.
func (e *env) kinds(id task.ID) []string {
	e.t.Helper()
	evs, err := e.st.ReadEvents(e.ctx, event.Query{Filter: event.Filter{TaskID: id}})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Kind))
	}
	return out
}

// status is `git status --porcelain` of dir.
func (e *env) status(dir string) string {
	e.t.Helper()
	return e.git(dir, "status", "--porcelain", "--untracked-files=all")
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, os.ErrNotExist)
}

type evt = event.Event
