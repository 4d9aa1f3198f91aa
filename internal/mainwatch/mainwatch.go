// Package mainwatch is the MainWatcher. It notices when the main branch of
// a repository that has active tasks moves, works out in one batched pass
// which task branches fell behind (by how much, with which new commits,
// and whether a rebase would conflict), and tells those tasks through the
// executor's injection door at the configured urgency:
//
//   - fyi: a note; nothing is expected of the task.
//   - helpful: the new commits, the conflict forecast and the command; the
//     agent rebases at a convenient point.
//   - blocking: the executor rebases the branch itself at the task's next
//     tool boundary (worktree.Manager.Rebase: uncommitted work carried
//     across, everything put back on a conflict), and the task is told
//     the outcome.
//
// Main moving is seen at once through filesystem notifications on the
// repository's ref files (loose ref and packed-refs, local and
// remote-tracking), with polling at the configured interval as the
// fallback; the polling cycle also fetches the remote's copy of main. A
// landing by the merge queue is reported directly (Notify). The last
// commit seen is cached per repository in memory only: a restarted daemon
// looks again, and what it told each task before is read back from the
// event log so that nothing is repeated.
package mainwatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervisor"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// Urgency is how strongly a task is told to rebase: the urgency its
// notice carries.
type Urgency = inject.Urgency

// The urgencies.
const (
	FYI      = inject.FYI
	Helpful  = inject.Helpful
	Blocking = inject.Blocking
)

// Config configures the watcher (supervision.main_watcher).
type Config struct {
	Enabled bool
	// Interval is the polling (and fetch) interval; 0 means 30 s.
	Interval time.Duration
	// MainBranch is the branch compared against; "" means each task's
	// base branch.
	MainBranch string
	// Urgency of automatic notices; "" means helpful.
	Urgency Urgency
	// Cooldown is the least time between two notices to one task.
	Cooldown time.Duration
	// Fetch fetches Remote's copy of main every Interval.
	Fetch  bool
	Remote string
	// NotifyUnrelated also tells tasks none of whose files main changed,
	// with an fyi notice whatever Urgency says (quiet: it never interrupts
	// or wakes a task, and never rebases one).
	NotifyUnrelated bool
	// PauseOnConflict pauses a task whose blocking rebase conflicted.
	PauseOnConflict bool
	// FetchTimeout bounds one fetch; 0 means 30 s.
	FetchTimeout time.Duration
	// Debounce gathers a burst of ref changes into one check; 0 means 20 ms.
	Debounce time.Duration
}

// Store is what the Monitor reads of tasks, their worktrees and the event
// log, and the events it records.
type Store interface {
	GetTask(ctx context.Context, id task.ID) (task.Task, error)
	ListTasks(ctx context.Context, opts store.ListOptions) ([]task.Task, error)
	GetWorktree(ctx context.Context, id task.ID) (store.Worktree, error)
	ListWorktrees(ctx context.Context, repo string) ([]store.Worktree, error)
	AppendEvents(ctx context.Context, evs ...event.Event) ([]event.Event, error)
	ReadEvents(ctx context.Context, q event.Query) ([]event.Event, error)
	LastEventID(ctx context.Context) (int64, error)
}

