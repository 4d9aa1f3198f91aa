package mainwatch

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// scanMode says what a scan may do besides looking.
type scanMode int

const (
	// look only computes where the branches stand (rebase status).
	look scanMode = iota
	// notify also tells the tasks that fell behind and moves the cache.
	notify
)

// cycle checks the repositories in only (nil: all), fetching first when
// fetch is set, and notifies the tasks that fell behind. A panic is
// recovered and counted: supervision goes on.
func (w *Monitor) cycle(ctx context.Context, only map[string]bool, fetch bool) {
	defer func() {
		if p := recover(); p != nil {
			w.mu.Lock()
			w.health.Panics++
			w.mu.Unlock()
			w.log.Error("main watcher cycle panicked", "panic", p)
		}
	}()
	w.scanMu.Lock()
	defer w.scanMu.Unlock()
	w.loadHistory(ctx)
	groups, err := w.groups(ctx)
	if err != nil {
		w.log.Warn("listing tasks' worktrees", "err", err)
		return
	}
	w.readFiles(ctx, groups)
	for _, k := range sortedKeys(groups) {
		if only != nil && !only[k.repo] {
			continue
		}
		if fetch {
			w.fetch(ctx, k)
		}
		w.checkGroup(ctx, k, groups[k], notify, false)
	}
	w.forget(groups)
	w.mu.Lock()
	w.health.Cycles++
	w.health.LastCycle = w.now().UTC()
	w.mu.Unlock()
}

func sortedKeys(g map[groupKey][]entry) []groupKey {
	keys := make([]groupKey, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(strings.Compare(a.repo, b.repo), strings.Compare(a.branch, b.branch))
	})
	return keys
}

