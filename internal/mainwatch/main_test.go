package mainwatch

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git/gittest"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

func TestMain(m *testing.M) {
	gittest.Isolate()
	os.Exit(m.Run())
}

// mwEnv is a real store, a real repository with a main branch, a worktree
// manager and a watcher whose notices are collected.
type mwEnv struct {
	t    testing.TB
	st   *sqlite.Store
	wt   *worktree.Manager
	w    *Monitor
	repo string

	mu      sync.Mutex
	clock   time.Time // zero: the real clock
	notices []inject.Injection
	got     chan inject.Injection
	failFor map[task.ID]error
	// publish, when set, hears every batch of events the store commits.
	publish func(evs []event.Event)
}

func newWatchEnv(t testing.TB, cfg Config) *mwEnv {
	t.Helper()
	e := &mwEnv{t: t, got: make(chan inject.Injection, 1024), failFor: map[task.ID]error{}}
	e.st = testkit.OpenStore(t, sqlite.Options{Publish: func(evs ...event.Event) {
		e.mu.Lock()
		f := e.publish
		e.mu.Unlock()
		if f != nil {
			f(evs)
		}
	}})
	e.repo = filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(e.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	e.git(e.repo, "init", "-q", "-b", "main")
	e.commit(e.repo, "initial", map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	e.wt = worktree.New(worktree.Options{Store: e.st})
	e.w = e.watcher(cfg)
	return e
}

// watcher returns a new watcher on the env's store (a restarted daemon).
func (e *mwEnv) watcher(cfg Config) *Monitor {
	var log *slog.Logger
	if os.Getenv("MW_DEBUG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return New(Options{Store: e.st, Worktrees: e.wt, Config: cfg, Now: e.now, Logger: log,
		Inject: func(_ context.Context, n inject.Injection) error {
			e.mu.Lock()
			err := e.failFor[n.TaskID]
			if err == nil {
				e.notices = append(e.notices, n)
			}
			e.mu.Unlock()
			if err == nil {
				e.got <- n
			}
			return err
		}})
}

func (e *mwEnv) now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.clock.IsZero() {
		return time.Now()
	}
	return e.clock
}

func (e *mwEnv) setClock(t time.Time) {
	e.mu.Lock()
	e.clock = t
	e.mu.Unlock()
}

func (e *mwEnv) taken() []inject.Injection {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.notices
	e.notices = nil
	return out
}

func (e *mwEnv) git(dir string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (e *mwEnv) write(dir, rel, content string) {
	e.t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *mwEnv) read(dir, rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// commit writes files in dir and commits them; it returns the commit.
func (e *mwEnv) commit(dir, msg string, files map[string]string) string {
	e.t.Helper()
	for k, v := range files {
		e.write(dir, k, v)
	}
	e.git(dir, "add", "-A")
	e.git(dir, "commit", "-q", "-m", msg)
	return e.git(dir, "rev-parse", "HEAD")
}

// taskNoWorktree creates a task in status s without a worktree.
func (e *mwEnv) taskNoWorktree(s task.Status) (task.Task, error) {
	e.t.Helper()
	for {
		id, err := task.NewID(rand.Reader)
		if err != nil {
			e.t.Fatal(err)
		}
		tk, err := task.New(id, task.Spec{Description: "work", Priority: 2, Repo: e.repo}, time.Now())
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.st.CreateTask(context.Background(), tk); errors.Is(err, store.ErrExists) {
			continue
		} else if err != nil {
			e.t.Fatal(err)
		}
		e.setStatus(tk.ID, s)
		return tk, nil
	}
}

// task creates a task in status s (through legal moves) with a worktree,
// and records that it changed files.
func (e *mwEnv) task(s task.Status, files ...string) (task.Task, store.Worktree) {
	e.t.Helper()
	ctx := context.Background()
	var tk task.Task
	for {
		id, err := task.NewID(rand.Reader)
		if err != nil {
			e.t.Fatal(err)
		}
		tk, err = task.New(id, task.Spec{Description: "work", Priority: 2, Repo: e.repo}, time.Now())
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.st.CreateTask(ctx, tk); errors.Is(err, store.ErrExists) {
			continue
		} else if err != nil {
			e.t.Fatal(err)
		}
		break
	}
	wt, err := e.wt.Provision(ctx, tk)
	if err != nil {
		e.t.Fatal(err)
	}
	e.setStatus(tk.ID, s)
	for _, f := range files {
		e.changed(tk.ID, f)
	}
	tk, _ = e.st.GetTask(ctx, tk.ID)
	return tk, wt
}

var paths = map[task.Status][]task.Status{
	task.Queued:    nil,
	task.Running:   {task.Running},
	task.Waiting:   {task.Running, task.Waiting},
	task.Paused:    {task.Running, task.Paused},
	task.Merging:   {task.Running, task.Merging},
	task.Completed: {task.Running, task.Completed},
	task.Cancelled: {task.Cancelled},
}

func (e *mwEnv) setStatus(id task.ID, s task.Status) {
	e.t.Helper()
	cur, err := e.st.GetTask(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	if cur.Status == s {
		return
	}
	_, _, err = e.st.UpdateTask(context.Background(), id, func(tk *task.Task) ([]event.Event, error) {
		for _, st := range paths[s] {
			if err := tk.Transition(st, "test", time.Now()); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// changed records that task id changed file (a file-changed observation).
func (e *mwEnv) changed(id task.ID, file string) {
	e.t.Helper()
	if _, err := e.st.AppendEvents(context.Background(), event.New(time.Now(), id, event.FileChanged{Path: file, Op: "modified", Tool: "edit_file"})); err != nil {
		e.t.Fatal(err)
	}
}

// events returns the logged events of kind (of any task).
func (e *mwEnv) events(kind event.Kind) []event.Event {
	e.t.Helper()
	evs, err := e.st.ReadEvents(context.Background(), event.Query{Filter: event.Filter{Kinds: []string{string(kind)}}, Limit: 10000})
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

// cycle runs one notifying cycle of every repository.
func (e *mwEnv) cycle() { e.w.cycle(context.Background(), nil, false) }

func noticeIDs(ns []inject.Injection) []task.ID {
	out := make([]task.ID, len(ns))
	for i, n := range ns {
		out[i] = n.TaskID
	}
	return out
}