// Options wires a Monitor.
type Options struct {
	Store     Store
	Worktrees *worktree.Manager
	Config    Config
	// Inject sends a notice (an inject.Rebase injection) through the
	// executor's one door. A blocking one is urgent; the others are quiet:
	// a task that waits for its user reads them when it next runs.
	Inject func(ctx context.Context, n inject.Injection) error
	// InjectMany sends all the notices of one move of main through the
	// same door at once: stored in one store commit, with evs (the
	// main.updated event) and each notice's events (record: its
	// rebase.required) logged in it, one publish on the bus
	// (executor.Executor.InjectMany). Nil sends them one at a time
	// through Inject, each after its own event.
	InjectMany func(ctx context.Context, injs []inject.Injection, record func(i int, stored inject.Injection) []event.Event, evs ...event.Event) ([]store.Enqueued, error)
	Logger     *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Source is the sender of the watcher's notices.
const Source = inject.FromMainWatcher

// Monitor is the main watcher (the MainWatcher). Its methods are safe for
// concurrent use; Run owns its loop.
type Monitor struct {
	st     Store
	wt     *worktree.Manager
	cfg    Config
	inject func(ctx context.Context, n inject.Injection) error
	many   func(ctx context.Context, injs []inject.Injection, record func(int, inject.Injection) []event.Event, evs ...event.Event) ([]store.Enqueued, error)
	log    *slog.Logger
	now    func() time.Time

	trigger chan string         // a repository to check now ("" for all)
	rt      *supervisor.Runtime // runs the loop, restarted after a panic

	scanMu sync.Mutex // one scan at a time (cycles, status, requests)

	mu        sync.Mutex
	mains     map[groupKey]*mainState
	tasks     map[task.ID]*TaskState
	files     map[task.ID]map[string]bool // files each task changed (file-changed observations)
	fileMark  int64                       // the last file-changed event read
	loaded    bool                        // the event log was read back
	health    Health
	watchDirs map[string]watchDir // watched directories
	fw        *fsnotify.Watcher   // the running loop's, nil when none runs or notifications are unavailable
	gitDirs   map[string]string   // each repository's common git directory
}

// groupKey is a repository and the main branch its tasks compare with.
type groupKey struct{ repo, branch string }

// mainState is what the watcher knows of one main branch.
type mainState struct {
	commit   string // last commit seen ("" before the first look)
	ref      string // what it resolved to: "main" or "origin/main"
	err      string // why it cannot be read, when it cannot
	fetchErr string // the last fetch failure (warned once)
}

// TaskState is where one task's branch stands against main.
type TaskState struct {
	TaskID task.ID     `json:"task_id"`
	Status task.Status `json:"status"`
	Repo   string      `json:"repo"`
	Branch string      `json:"branch"`
	// Main is the ref compared with ("main", "origin/main"), MainCommit
	// the commit it was at.
	Main       string `json:"main"`
	MainCommit string `json:"main_commit,omitempty"`
	Behind     int    `json:"behind"`
	Ahead      int    `json:"ahead"`
	// NewCommits are short summaries of main's newest commits the branch
	// lacks (at most five).
	NewCommits []string `json:"new_commits,omitempty"`
	// Forecast is "clean", "conflict" (Conflicts: git merge-tree of the
	// branch's commits), "overlap" (Overlap: files both main and the task
	// changed; a rebase may conflict) or "" when up to date.
	Forecast  string   `json:"forecast,omitempty"`
	Conflicts []string `json:"conflicts,omitempty"`
	Overlap   []string `json:"overlap,omitempty"`
	// State sums it up: up_to_date, behind, notified, cooldown,
	// unrelated, merging, error.
	State string `json:"state"`
	Note  string `json:"note,omitempty"`
	// LastNotice is when the task was last told (about LastNoticeMain, at
	// LastNoticeUrgency); LastRebased when Neuraphage last rebased it.
	LastNotice        *time.Time `json:"last_notice,omitempty"`
	LastNoticeMain    string     `json:"last_notice_main,omitempty"`
	LastNoticeUrgency Urgency    `json:"last_notice_urgency,omitempty"`
	LastRebased       *time.Time `json:"last_rebased,omitempty"`
	Checked           time.Time  `json:"checked"`
}

// Task states.
const (
	StateUpToDate  = "up_to_date"
	StateBehind    = "behind"
	StateNotified  = "notified"
	StateCooldown  = "cooldown"
	StateUnrelated = "unrelated"
	StateMerging   = "merging"
	StateError     = "error"
)

// Health is how the watcher itself is doing.
type Health struct {
	Enabled   bool      `json:"enabled"`
	Urgency   Urgency   `json:"urgency"`
	LastCycle time.Time `json:"last_cycle"`
	Cycles    int64     `json:"cycles"`
	Notices   int64     `json:"notices"`
	Rebases   int64     `json:"rebases"`
	Conflicts int64     `json:"conflicts"`
	// Panics counts cycles that crashed (recovered; supervision goes on).
	Panics int64 `json:"panics"`
	// Watching says whether ref changes are seen through filesystem
	// notifications (else polling only).
	Watching bool         `json:"watching"`
	Repos    []RepoStatus `json:"repos"`
}

// RepoStatus is one watched main branch.
type RepoStatus struct {
	Repo     string `json:"repo"`
	Main     string `json:"main"`
	Commit   string `json:"commit,omitempty"`
	Error    string `json:"error,omitempty"`
	FetchErr string `json:"fetch_error,omitempty"`
}

// New returns a Monitor; Run starts it.
func New(o Options) *Monitor {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &o.Config
	if c.Interval <= 0 {
		c.Interval = 30 * time.Second
	}
	if c.Urgency == "" {
		c.Urgency = Helpful
	}
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = 30 * time.Second
	}
	if c.Debounce <= 0 {
		c.Debounce = 20 * time.Millisecond
	}
	log := o.Logger.With("component", "mainwatch")
	w := &Monitor{
		st: o.Store, wt: o.Worktrees, cfg: o.Config, inject: o.Inject, many: o.InjectMany, now: o.Now,
		log:       log,
		rt:        supervisor.New(supervisor.Options{Name: "the main watcher", Logger: log, Now: o.Now}),
		trigger:   make(chan string, 64),
		mains:     map[groupKey]*mainState{},
		tasks:     map[task.ID]*TaskState{},
		files:     map[task.ID]map[string]bool{},
		watchDirs: map[string]watchDir{},
		gitDirs:   map[string]string{},
	}
	w.health.Enabled, w.health.Urgency = o.Config.Enabled, o.Config.Urgency
	return w
}

