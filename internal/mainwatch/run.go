package mainwatch

import (
	"cmp"
	"context"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// Run watches until ctx ends. It checks every repository at once (a
// restarted daemon looks again rather than trusting a cache), then on
// every ref change, landing (Notify), cooldown end and polling tick; the
// tick also fetches. A panic in the loop is recovered, counted and the
// loop restarted (supervisor.Runtime). It returns nil when ctx ends.
func (w *Monitor) Run(ctx context.Context) error {
	if !w.cfg.Enabled {
		<-ctx.Done()
		return nil
	}
	return w.rt.Run(ctx, w.loop)
}

// loop watches until ctx ends.
func (w *Monitor) loop(ctx context.Context) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		w.log.Warn("filesystem notifications unavailable; polling main only", "every", w.cfg.Interval, "err", err)
		fw = nil
	}
	var (
		fsEvents <-chan fsnotify.Event
		fsErrors <-chan error
	)
	if fw != nil {
		defer fw.Close()
		fsEvents, fsErrors = fw.Events, fw.Errors
	}
	w.mu.Lock()
	w.health.Watching = fw != nil
	w.watchDirs = map[string]watchDir{} // a restarted loop watches afresh
	w.fw = fw
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.fw = nil
		w.mu.Unlock()
	}()

	w.cycle(ctx, nil, true)
	w.watch(ctx, fw)
	tick := time.NewTicker(w.cfg.Interval)
	defer tick.Stop()
	var (
		dirty    = map[string]bool{}
		debounce *time.Timer
		fire     <-chan time.Time
		due      *time.Timer
		dueC     <-chan time.Time
	)
	defer func() {
		if debounce != nil {
			debounce.Stop()
		}
		if due != nil {
			due.Stop()
		}
	}()
	arm := func() {
		if fire == nil {
			debounce = time.NewTimer(w.cfg.Debounce)
			fire = debounce.C
		}
	}
	for {
		if due != nil {
			due.Stop()
			due, dueC = nil, nil
		}
		if at := w.nextDue(); !at.IsZero() {
			due = time.NewTimer(max(at.Sub(w.now()), 0))
			dueC = due.C
		}
		select {
		case <-ctx.Done():
			return
		case repo := <-w.trigger:
			if repo == "" {
				dirty = nil // all
			} else if dirty != nil {
				dirty[repo] = true
			}
			arm()
		case ev := <-fsEvents:
			if repo := w.refEvent(ev); repo != "" {
				if dirty != nil {
					dirty[repo] = true
				}
				arm()
			}
		case err := <-fsErrors:
			w.log.Warn("filesystem notifications", "err", err)
		case <-fire:
			fire, debounce = nil, nil
			w.cycle(ctx, dirty, false)
			dirty = map[string]bool{}
			w.watch(ctx, fw)
		case <-dueC:
			w.cycle(ctx, nil, false)
		case <-tick.C:
			w.cycle(ctx, nil, true)
			w.watch(ctx, fw)
		}
	}
}

