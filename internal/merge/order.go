package merge

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Overlapping entries. Among the ready entries of one target, those whose
// branches change the same files are ordered so that the smaller change
// (lines changed, then files) lands first, instead of both racing and the
// loser being sent back. Entries that share no file with another keep
// their places (first come, first served): each group of overlapping
// entries is sorted within the places its members held.
//
// What an entry changes is read from git, not from the overlap radar: the
// branch is what lands, while the radar knows the running tasks' files as
// observed (files later put back included) and no line counts, and it
// forgets a task when it finishes. `git diff --numstat target...branch`
// runs once per branch tip (cached by tip).
//
// The larger entry of a pair that lands second goes on as usual: brought
// up to date (in the same batch) when it merges cleanly. When it
// conflicts with the target once the smaller landed, in a file both
// changed, it is not sent back as a failure: its entry closes as yielded
// (merge.yielded), its task is told to rebase — by the main watcher's
// notice when the queue has one (Options.Yield) — and runs again. Each ordering decision is an event
// (merge.ordered, on the larger entry's task).

// change is what an entry's branch changes since it left the target.
type change struct {
	files []string // sorted
	lines int      // added + deleted (binary files count as one)
}

// yield is an ordering decision: the entry lands after the smaller one of
// after, with which it shares files.
type yield struct {
	after      task.ID
	afterEntry int64
	files      []string
}

// Yield is what a task told to rebase after a smaller overlapping entry
// landed first is told: Reason says why, in the queue's words.
type Yield struct {
	TaskID    task.ID
	Repo      string
	Target    string
	After     task.ID
	Files     []string // the files both changed
	Conflicts []string // where it conflicts with the target now
	Reason    string
}

// branchTips reads the tips of the entries' branches in one git process.
func branchTips(ctx context.Context, repo string, es []store.MergeEntry) map[string]string {
	args := []string{"for-each-ref", "--format=%(refname)%00%(objectname)"}
	for _, e := range es {
		args = append(args, "refs/heads/"+e.Branch)
	}
	out, err := git.Run(ctx, repo, args...)
	if err != nil {
		return nil
	}
	tips := map[string]string{}
	for line := range strings.SplitSeq(out, "\n") {
		if name, sha, ok := strings.Cut(line, "\x00"); ok {
			tips[name] = sha
		}
	}
	return tips
}

// changeOf returns what the branch at tip changes since it left target.
func (q *Queue) changeOf(ctx context.Context, repo, target, tip string) (change, bool) {
	if tip == "" {
		return change{}, false
	}
	q.mu.Lock()
	c, ok := q.changes[tip]
	q.mu.Unlock()
	if ok {
		return c, true
	}
	out, err := git.Run(ctx, repo, "diff", "--numstat", "-z", "--no-renames", "--end-of-options", "refs/heads/"+target+"..."+tip)
	if err != nil {
		return change{}, false
	}
	c = parseNumstat(out)
	q.mu.Lock()
	if len(q.changes) >= maxChanges {
		clear(q.changes)
	}
	q.changes[tip] = c
	q.mu.Unlock()
	return c, true
}

// maxChanges bounds the cache of branch changes.
const maxChanges = 4096

// parseNumstat reads `git diff --numstat -z` without renames: for each
// file "added\tdeleted\tpath\0" ("-\t-\t" for a binary file).
func parseNumstat(out string) change {
	var c change
	for rec := range strings.SplitSeq(out, "\x00") {
		added, rest, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		deleted, path, ok := strings.Cut(rest, "\t")
		if !ok || path == "" {
			continue
		}
		a, errA := strconv.Atoi(added)
		d, errD := strconv.Atoi(deleted)
		if errA != nil || errD != nil {
			a, d = 1, 0 // binary
		}
		c.lines += a + d
		c.files = append(c.files, path)
	}
	slices.Sort(c.files)
	return c
}

// shared returns the files in both sorted lists.
func shared(a, b []string) []string {
	var out []string
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			out = append(out, a[i])
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return out
}