// Notify tells the watcher that main may have moved in repo (the merge
// queue landed work there): it looks at once.
func (w *Monitor) Notify(repo string) {
	select {
	case w.trigger <- repo:
	default: // checks are already waiting; one of them covers it
	}
}

// activeStatuses are the statuses of tasks whose branches are watched.
var activeStatuses = []task.Status{task.Queued, task.Running, task.Waiting, task.Paused, task.Merging}

// entry is one task whose branch is compared with main.
type entry struct {
	w      store.Worktree
	status task.Status
}

// groups lists the active tasks with worktrees, by repository and main
// branch.
func (w *Monitor) groups(ctx context.Context) (map[groupKey][]entry, error) {
	ts, err := w.st.ListTasks(ctx, store.ListOptions{Statuses: activeStatuses})
	if err != nil {
		return nil, err
	}
	status := make(map[task.ID]task.Status, len(ts))
	for _, t := range ts {
		status[t.ID] = t.Status
	}
	wts, err := w.st.ListWorktrees(ctx, "")
	if err != nil {
		return nil, err
	}
	out := map[groupKey][]entry{}
	for _, wt := range wts {
		s, ok := status[wt.TaskID]
		if !ok || wt.State != store.WorktreeActive || wt.Landed != "" {
			continue
		}
		k := groupKey{repo: wt.Repo, branch: cmp.Or(w.cfg.MainBranch, wt.Base)}
		out[k] = append(out[k], entry{w: wt, status: s})
	}
	for _, es := range out {
		slices.SortFunc(es, func(a, b entry) int { return strings.Compare(string(a.w.TaskID), string(b.w.TaskID)) })
	}
	return out, nil
}