// refEvent returns the repository whose main ref an event may have moved,
// or "".
func (w *Monitor) refEvent(ev fsnotify.Event) string {
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	if strings.HasSuffix(name, ".lock") {
		return "" // the rename that follows is the change
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	wd, ok := w.watchDirs[dir]
	if !ok || wd.packedOnly && name != "packed-refs" {
		return ""
	}
	return wd.repo
}

// watchDir is a watched directory: a ref directory, or a common git
// directory where only packed-refs matters.
type watchDir struct {
	repo       string
	packedOnly bool
}

// watch updates the watched directories; when it added some, it checks
// their repositories once more: a change made before the watch began was
// not notified.
func (w *Monitor) watch(ctx context.Context, fw *fsnotify.Watcher) {
	if added := w.syncWatches(ctx, fw); len(added) > 0 {
		w.cycle(ctx, added, false)
	}
}

// Track watches, from now on, the main branch a task's worktree compares
// with: the daemon calls it when it has provisioned a task's worktree. It
// returns once filesystem notifications on that main's refs are set up,
// so that a move of main right after is seen at once, not at the next
// poll; the first task of a repository costs one git process, later ones
// none. A newly watched repository is checked once more, in case main
// moved before the watch began. Before Run starts (or while the loop is
// restarting) the branch is remembered and watched when the loop starts.
func (w *Monitor) Track(ctx context.Context, wt store.Worktree) {
	if !w.cfg.Enabled || wt.Repo == "" {
		return
	}
	k := groupKey{repo: wt.Repo, branch: cmp.Or(w.cfg.MainBranch, wt.Base)}
	w.mu.Lock()
	w.main(k)
	fw := w.fw
	w.mu.Unlock()
	if fw == nil {
		return // the loop's start watches every main it knows
	}
	dirs, err := w.dirsFor(ctx, k)
	if err != nil {
		w.log.Warn("watching main", "repo", k.repo, "err", err)
		return
	}
	added := false
	w.mu.Lock()
	if w.fw == fw {
		for d, wd := range dirs {
			if _, ok := w.watchDirs[d]; ok {
				continue
			}
			if err := fw.Add(d); err == nil {
				w.watchDirs[d] = wd
				added = true
			}
		}
	}
	w.mu.Unlock()
	if added {
		w.Notify(k.repo)
	}
}

// dirsFor returns the directories holding k's main refs: the loose ref's
// directory (local and remote-tracking) and the common git directory
// (packed-refs). The common git directory is asked of git once per
// repository.
func (w *Monitor) dirsFor(ctx context.Context, k groupKey) (map[string]watchDir, error) {
	w.mu.Lock()
	common, ok := w.gitDirs[k.repo]
	w.mu.Unlock()
	if !ok {
		r, err := git.Inspect(ctx, k.repo)
		if err != nil {
			return nil, err
		}
		common = filepath.Clean(r.CommonDir)
		w.mu.Lock()
		w.gitDirs[k.repo] = common
		w.mu.Unlock()
	}
	out := map[string]watchDir{common: {repo: k.repo, packedOnly: true}}
	d, _ := dirOf(filepath.Join(common, "refs", "heads"), k.branch)
	out[d] = watchDir{repo: k.repo}
	if w.cfg.Remote != "" {
		d, _ := dirOf(filepath.Join(common, "refs", "remotes", w.cfg.Remote), k.branch)
		out[d] = watchDir{repo: k.repo}
	}
	return out, nil
}

// syncWatches watches the directories holding the refs of every main
// branch in use: the loose ref's directory (local and remote-tracking)
// and the common git directory (packed-refs). Directories that do not
// exist yet are left to polling.
func (w *Monitor) syncWatches(ctx context.Context, fw *fsnotify.Watcher) (added map[string]bool) {
	if fw == nil {
		return nil
	}
	w.mu.Lock()
	keys := make([]groupKey, 0, len(w.mains))
	for k := range w.mains {
		keys = append(keys, k)
	}
	w.mu.Unlock()
	want := map[string]watchDir{}
	looked := map[string]bool{} // repositories whose directories want lists
	for _, k := range keys {
		dirs, err := w.dirsFor(ctx, k)
		if err != nil {
			continue
		}
		looked[k.repo] = true
		maps.Copy(want, dirs)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for d, wd := range w.watchDirs {
		// A repository Track added meanwhile is not in want: keep it.
		if _, ok := want[d]; !ok && looked[wd.repo] {
			_ = fw.Remove(d)
			delete(w.watchDirs, d)
		}
	}
	for d, wd := range want {
		if _, ok := w.watchDirs[d]; ok {
			continue
		}
		if err := fw.Add(d); err == nil {
			w.watchDirs[d] = wd
			if added == nil {
				added = map[string]bool{}
			}
			added[wd.repo] = true
		}
	}
	return added
}