// forget drops the state of tasks that are no longer watched.
func (w *Monitor) forget(groups map[groupKey][]entry) {
	live := map[task.ID]bool{}
	for _, es := range groups {
		for _, e := range es {
			live[e.w.TaskID] = true
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.tasks {
		if !live[id] {
			delete(w.tasks, id)
			delete(w.files, id)
		}
	}
}

// readFiles reads the file-changed observations logged since the last
// read: the files each task changed, committed or not. The first read
// takes only the watched tasks' own observations, so that a daemon start
// does not read every file change in the log's history.
func (w *Monitor) readFiles(ctx context.Context, groups map[groupKey][]entry) {
	w.mu.Lock()
	mark := w.fileMark
	w.mu.Unlock()
	kinds := event.Filter{Kinds: []string{string(event.KindFileChanged)}}
	if mark == 0 {
		last, err := w.st.LastEventID(ctx)
		if err != nil {
			w.log.Warn("reading file-changed observations", "err", err)
			return
		}
		for _, es := range groups {
			for _, e := range es {
				f := kinds
				f.TaskID = e.w.TaskID
				if !w.readFileEvents(ctx, f, 0, last) {
					return
				}
			}
		}
		w.mu.Lock()
		w.fileMark = max(w.fileMark, last)
		mark = w.fileMark
		w.mu.Unlock()
	}
	w.readFileEvents(ctx, kinds, mark, 0)
}

// readFileEvents records the file-changed events matching f after the
// event after (and up to upTo, when not 0). It reports whether it could
// read them all.
func (w *Monitor) readFileEvents(ctx context.Context, f event.Filter, after, upTo int64) bool {
	const page = 5000
	for {
		evs, err := w.st.ReadEvents(ctx, event.Query{Filter: f, AfterID: after, Limit: page})
		if err != nil {
			w.log.Warn("reading file-changed observations", "err", err)
			return false
		}
		w.mu.Lock()
		for _, e := range evs {
			after = e.ID
			if upTo > 0 && e.ID > upTo {
				break
			}
			if f.TaskID == "" {
				w.fileMark = max(w.fileMark, e.ID)
			}
			fc, ok := e.Payload.(event.FileChanged)
			if !ok || e.TaskID == "" {
				continue
			}
			set := w.files[e.TaskID]
			if set == nil {
				set = map[string]bool{}
				w.files[e.TaskID] = set
			}
			set[fc.Path] = true
		}
		w.mu.Unlock()
		if len(evs) < page || upTo > 0 && after > upTo {
			return true
		}
	}
}

// loadHistory reads back, once, what earlier runs of the daemon told each
// task and when they rebased it.
func (w *Monitor) loadHistory(ctx context.Context) {
	w.mu.Lock()
	done := w.loaded
	w.mu.Unlock()
	if done {
		return
	}
	var after int64
	for {
		evs, err := w.st.ReadEvents(ctx, event.Query{Filter: event.Filter{Kinds: []string{string(event.KindRebaseRequired), string(event.KindRebaseCompleted)}}, AfterID: after, Limit: 5000})
		if err != nil {
			w.log.Warn("reading past rebase notices", "err", err)
			return
		}
		w.mu.Lock()
		for _, e := range evs {
			after = e.ID
			ts := w.state(e.TaskID)
			at := e.Time
			switch p := e.Payload.(type) {
			case event.RebaseRequired:
				if !p.Manual {
					ts.LastNotice, ts.LastNoticeMain, ts.LastNoticeUrgency = &at, p.MainCommit, Urgency(p.Urgency)
				}
			case event.RebaseCompleted:
				ts.LastRebased = &at
			}
		}
		w.mu.Unlock()
		if len(evs) < 5000 {
			break
		}
	}
	w.mu.Lock()
	w.loaded = true
	w.mu.Unlock()
}

// state returns the state of task id; w.mu is held.
func (w *Monitor) state(id task.ID) *TaskState {
	ts := w.tasks[id]
	if ts == nil {
		ts = &TaskState{TaskID: id}
		w.tasks[id] = ts
	}
	return ts
}

// notice is one task to tell, with why.
type notice struct {
	e    entry
	st   TaskState
	rank int // 0: conflicts predicted, 1: overlapping files, 2: the rest
}

// checkGroup compares every task branch of k with main in one batched
// pass and, in notify mode, tells those that fell behind. manual forces a
// fresh look even when main did not move.
func (w *Monitor) checkGroup(ctx context.Context, k groupKey, es []entry, mode scanMode, manual bool) []TaskState {
	now := w.now().UTC()
	commit, ref, err := w.resolveMain(ctx, k)
	w.mu.Lock()
	ms := w.main(k)
	if err != nil {
		if ms.err != err.Error() && mode == notify {
			w.log.Warn("cannot read main", "repo", k.repo, "branch", k.branch, "err", err)
		}
		if mode == notify {
			ms.err = err.Error()
		}
		var out []TaskState
		for _, e := range es {
			ts := w.state(e.w.TaskID)
			ts.Status, ts.Repo, ts.Branch, ts.Main = e.status, e.w.Repo, e.w.Branch, k.branch
			ts.State, ts.Note, ts.Checked = StateError, err.Error(), now
			out = append(out, *ts)
		}
		w.mu.Unlock()
		return out
	}
	prev := ms.commit
	fresh := manual || mode == look || prev != commit
	if !fresh {
		// Main did not move: look again only for tasks not yet compared
		// with this commit, and those whose cooldown is over.
		for _, e := range es {
			ts := w.tasks[e.w.TaskID]
			if ts == nil || ts.MainCommit != commit || ts.State == StateCooldown && w.cooledDown(ts, now) {
				fresh = true
				break
			}
		}
	}
	w.mu.Unlock()
	if !fresh {
		return nil
	}

	tips, err := git.RefTips(ctx, k.repo, "refs/heads/"+worktree.BranchPrefix)
	if err != nil {
		w.log.Warn("reading task branches", "repo", k.repo, "err", err)
		return nil
	}
	heads := []string{commit}
	for _, e := range es {
		if tip := tips["refs/heads/"+e.w.Branch]; tip != "" {
			heads = append(heads, tip)
		}
	}
	g, err := git.LoadGraph(ctx, k.repo, heads)
	if err != nil {
		w.log.Warn("reading history", "repo", k.repo, "err", err)
		return nil
	}
	rewritten := false
	if prev != "" && prev != commit && mode == notify {
		if ok, err := git.IsAncestor(ctx, k.repo, prev, commit); err == nil && !ok {
			rewritten = true
		}
	}

	divs, forecasts := w.forecast(ctx, k.repo, commit, g, es, tips)
	var (
		out     []TaskState
		notices []notice
		behind  int
	)
	for _, e := range es {
		tip := tips["refs/heads/"+e.w.Branch]
		ts := TaskState{TaskID: e.w.TaskID, Status: e.status, Repo: e.w.Repo, Branch: e.w.Branch, Main: ref, MainCommit: commit, Checked: now}
		if tip == "" {
			ts.State, ts.Note = StateError, "its branch "+e.w.Branch+" is missing"
			out = append(out, w.record(ts, mode))
			continue
		}
		d := divs[e.w.TaskID]
		ts.Behind, ts.Ahead = len(d.Behind), len(d.Ahead)
		if ts.Behind == 0 {
			ts.State = StateUpToDate
			out = append(out, w.record(ts, mode))
			continue
		}
		behind++
		ts.NewCommits = summaries(g, d.Behind, 5)
		ts.Overlap = w.overlap(e.w.TaskID, d)
		ts.Forecast = "clean"
		rank := 2
		if len(ts.Overlap) > 0 {
			ts.Forecast, rank = "overlap", 1
			if mt, ok := forecasts[e.w.TaskID]; ok && !mt.Clean {
				ts.Forecast, ts.Conflicts, rank = "conflict", mt.Conflicts, 0
			}
		}
		ts.State = StateBehind
		switch {
		case e.status == task.Merging:
			ts.State, ts.Note = StateMerging, "the merge queue brings it up to date"
		case len(ts.Overlap) == 0 && !w.cfg.NotifyUnrelated:
			ts.State, ts.Note = StateUnrelated, "main changed none of its files"
		}
		if ts.State == StateBehind {
			w.mu.Lock()
			old := w.state(e.w.TaskID)
			switch {
			case old.LastNoticeMain == commit:
				ts.State = StateNotified
			case old.LastNotice != nil && now.Sub(*old.LastNotice) < w.cfg.Cooldown && !(rank < 2 && old.LastNoticeUrgency == FYI):
				// An fyi note does not hold back the news that main
				// changed the task's own files.
				ts.State = StateCooldown
				ts.Note = "told " + now.Sub(*old.LastNotice).Round(time.Second).String() + " ago; told again after the cooldown"
			case mode == notify:
				notices = append(notices, notice{e: e, st: ts, rank: rank})
			}
			w.mu.Unlock()
		}
		out = append(out, w.record(ts, mode))
	}

	if mode == notify {
		w.mu.Lock()
		ms.commit, ms.ref, ms.err = commit, ref, ""
		w.mu.Unlock()
		var moved []event.Event
		if prev != commit && prev != "" {
			moved = append(moved, event.New(w.now(), "", event.MainUpdated{Repo: k.repo, Branch: ref, Previous: prev, NewCommit: commit, Rewritten: rewritten, Behind: behind}))
			w.log.Info("main moved", "repo", k.repo, "main", ref, "commit", words.ShortCommit(commit), "tasks_behind", behind, "rewritten", rewritten)
		}
		slices.SortStableFunc(notices, func(a, b notice) int { return a.rank - b.rank })
		w.tellAll(ctx, notices, rewritten, moved)
	}
	return out
}

// tellAll sends every task of ns its notice, in order, with the events
// of the move (moved): through InjectMany in one store commit when the
// door has it, else one at a time after the events are logged.
func (w *Monitor) tellAll(ctx context.Context, ns []notice, rewritten bool, moved []event.Event) {
	if w.many == nil {
		for _, ev := range moved {
			w.emit(ctx, "", ev.Payload)
		}
		for _, n := range ns {
			w.tell(ctx, n, rewritten)
		}
		return
	}
	if len(ns) == 0 && len(moved) == 0 {
		return
	}
	injs := make([]inject.Injection, len(ns))
	reqs := make([]event.RebaseRequired, len(ns))
	for i, n := range ns {
		injs[i], reqs[i] = w.notice(n, rewritten)
	}
	at := w.now()
	got, err := w.many(ctx, injs, func(i int, s inject.Injection) []event.Event {
		return []event.Event{event.New(at, s.TaskID, reqs[i])}
	}, moved...)
	if err != nil {
		w.log.Warn("telling tasks main moved", "tasks", len(ns), "err", err)
		return
	}
	now := w.now().UTC()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, g := range got {
		if g.Err != nil {
			w.log.Warn("telling a task main moved", "task_id", injs[i].TaskID, "err", g.Err)
			continue
		}
		w.told(injs[i].TaskID, ns[i].st.MainCommit, injs[i].Urgency, now)
	}
}

// overlap returns the files main changed that the task changed too
// (committed, or seen changing in its observations).
func (w *Monitor) overlap(id task.ID, d git.Divergence) []string {
	mine := map[string]bool{}
	w.mu.Lock()
	for f := range w.files[id] {
		mine[f] = true
	}
	w.mu.Unlock()
	for _, f := range d.BranchFiles {
		mine[f] = true
	}
	return intersect(d.MainFiles, mine)
}

// forecastWorkers bounds the git merge-tree processes run at once.
const forecastWorkers = 4

// forecast compares every branch with main in memory and, for the behind
// branches that have commits of their own touching files main changed,
// predicts the rebase with git merge-tree, a few at a time.
func (w *Monitor) forecast(ctx context.Context, repo, commit string, g *git.Graph, es []entry, tips map[string]string) (map[task.ID]git.Divergence, map[task.ID]git.MergeResult) {
	divs := map[task.ID]git.Divergence{}
	var todo []entry
	for _, e := range es {
		tip := tips["refs/heads/"+e.w.Branch]
		if tip == "" {
			continue
		}
		d := g.Compare(commit, tip)
		divs[e.w.TaskID] = d
		if len(d.Behind) > 0 && len(d.Ahead) > 0 && len(w.overlap(e.w.TaskID, d)) > 0 {
			todo = append(todo, e)
		}
	}
	results := map[task.ID]git.MergeResult{}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	sem := make(chan struct{}, forecastWorkers)
	for _, e := range todo {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			mt, err := git.MergeTree(ctx, repo, commit, tips["refs/heads/"+e.w.Branch])
			if err != nil {
				w.log.Warn("forecasting a rebase", "task_id", e.w.TaskID, "err", err)
				return
			}
			mu.Lock()
			results[e.w.TaskID] = mt
			mu.Unlock()
		})
	}
	wg.Wait()
	return divs, results
}

