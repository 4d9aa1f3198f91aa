// Package worktree gives every task its own git worktree on its own branch
// and keeps the registry of them in the store, so that they survive daemon
// restarts; it commits a finished task's work and removes worktrees only
// when no work can be lost.
//
// The rules that keep work safe:
//   - A worktree is removed only when it holds nothing uncommitted or
//     untracked and no operation in progress, and its branch's tip is either
//     on the base branch or archived. Git's own `worktree remove` (never
//     forced) checks again.
//   - A branch is deleted only after its tip is kept under
//     refs/neuraphage/archive/<task-id>, and only if it still points at that
//     tip (a compare-and-delete); Restore brings it back.
//   - Ignored files created or changed since the worktree was provisioned
//     (not build output) are copied to the task's archive directory before
//     it is removed; a failed copy keeps the worktree. Restore brings them
//     back.
//   - Nothing unknown is deleted: a worktree on a neuraphage branch that the
//     registry does not know is reported as stray and left alone; a path
//     that exists but is not the task's worktree is an error.
package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// BranchPrefix starts every task branch: "neuraphage/<task-id>/work"
// (tasks provisioned before branches had a directory each keep their
// recorded "neuraphage/<task-id>").
const BranchPrefix = "neuraphage/"

// BranchLeaf ends every task branch. Each task's branch is alone in a
// directory of its own, refs/heads/neuraphage/<task-id>/, so the sandbox
// can let a task's git update its branch (git writes <ref>.lock beside the
// ref and renames it, which needs the directory) without letting it move
// any other task's.
const BranchLeaf = "work"

// ArchivePrefix starts the refs that keep deleted branches' tips.
const ArchivePrefix = "refs/neuraphage/archive/"

// Branch returns the branch of a new worktree of task id,
// "neuraphage/<id>/work". Everything else reads the branch from the
// task's worktree record, which may hold an older name.
func Branch(id task.ID) string { return BranchPrefix + string(id) + "/" + BranchLeaf }

// ArchiveRef returns the ref that keeps the tip of task id's branch.
func ArchiveRef(id task.ID) string { return ArchivePrefix + string(id) }

// Bootstrap prepares new worktrees of a repository.
type Bootstrap struct {
	// Copy lists git-ignored files (or globs) copied from the repository's
	// main work tree into each new worktree, never over an existing file.
	Copy []string
	// Setup is a shell command run in each new worktree.
	Setup        string
	SetupTimeout time.Duration
}

// Config places worktrees and prepares them.
type Config struct {
	// Root holds the worktrees; "" means <repo>/../.neuraphage-worktrees;
	// a relative Root is relative to the repository.
	Root string
	// Base is the branch tasks start from; "" means main, or the
	// repository's default branch.
	Base string
	// PortEnv names the environment variable carrying the task's port; ""
	// hands none.
	PortEnv string
	// Bootstrap returns the bootstrap of a repository (nil: none).
	Bootstrap func(repo string) Bootstrap
	// Confine turns a worktree's setup command into its sandboxed form,
	// as the task's own commands run (nil: run as it is).
	Confine func(ctx context.Context, c proc.Cmd, w store.Worktree) (proc.Cmd, error)
	// IgnoredSkip is the build output not kept when a worktree is removed
	// (nil: DefaultIgnoredSkip); every other ignored file created or
	// changed since provisioning is kept in the task's archive.
	IgnoredSkip []string
	// AuthorName and AuthorEmail sign the commits made for tasks; empty
	// means git's configured identity, else "Neuraphage".
	AuthorName, AuthorEmail string
	// Parallel is how many worktrees are made at once (checkout,
	// bootstrap); 0 means DefaultParallel.
	Parallel int
}

// DefaultParallel is how many worktrees are made at once when the config
// does not say: four per CPU core, at least 8 (a checkout waits on the
// disk and on starting git as much as on the CPU).
func DefaultParallel() int { return max(8, 4*runtime.NumCPU()) }

// Store is the worktree records, the tasks they belong to and the events
// the Manager records and reads back.
type Store interface {
	store.Worktrees
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	UpdateTask(ctx context.Context, id task.ID, m store.Mutation) (task.Task, []event.Event, error)
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
	ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error)
}