// resolveMain reads the commit main is at for k: the local branch, or the
// remote's copy when it is ahead of it (fetched work not yet pulled).
func (w *Monitor) resolveMain(ctx context.Context, k groupKey) (commit, ref string, err error) {
	local, lerr := git.RevParse(ctx, k.repo, "refs/heads/"+k.branch)
	if lerr != nil && !errors.Is(lerr, git.ErrNoRef) {
		return "", "", lerr
	}
	remote := ""
	if w.cfg.Remote != "" {
		if r, err := git.RevParse(ctx, k.repo, "refs/remotes/"+w.cfg.Remote+"/"+k.branch); err == nil {
			remote = r
		}
	}
	switch {
	case local == "" && remote == "":
		return "", "", fmt.Errorf("%s has no branch %s; set supervision.main_watcher.main_branch", k.repo, k.branch)
	case remote == "" || remote == local:
		return local, k.branch, nil
	case local == "":
		return remote, w.cfg.Remote + "/" + k.branch, nil
	}
	if ok, err := git.IsAncestor(ctx, k.repo, local, remote); err == nil && ok {
		return remote, w.cfg.Remote + "/" + k.branch, nil
	}
	return local, k.branch, nil
}

// fetch refreshes the remote's copy of main, tolerating being offline: a
// failure skips it for this cycle and is logged once until it succeeds.
func (w *Monitor) fetch(ctx context.Context, k groupKey) {
	if !w.cfg.Fetch || w.cfg.Remote == "" {
		return
	}
	if _, err := git.Run(ctx, k.repo, "remote", "get-url", w.cfg.Remote); err != nil {
		return // a local-only repository
	}
	fctx, cancel := context.WithTimeout(ctx, w.cfg.FetchTimeout)
	defer cancel()
	_, err := git.RunEnv(fctx, k.repo, []string{"GIT_TERMINAL_PROMPT=0", "GIT_SSH_COMMAND=ssh -o BatchMode=yes"},
		"fetch", "--quiet", "--no-tags", "--no-recurse-submodules", w.cfg.Remote,
		"+refs/heads/"+k.branch+":refs/remotes/"+w.cfg.Remote+"/"+k.branch)
	w.mu.Lock()
	defer w.mu.Unlock()
	ms := w.main(k)
	switch {
	case err != nil && ms.fetchErr == "":
		ms.fetchErr = errDetail(err)
		w.log.Warn("fetching main failed; skipping it until it works again (offline?)", "repo", k.repo, "remote", w.cfg.Remote, "err", ms.fetchErr)
	case err == nil && ms.fetchErr != "":
		ms.fetchErr = ""
		w.log.Info("fetching main works again", "repo", k.repo, "remote", w.cfg.Remote)
	}
}

// main returns the state of k's main branch; w.mu is held.
func (w *Monitor) main(k groupKey) *mainState {
	ms := w.mains[k]
	if ms == nil {
		ms = &mainState{}
		w.mains[k] = ms
	}
	return ms
}

// errDetail is the last line git said about err.
func errDetail(err error) string {
	msg := git.Stderr(err)
	return msg[strings.LastIndex(msg, "\n")+1:]
}

// Health returns how the watcher is doing and the main branches it knows.
func (w *Monitor) Health() Health {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.health
	h.Repos = nil
	for k, ms := range w.mains {
		h.Repos = append(h.Repos, RepoStatus{Repo: k.repo, Main: cmp.Or(ms.ref, k.branch), Commit: ms.commit, Error: ms.err, FetchErr: ms.fetchErr})
	}
	slices.SortFunc(h.Repos, func(a, b RepoStatus) int {
		return cmp.Or(strings.Compare(a.Repo, b.Repo), strings.Compare(a.Main, b.Main))
	})
	return h
}

// summaries returns "abc1234 subject" for the first n of ids.
func summaries(g *git.Graph, ids []string, n int) []string {
	var out []string
	for _, id := range ids[:min(n, len(ids))] {
		c := g.Commits[id]
		out = append(out, words.ShortCommit(id)+" "+c.Subject)
	}
	return out
}

// intersect returns the sorted files in both a (sorted) and b.
func intersect(a []string, b map[string]bool) []string {
	var out []string
	for _, f := range a {
		if b[f] {
			out = append(out, f)
		}
	}
	return out
}

// plural returns "n thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// dirOf returns the directory holding ref file name under base.
func dirOf(base, name string) (dir, leaf string) {
	p := filepath.Join(base, filepath.FromSlash(name))
	return filepath.Dir(p), filepath.Base(p)
}