// cooledDown reports whether ts's cooldown is over; w.mu is held.
func (w *Monitor) cooledDown(ts *TaskState, now time.Time) bool {
	return ts.LastNotice == nil || now.Sub(*ts.LastNotice) >= w.cfg.Cooldown
}

// record merges a freshly computed state with what is remembered (the
// notices and rebases) and, in notify mode, stores it. A look never
// stores: the notifying cycle tells a task it has not compared yet.
func (w *Monitor) record(ts TaskState, mode scanMode) TaskState {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.state(ts.TaskID)
	ts.LastNotice, ts.LastNoticeMain, ts.LastNoticeUrgency, ts.LastRebased = old.LastNotice, old.LastNoticeMain, old.LastNoticeUrgency, old.LastRebased
	if mode == notify {
		*old = ts
	}
	return ts
}

// nextDue returns when the earliest cooldown ends (zero: none waits).
func (w *Monitor) nextDue() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var due time.Time
	for _, ts := range w.tasks {
		if ts.State != StateCooldown || ts.LastNotice == nil {
			continue
		}
		if at := ts.LastNotice.Add(w.cfg.Cooldown); due.IsZero() || at.Before(due) {
			due = at
		}
	}
	return due
}

// notice builds the notice of n and the event that records it. A task
// none of whose files main changed (no overlap) is told at fyi, whatever
// the configured urgency: quiet, never interrupting, never rebased.
func (w *Monitor) notice(n notice, rewritten bool) (inject.Injection, event.RebaseRequired) {
	ts := n.st
	urg := w.cfg.Urgency
	unrelated := len(ts.Overlap) == 0
	if unrelated {
		urg = FYI
	}
	attrs := map[string]string{"main": ts.Main, "main_commit": words.ShortCommit(ts.MainCommit), "behind": fmt.Sprint(ts.Behind)}
	req := event.RebaseRequired{Main: ts.Main, MainCommit: ts.MainCommit, CommitsBehind: ts.Behind, NewCommits: ts.NewCommits,
		Urgency: string(urg), Conflicts: ts.Conflicts, Overlap: ts.Overlap, Unrelated: unrelated}
	inj := inject.Injection{TaskID: ts.TaskID, Kind: inject.Rebase, Source: Source, Urgency: urg, Attrs: attrs,
		Text: noticeText(ts, urg, rewritten), Urgent: urg == Blocking, Quiet: urg != Blocking}
	return inj, req
}