// Options wires a Manager.
type Options struct {
	Store  Store
	Config Config
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Manager provisions, commits, removes and restores tasks' worktrees. Its
// methods are safe for concurrent use; operations on one task are
// serialized.
type Manager struct {
	st  Store
	cfg Config
	log *slog.Logger
	now func() time.Time

	// making bounds the worktrees made at once (Config.Parallel).
	making chan struct{}

	mu      sync.Mutex
	tasks   map[task.ID]*sync.Mutex // per-task operation locks
	ports   map[int]task.ID         // ports handed to active worktrees
	targets map[string]target       // by repository as tasks name it
	// flight makes the provisions of one repository running at once ask
	// git once for what does not change (target, plainRepo).
	flight singleflight.Group
	// branches creates the branches of provisions running at once in one
	// git transaction per repository.
	branches git.RefCreator
	hooks    map[string]string // hooks directories, by main work tree
	plain    map[string]bool   // no sparse checkout or worktree config set outside the repository's config file

	// stop, in tests, stops fastAdd at a step as a kill would.
	stop func(step string) bool
	// keptRound, in tests, runs after each round of keepIgnored's copies,
	// as a process still writing in the worktree would.
	keptRound func(round int)
}

// New returns a Manager.
func New(o Options) *Manager {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	n := o.Config.Parallel
	if n <= 0 {
		n = DefaultParallel()
	}
	return &Manager{
		st: o.Store, cfg: o.Config, now: o.Now,
		log:     o.Logger.With("component", "worktree"),
		making:  make(chan struct{}, n),
		tasks:   map[task.ID]*sync.Mutex{},
		ports:   map[int]task.ID{},
		targets: map[string]target{},
		hooks:   map[string]string{},
		plain:   map[string]bool{},
	}
}

// slot waits for a turn to make a worktree (Config.Parallel at once) and
// returns its release.
func (m *Manager) slot(ctx context.Context) (func(), error) {
	select {
	case m.making <- struct{}{}:
		return func() { <-m.making }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// lockTask serializes the operations on one task's worktree.
func (m *Manager) lockTask(id task.ID) func() {
	m.mu.Lock()
	l := m.tasks[id]
	if l == nil {
		l = &sync.Mutex{}
		m.tasks[id] = l
	}
	m.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// setupFailed starts the note of a worktree whose setup command failed: the
// next Provision runs it again.
const setupFailed = "setup failed: "

// Provision returns the task's worktree, creating it (and its branch) when
// it has none, recreating it when its directory is gone, and restoring it
// when it was removed. The task must name a repository.
func (m *Manager) Provision(ctx context.Context, t task.Task) (store.Worktree, error) {
	defer m.lockTask(t.ID)()
	w, err := m.st.GetWorktree(ctx, t.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if w, err = m.create(ctx, t); err == nil {
			err = m.provideObjects(w)
		}
		return w, err
	case err != nil:
		return store.Worktree{}, err
	}
	if w.State == store.WorktreeRemoved {
		if w, err = m.restore(ctx, w, "the task needs it again"); err != nil {
			return store.Worktree{}, err
		}
	} else if ok, err := m.present(ctx, w); errors.Is(err, errHalfMade) {
		if w, err = m.remake(ctx, w); err != nil {
			return store.Worktree{}, err
		}
	} else if err != nil {
		return store.Worktree{}, err
	} else if !ok && !m.everCreated(ctx, w) {
		// Its creation was cut short before anything was made.
		if w, err = m.unmade(ctx, w); err != nil {
			return store.Worktree{}, err
		}
	} else if !ok {
		if w, err = m.recreate(ctx, w, "its directory was missing"); err != nil {
			return store.Worktree{}, err
		}
	} else if t.Worktree == "" && !m.everCreated(ctx, w) {
		// git made it and the daemon died before recording it (during
		// the post-checkout hook, say): finish the creation.
		if w, err = m.finishCreate(ctx, w, m.now()); err != nil {
			return store.Worktree{}, err
		}
	}
	if strings.HasPrefix(w.Note, setupFailed) {
		if err := m.bootstrap(ctx, &w); err != nil {
			return store.Worktree{}, err
		}
	}
	if err := m.provideObjects(w); err != nil {
		return store.Worktree{}, err
	}
	m.holdPort(w)
	return w, nil
}

// Env returns the environment a task's commands get from its worktree.
func (m *Manager) Env(w store.Worktree) []string {
	if m.cfg.PortEnv == "" || w.Port == 0 {
		return nil
	}
	return []string{m.cfg.PortEnv + "=" + strconv.Itoa(w.Port)}
}

// holdPort records w's port as taken.
func (m *Manager) holdPort(w store.Worktree) {
	if w.Port == 0 {
		return
	}
	m.mu.Lock()
	m.ports[w.Port] = w.TaskID
	m.mu.Unlock()
}

// freePort finds a TCP port nothing listens on and no other worktree holds.
func (m *Manager) freePort(id task.ID) (int, error) {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		m.mu.Lock()
		owner, taken := m.ports[port]
		if !taken || owner == id {
			m.ports[port] = id
			m.mu.Unlock()
			return port, nil
		}
		m.mu.Unlock()
	}
	return 0, errors.New("finding a free port: every port tried is held by another task")
}

// root returns the directory holding the worktrees of the repository
// whose main work tree is main.
func (m *Manager) root(main string) string {
	switch {
	case m.cfg.Root == "":
		return filepath.Join(filepath.Dir(main), ".neuraphage-worktrees")
	case filepath.IsAbs(m.cfg.Root):
		return filepath.Clean(m.cfg.Root)
	}
	return filepath.Join(main, m.cfg.Root)
}

// create makes a new worktree for t. The record is written first, so that
// a daemon killed half way finds it and finishes the job.
func (m *Manager) create(ctx context.Context, t task.Task) (store.Worktree, error) {
	start := m.now()
	tg, err := m.target(ctx, t.Repo, false)
	if err != nil {
		return store.Worktree{}, err
	}
	baseCommit, err := git.BranchTip(ctx, tg.repo, tg.base)
	if errors.Is(err, git.ErrNoRef) {
		// The base branch was deleted or renamed since it was read.
		if tg, err = m.target(ctx, t.Repo, true); err != nil {
			return store.Worktree{}, err
		}
		baseCommit, err = git.BranchTip(ctx, tg.repo, tg.base)
	}
	r, base := tg.repo, tg.base
	if err != nil {
		return store.Worktree{}, fmt.Errorf("reading base branch %s: %w", base, err)
	}
	root := m.root(r.Main)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return store.Worktree{}, fmt.Errorf("creating the worktree root: %w", err)
	}
	// The physical path, as git reports it: a root reached through a
	// symbolic link must not look like someone else's directory later.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return store.Worktree{}, fmt.Errorf("resolving the worktree root: %w", err)
	}
	path := filepath.Join(root, string(t.ID))
	if _, err := os.Lstat(path); err == nil {
		return store.Worktree{}, fmt.Errorf("%s already exists and is not registered as %s's worktree; move it away (nothing was changed)", path, t.ID)
	}
	now := m.now().UTC()
	w := store.Worktree{
		TaskID: t.ID, Repo: r.Main, Branch: Branch(t.ID), Base: base, BaseCommit: baseCommit,
		Path: path, State: store.WorktreeActive, CreatedAt: now, UpdatedAt: now,
	}
	if m.cfg.PortEnv != "" {
		if w.Port, err = m.freePort(t.ID); err != nil {
			return store.Worktree{}, err
		}
	}
	if _, err := m.st.PutWorktree(ctx, w); err != nil {
		return store.Worktree{}, err
	}
	// The slot bounds the checkouts; the records after it and the
	// bootstrap (which takes a slot of its own when it has work) do not
	// hold one.
	release, err := m.slot(ctx)
	if err != nil {
		return store.Worktree{}, err
	}
	err = m.addNew(ctx, w, r, baseCommit)
	release()
	if err != nil {
		return store.Worktree{}, err
	}
	return m.finishCreate(ctx, w, start)
}

// finishCreate finishes the creation of w once git made it: the task's
// record, worktree.created (which says the creation is done), the
// bootstrap.
func (m *Manager) finishCreate(ctx context.Context, w store.Worktree, start time.Time) (store.Worktree, error) {
	t := task.Task{ID: w.TaskID}
	// The task's record and worktree.created in one commit.
	created := event.New(m.now(), t.ID, event.WorktreeCreated{
		Repo: w.Repo, Path: w.Path, Branch: w.Branch, Base: w.Base, BaseCommit: w.BaseCommit, Port: w.Port,
		DurationMs: m.now().Sub(start).Milliseconds(),
	})
	if _, _, err := m.st.UpdateTask(ctx, t.ID, func(t *task.Task) ([]event.Event, error) {
		t.Branch, t.Worktree = w.Branch, w.Path
		return []event.Event{created}, nil
	}); err != nil {
		return store.Worktree{}, err
	}
	m.log.Info("worktree created", "task_id", t.ID, "path", w.Path, "branch", w.Branch, "base", w.Base)
	if err := m.bootstrap(ctx, &w); err != nil {
		return store.Worktree{}, err
	}
	return w, nil
}

// present reports whether w's directory is a work tree of its repository.
func (m *Manager) present(ctx context.Context, w store.Worktree) (bool, error) {
	if _, err := os.Stat(w.Path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if linkedHere(w) {
		return true, nil
	}
	if gone, err := unborn(w); gone || err != nil {
		return false, err // a creation killed before git could know it
	}
	r, err := git.Inspect(ctx, w.Path)
	if err != nil {
		if errors.Is(err, git.ErrNotRepo) {
			return false, fmt.Errorf("%s exists but is not a git work tree; move it away so %s's worktree can be made again", w.Path, w.TaskID)
		}
		return false, err
	}
	if r.Top != w.Path {
		return false, fmt.Errorf("%s exists but is not a worktree of its own (it is inside %s); move it away", w.Path, r.Top)
	}
	// A worktree git never finished making (a kill during `worktree add`)
	// is locked "initializing" and misses files: taken as it is, its
	// missing files would be committed as deletions.
	list, err := git.Worktrees(ctx, w.Repo)
	if err != nil {
		return false, err
	}
	for _, wt := range list {
		if wt.Path == w.Path && wt.Locked && halfMade(w.Path) {
			return false, errHalfMade
		}
		if wt.Path == w.Path && wt.Locked {
			return false, fmt.Errorf("%s is locked by git (a worktree left half made, or locked by hand); check it, then `git worktree unlock %s` or move it away", w.Path, w.Path)
		}
	}
	return true, nil
}

// recreate makes w's worktree again from its branch, or from its archive
// ref when the branch is gone.
func (m *Manager) recreate(ctx context.Context, w store.Worktree, reason string) (store.Worktree, error) {
	from, err := m.ensureBranch(ctx, w)
	if err != nil {
		m.setNote(ctx, &w, err.Error())
		return w, err
	}
	if err := m.add(ctx, w, from); err != nil {
		return w, err
	}
	w.State, w.Note, w.UpdatedAt = store.WorktreeActive, "", m.now().UTC()
	if _, _, err := m.st.UpdateTask(ctx, w.TaskID, func(t *task.Task) ([]event.Event, error) {
		t.Branch, t.Worktree = w.Branch, w.Path
		return nil, nil
	}); err != nil {
		return w, err
	}
	if _, err := m.st.PutWorktree(ctx, w, event.New(m.now(), w.TaskID, event.WorktreeRecreated{
		Path: w.Path, Branch: w.Branch, From: from, Reason: reason,
	})); err != nil {
		return w, err
	}
	m.log.Info("worktree recreated", "task_id", w.TaskID, "path", w.Path, "from", from, "reason", reason)
	return w, nil
}

// ensureBranch makes sure w's branch exists, bringing it back from the
// archive when it does not. It returns the ref the branch came from.
func (m *Manager) ensureBranch(ctx context.Context, w store.Worktree) (string, error) {
	ok, err := git.BranchExists(ctx, w.Repo, w.Branch)
	if err != nil {
		return "", err
	}
	if ok {
		return "refs/heads/" + w.Branch, nil
	}
	archive := ArchiveRef(w.TaskID)
	tip, err := git.RevParse(ctx, w.Repo, archive)
	if err != nil {
		if w.Landed == "" && w.BaseCommit != "" && !m.everCreated(ctx, w) {
			// The creation was interrupted before the branch was made:
			// finish it from the base commit.
			if _, err := git.Run(ctx, w.Repo, "update-ref", "refs/heads/"+w.Branch, w.BaseCommit, ""); err != nil {
				return "", err
			}
			return w.BaseCommit, nil
		}
		return "", fmt.Errorf("branch %s is gone and there is no archive (%s); the task's committed work is not known to neuraphage", w.Branch, archive)
	}
	// Create only: "" as the old value refuses to overwrite a branch that
	// appeared meanwhile.
	if _, err := git.Run(ctx, w.Repo, "update-ref", "refs/heads/"+w.Branch, tip, ""); err != nil {
		return "", err
	}
	return archive, nil
}

// everCreated reports whether the log says w's worktree was ever made.
func (m *Manager) everCreated(ctx context.Context, w store.Worktree) bool {
	evs, err := m.st.ReadEvents(ctx, event.Query{Filter: event.Filter{TaskID: w.TaskID, Kinds: []string{string(event.KindWorktreeCreated)}}, Limit: 1})
	return err != nil || len(evs) > 0 // unknown: assume it was, and refuse
}

func (m *Manager) setNote(ctx context.Context, w *store.Worktree, note string) {
	if w.Note == note {
		return
	}
	w.Note, w.UpdatedAt = note, m.now().UTC()
	if _, err := m.st.PutWorktree(ctx, *w); err != nil {
		m.log.Error("recording a worktree note", "task_id", w.TaskID, "err", err)
	}
}

// emit logs a git observation of a task.
func (m *Manager) emit(ctx context.Context, id task.ID, p event.Payload) {
	if _, err := m.st.AppendEvents(ctx, event.New(m.now(), id, p)); err != nil {
		m.log.Error("recording an event", "task_id", id, "kind", p.EventKind(), "err", err)
	}
}

// Get returns a task's worktree record.
func (m *Manager) Get(ctx context.Context, id task.ID) (store.Worktree, error) {
	return m.st.GetWorktree(ctx, id)
}