// order returns ready (oldest first) with each group of entries that
// change the same files sorted smaller first within the places its
// members held; the others keep their places. It records each new
// decision (an entry put after a smaller one queued later) for when the
// larger conflicts, and as a merge.ordered event.
func (q *Queue) order(ctx context.Context, repo, target string, ready []store.MergeEntry) []store.MergeEntry {
	if len(ready) < 2 || q.cfg.PR {
		return ready
	}
	tips := branchTips(ctx, repo, ready)
	cs := make([]change, len(ready))
	for i, e := range ready {
		cs[i], _ = q.changeOf(ctx, repo, target, tips["refs/heads/"+e.Branch])
	}
	perm, ds := overlapOrder(cs)
	out := make([]store.MergeEntry, len(ready))
	for k, i := range perm {
		out[k] = ready[i]
	}
	for _, d := range ds {
		q.decided(ctx, ready[d.larger], ready[d.smaller], d.files, cs[d.larger].lines, cs[d.smaller].lines)
	}
	return out
}

// decision is an entry (larger) put after a smaller one queued later,
// with which it shares files.
type decision struct {
	larger, smaller int
	files           []string
}

// overlapOrder returns the order of changes cs (in queue order): each
// group of changes linked by shared files sorted smaller first (lines,
// then files, then queue order) within the places its members held, the
// others in place; and the decisions that put a change after a smaller
// one queued later.
func overlapOrder(cs []change) ([]int, []decision) {
	// Groups: union-find over a file index.
	parent := make([]int, len(cs))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	first := map[string]int{}
	for i, c := range cs {
		for _, f := range c.files {
			if j, ok := first[f]; ok {
				parent[find(i)] = find(j)
			} else {
				first[f] = i
			}
		}
	}
	var roots []int
	groups := map[int][]int{}
	for i := range cs {
		r := find(i)
		if groups[r] == nil {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}
	perm := make([]int, len(cs))
	for i := range perm {
		perm[i] = i
	}
	smaller := func(x, y int) int {
		return cmp.Or(cmp.Compare(cs[x].lines, cs[y].lines), cmp.Compare(len(cs[x].files), len(cs[y].files)), cmp.Compare(x, y))
	}
	var ds []decision
	for _, r := range roots {
		places := groups[r] // ascending
		if len(places) < 2 {
			continue
		}
		members := slices.Clone(places)
		slices.SortFunc(members, smaller)
		for k, p := range places {
			perm[p] = members[k]
		}
		for a, x := range members {
			for _, y := range members[:a] {
				if y < x {
					continue // queued before it: first come, first served
				}
				if files := shared(cs[x].files, cs[y].files); len(files) > 0 {
					ds = append(ds, decision{larger: x, smaller: y, files: files})
				}
			}
		}
	}
	return perm, ds
}

// decided records that entry l lands after s, the smaller change of the
// same files: the first time for this pair, a merge.ordered event.
func (q *Queue) decided(ctx context.Context, l, s store.MergeEntry, files []string, lines, sLines int) {
	q.mu.Lock()
	if q.ordered[l.ID][s.ID] {
		q.mu.Unlock()
		return
	}
	if q.ordered[l.ID] == nil {
		q.ordered[l.ID] = map[int64]bool{}
	}
	q.ordered[l.ID][s.ID] = true
	if _, ok := q.yields[l.ID]; !ok {
		// The first decision names the entry it yields to.
		q.yields[l.ID] = yield{after: s.TaskID, afterEntry: s.ID, files: files}
	}
	q.mu.Unlock()
	q.log.Info("merge ordered: the smaller overlapping change lands first", "task_id", l.TaskID, "entry", l.ID, "after", s.TaskID, "files", strings.Join(files, ","), "lines", lines, "after_lines", sLines)
	if _, err := q.st.AppendEvents(ctx, event.New(q.now(), l.TaskID, event.MergeOrdered{Entry: l.ID, Target: l.Target, After: string(s.TaskID), AfterEntry: s.ID,
		Files: files, Lines: lines, AfterLines: sLines})); err != nil {
		q.log.Warn("recording a merge ordering", "entry", l.ID, "err", err)
	}
}

// yieldOf returns the decision an entry whose branch conflicts with the
// target in conflicts was ordered by, when the conflict is in a file both
// changed, the smaller entry it yielded to landed and its task can run
// again to rebase.
func (q *Queue) yieldOf(ctx context.Context, e store.MergeEntry, t task.Task, conflicts []string) (yield, bool) {
	q.mu.Lock()
	y, ok := q.yields[e.ID]
	q.mu.Unlock()
	if !ok || t.Status != task.Merging || !slices.ContainsFunc(conflicts, func(f string) bool { return slices.Contains(y.files, f) }) {
		return yield{}, false
	}
	s, err := q.st.GetMerge(ctx, y.afterEntry)
	if err != nil || s.State != store.MergeLanded {
		return yield{}, false
	}
	return y, true
}

// closedOrder forgets the decisions of an entry that closed.
func (q *Queue) closedOrder(id int64) {
	q.mu.Lock()
	delete(q.yields, id)
	delete(q.ordered, id)
	q.mu.Unlock()
}

// yieldReason is what the task is told of why it rebases.
func yieldReason(y yield, target string, conflicts []string) string {
	return fmt.Sprintf("The merge queue landed task %s's smaller change first: it changes files you changed too (%s), so the two were ordered smaller first instead of racing. "+
		"Your branch now conflicts with %s in %s. This is not a failed merge: bring %s into your branch, resolve the conflicts keeping both changes, check the result and complete the task again.",
		y.after, strings.Join(y.files, ", "), target, strings.Join(conflicts, ", "), target)
}

// recordYield closes e, whose branch conflicts with the target (out) once
// the smaller entry it was ordered after landed: not a send-back, its task
// is told to rebase (by the main watcher when the queue has it) and runs
// again. It reports whether the queue may go on.
func (q *Queue) recordYield(ctx context.Context, e store.MergeEntry, out outcome, y yield) bool {
	reason := yieldReason(y, e.Target, out.files)
	by := "merge_queue"
	told := false
	if q.yield != nil {
		err := q.yield(ctx, Yield{TaskID: e.TaskID, Repo: e.Repo, Target: e.Target, After: y.after, Files: y.files, Conflicts: out.files, Reason: reason})
		if err == nil {
			by, told = "main_watcher", true
		} else {
			q.log.Warn("the main watcher could not tell a task to rebase; the queue tells it", "task_id", e.TaskID, "err", err)
		}
	}
	if !told && q.inject != nil {
		text := reason + fmt.Sprintf("\nIn your working directory: commit, `git merge %s`, resolve each conflict keeping both changes, commit, then complete the task again.", e.Target)
		attrs := map[string]string{"target": e.Target, "files": strings.Join(out.files, ","), "after": string(y.after)}
		if err := q.inject(ctx, inject.Injection{TaskID: e.TaskID, Kind: inject.Rebase, Source: inject.FromMergeQueue, Urgency: inject.Helpful, Attrs: attrs, Text: text}); err != nil {
			q.log.Error("telling a task to rebase", "task_id", e.TaskID, "err", err)
		}
	}
	detail := fmt.Sprintf("yielded to %s, a smaller change of %s that landed first; conflicts with %s in %s; its task was told to rebase",
		y.after, strings.Join(y.files, ", "), e.Target, strings.Join(out.files, ", "))
	now := q.now().UTC()
	if _, _, err := q.st.UpdateMerge(ctx, e.ID, func(m *store.MergeEntry) ([]event.Event, error) {
		m.State, m.Detail, m.Files, m.FinishedAt = store.MergeYielded, detail, out.files, &now
		if m.Step == stepBatch {
			m.Step, m.StepTip, m.Commit = "", "", ""
		}
		return []event.Event{event.New(now, e.TaskID, event.MergeYielded{Entry: e.ID, Target: e.Target, After: string(y.after), Conflicts: out.files, Notice: by})}, nil
	}); err != nil {
		q.log.Error("recording a yielded merge", "entry", e.ID, "err", err)
		return false
	}
	q.closedOrder(e.ID)
	q.log.Info("merge yielded", "task_id", e.TaskID, "entry", e.ID, "after", y.after, "conflicts", strings.Join(out.files, ","), "told_by", by)
	q.moveTask(ctx, e.TaskID, task.Queued, "the merge queue landed "+string(y.after)+"'s smaller overlapping change first: rebase onto "+e.Target+" and complete again")
	return true
}