// tell sends one task its notice, after logging RebaseRequired.
func (w *Monitor) tell(ctx context.Context, n notice, rewritten bool) {
	inj, req := w.notice(n, rewritten)
	w.emit(ctx, inj.TaskID, req)
	if err := w.inject(ctx, inj); err != nil {
		w.log.Warn("telling a task main moved", "task_id", inj.TaskID, "err", err)
		return
	}
	now := w.now().UTC()
	w.mu.Lock()
	w.told(inj.TaskID, n.st.MainCommit, inj.Urgency, now)
	w.mu.Unlock()
}

// told records that a task was told about main at commit, at urgency
// urg, at now; w.mu is held.
func (w *Monitor) told(id task.ID, commit string, urg Urgency, now time.Time) {
	st := w.state(id)
	st.LastNotice, st.LastNoticeMain, st.LastNoticeUrgency, st.State = &now, commit, urg, StateNotified
	w.health.Notices++
}

// noticeText is what the task reads.
func noticeText(ts TaskState, urg Urgency, rewritten bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s moved: your branch %s is %s behind it (now at %s).\n", ts.Main, ts.Branch, plural(ts.Behind, "commit"), words.ShortCommit(ts.MainCommit))
	if rewritten {
		fmt.Fprintf(&b, "%s was rewritten (force-pushed): commits your branch started from may be gone from it.\n", ts.Main)
	}
	if len(ts.NewCommits) > 0 {
		b.WriteString("New on " + ts.Main + ":\n")
		for _, c := range ts.NewCommits {
			b.WriteString("  " + c + "\n")
		}
		if more := ts.Behind - len(ts.NewCommits); more > 0 {
			fmt.Fprintf(&b, "  … and %s more\n", plural(more, "commit"))
		}
	}
	switch ts.Forecast {
	case "conflict":
		fmt.Fprintf(&b, "Forecast: rebasing conflicts in %s.\n", strings.Join(ts.Conflicts, ", "))
	case "overlap":
		fmt.Fprintf(&b, "Forecast: %s changed files you changed too (%s); a rebase may conflict there.\n", ts.Main, strings.Join(ts.Overlap, ", "))
	default:
		b.WriteString("Forecast: a clean rebase.\n")
	}
	switch urg {
	case FYI:
		if len(ts.Overlap) == 0 {
			fmt.Fprintf(&b, "%s changed none of the files you changed; if your work could use what it added (a new helper or API), read it before writing your own.\n", ts.Main)
		}
		b.WriteString("No action is needed now; the merge queue brings your work up to date when you finish.")
	case Blocking:
		b.WriteString("Neuraphage rebases your branch onto it at your next tool boundary and tells you the outcome.")
	default:
		fmt.Fprintf(&b, "At a convenient point (between steps), bring your branch up to date: commit what you have, then\n  git merge %s\nresolve any conflict so that both sides' changes are kept, commit, and re-read the files you are editing before you change them further. (Merge, not rebase: in your sandbox git can finish a merge but not a rebase that stops on a conflict.)", ts.Main)
	}
	return b.String()
}

// emit logs an event.
func (w *Monitor) emit(ctx context.Context, id task.ID, p event.Payload) {
	if _, err := w.st.AppendEvents(ctx, event.New(w.now(), id, p)); err != nil {
		w.log.Warn("recording an event", "kind", p.EventKind(), "err", err)
	}
}
