package mainwatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// Status compares every watched task branch with main now (read-only: no
// notice is sent, no cache moves) and returns where each stands, most
// behind first.
func (w *Monitor) Status(ctx context.Context) ([]TaskState, error) { return w.status(ctx, nil) }

// status is Status of the repositories holding the tasks in only (nil:
// all of them).
func (w *Monitor) status(ctx context.Context, only []task.ID) ([]TaskState, error) {
	w.scanMu.Lock()
	defer w.scanMu.Unlock()
	w.loadHistory(ctx)
	groups, err := w.groups(ctx)
	if err != nil {
		return nil, err
	}
	if only != nil {
		for k, es := range groups {
			if !slices.ContainsFunc(es, func(e entry) bool { return slices.Contains(only, e.w.TaskID) }) {
				delete(groups, k)
			}
		}
	}
	w.readFiles(ctx, groups)
	var out []TaskState
	for _, k := range sortedKeys(groups) {
		out = append(out, w.checkGroup(ctx, k, groups[k], look, true)...)
	}
	slices.SortStableFunc(out, func(a, b TaskState) int {
		if a.Behind != b.Behind {
			return b.Behind - a.Behind
		}
		return strings.Compare(string(a.TaskID), string(b.TaskID))
	})
	return out, nil
}

// RefusedError is a rebase request that cannot be carried out, with why.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

// Request is the answer to a rebase request for one task.
type Request struct {
	TaskID task.ID `json:"task_id"`
	// Outcome is "requested" (the executor rebases the branch at the
	// task's next tool boundary), "up_to_date" or "refused".
	Outcome string `json:"outcome"`
	Note    string `json:"note"`
	Behind  int    `json:"behind,omitempty"`
	Main    string `json:"main,omitempty"`
}

// RequestRebase asks for blocking rebases, as `task rebase` does: of the
// tasks in ids, or with all of every watched task that is behind main.
// It goes through the same door as the watcher's own blocking notices.
func (w *Monitor) RequestRebase(ctx context.Context, ids []task.ID, all bool) ([]Request, error) {
	var only []task.ID // all: every repository
	if !all {
		only = ids
		if only == nil {
			only = []task.ID{}
		}
	}
	states, err := w.status(ctx, only)
	if err != nil {
		return nil, err
	}
	byID := map[task.ID]TaskState{}
	for _, s := range states {
		byID[s.TaskID] = s
	}
	if all {
		ids = nil
		for _, s := range states {
			if s.Behind > 0 && s.Status != task.Merging && s.State != StateError {
				ids = append(ids, s.TaskID)
			}
		}
	}
	var out []Request
	for _, id := range ids {
		r, err := w.request(ctx, id, byID)
		var re *RefusedError
		switch {
		case errors.As(err, &re) && (all || len(ids) > 1):
			out = append(out, Request{TaskID: id, Outcome: "refused", Note: re.Msg})
		case err != nil:
			return out, err
		default:
			out = append(out, r)
		}
	}
	return out, nil
}

func (w *Monitor) request(ctx context.Context, id task.ID, byID map[task.ID]TaskState) (Request, error) {
	t, err := w.st.GetTask(ctx, id)
	if err != nil {
		return Request{}, err
	}
	ts, ok := byID[id]
	switch {
	case t.Status.Terminal():
		return Request{}, &RefusedError{Msg: fmt.Sprintf("task %s is %s; there is nothing to rebase", id, t.Status)}
	case t.Status == task.Merging:
		return Request{}, &RefusedError{Msg: fmt.Sprintf("task %s is in the merge queue, which brings its branch up to date itself", id)}
	case !ok:
		if _, err := w.st.GetWorktree(ctx, id); errors.Is(err, store.ErrNotFound) {
			return Request{}, &RefusedError{Msg: fmt.Sprintf("task %s has not started: its worktree is made from the current main when it starts", id)}
		}
		return Request{}, &RefusedError{Msg: fmt.Sprintf("task %s has no active worktree to rebase", id)}
	case ts.State == StateError:
		return Request{}, &RefusedError{Msg: fmt.Sprintf("task %s cannot be rebased: %s", id, ts.Note)}
	case ts.Behind == 0:
		return Request{TaskID: id, Outcome: "up_to_date", Note: "already has " + ts.Main + " (" + words.ShortCommit(ts.MainCommit) + ")", Main: ts.Main}, nil
	}
	w.emit(ctx, id, event.RebaseRequired{Main: ts.Main, MainCommit: ts.MainCommit, CommitsBehind: ts.Behind, NewCommits: ts.NewCommits,
		Urgency: string(Blocking), Conflicts: ts.Conflicts, Overlap: ts.Overlap, Manual: true})
	attrs := map[string]string{"main": ts.Main, "main_commit": words.ShortCommit(ts.MainCommit), "behind": fmt.Sprint(ts.Behind)}
	if err := w.inject(ctx, inject.Injection{TaskID: id, Kind: inject.Rebase, Source: inject.FromUser, Urgency: Blocking, Attrs: attrs,
		Text: noticeText(ts, Blocking, false), Urgent: true}); err != nil {
		return Request{}, err
	}
	note := "rebases at its next tool boundary"
	switch t.Status {
	case task.Paused:
		note = "rebases when it is resumed (`neuraphage task resume " + string(id) + "`)"
	case task.Queued:
		note = "rebases when it starts"
	case task.Waiting:
		note = "woken to rebase; it then waits for you again"
	}
	return Request{TaskID: id, Outcome: "requested", Note: note, Behind: ts.Behind, Main: ts.Main}, nil
}

// Reply is the outcome of a blocking rebase, for the task.
type Reply struct {
	Text    string
	Outcome inject.Outcome // Rebased, UpToDate, Conflict, Failed
	// Pause is set when the task must pause (a conflict with
	// on_conflict: pause).
	Pause string
}

// PerformRebase carries out a blocking rebase request at t's turn
// boundary (the executor calls it while none of t's tools runs): it
// rebases the branch onto main as it is now, logs RebaseCompleted or
// RebaseConflict, and says what to tell the task.
func (w *Monitor) PerformRebase(ctx context.Context, t task.Task) Reply {
	start := w.now()
	wt, err := w.st.GetWorktree(ctx, t.ID)
	if err != nil {
		return w.failed(ctx, t.ID, "", err)
	}
	k := groupKey{repo: wt.Repo, branch: w.cfg.MainBranch}
	if k.branch == "" {
		k.branch = wt.Base
	}
	commit, ref, err := w.resolveMain(ctx, k)
	if err != nil {
		return w.failed(ctx, t.ID, k.branch, err)
	}
	res, err := w.wt.Rebase(ctx, t.ID, commit)
	if err != nil {
		return w.failed(ctx, t.ID, ref, err)
	}
	now := w.now().UTC()
	switch res.Outcome {
	case worktree.Rebased, worktree.UpToDate:
		w.emit(ctx, t.ID, event.RebaseCompleted{Main: ref, PreviousHead: res.PreviousHead, NewHead: res.NewHead,
			UpToDate: res.Outcome == worktree.UpToDate, DurationMs: w.now().Sub(start).Milliseconds()})
		w.mu.Lock()
		ts := w.state(t.ID)
		if res.Outcome == worktree.Rebased {
			ts.LastRebased = &now
			w.health.Rebases++
		}
		ts.LastNotice, ts.LastNoticeMain, ts.LastNoticeUrgency = &now, commit, Blocking
		w.mu.Unlock()
		if res.Outcome == worktree.UpToDate {
			return Reply{Outcome: inject.UpToDate, Text: fmt.Sprintf("Your branch %s already has %s (%s); nothing was changed.", wt.Branch, ref, words.ShortCommit(commit))}
		}
		carried := ""
		if res.Carried {
			carried = " Your uncommitted changes were carried over."
		}
		return Reply{Outcome: inject.Rebased, Text: fmt.Sprintf("Neuraphage rebased your branch %s onto %s (%s) at this boundary: it was at %s and is now at %s.%s "+
			"Files may have changed under you: re-read the files you are working on before you edit them again.",
			wt.Branch, ref, words.ShortCommit(commit), words.ShortCommit(res.PreviousHead), words.ShortCommit(res.NewHead), carried)}
	}
	// A conflict: nothing was changed.
	pause := w.cfg.PauseOnConflict
	w.emit(ctx, t.ID, event.RebaseConflict{Main: ref, Files: res.Files, Details: res.Details, Predicted: res.Predicted, Paused: pause})
	w.mu.Lock()
	w.health.Conflicts++
	ts := w.state(t.ID)
	ts.LastNotice, ts.LastNoticeMain, ts.LastNoticeUrgency = &now, commit, Blocking
	w.mu.Unlock()
	files := "files git could not merge"
	if len(res.Files) > 0 {
		files = strings.Join(res.Files, ", ")
	}
	text := fmt.Sprintf("Neuraphage tried to rebase your branch %s onto %s (%s) and stopped: it conflicts in %s. Nothing was changed: "+
		"your branch, your files and your uncommitted work are exactly as they were.\n"+
		"Finish your current step; then bring your branch up to date yourself (commit, git merge %s, resolve the conflicts keeping both changes, commit), "+
		"or carry on and resolve them when the merge queue asks you at the end.", wt.Branch, ref, words.ShortCommit(commit), files, ref)
	r := Reply{Outcome: inject.Conflict, Text: text}
	if pause {
		r.Pause = fmt.Sprintf("rebase onto %s conflicts in %s; nothing was changed. Rebase in %s by hand, or resume the task to let it resolve the conflicts", ref, files, wt.Path)
	}
	return r
}

// failed reports a rebase that was refused, or that stopped with the
// task's work set aside (then the task is paused: the user must look).
func (w *Monitor) failed(ctx context.Context, id task.ID, ref string, err error) Reply {
	var aside *worktree.AsideError
	if errors.As(err, &aside) {
		w.emit(ctx, id, event.RebaseConflict{Main: ref, Details: "rebase stopped, work set aside: " + err.Error(), Paused: true})
		w.log.Error("a rebase stopped with the task's work set aside", "task_id", id, "err", err)
		return Reply{Outcome: inject.Failed, Text: "Neuraphage's rebase of your branch onto main stopped half way: " + err.Error() +
			". Your uncommitted work is safe there; the task is paused until the user restores it.",
			Pause: "rebase stopped with the work set aside: " + err.Error()}
	}
	w.emit(ctx, id, event.RebaseConflict{Main: ref, Details: "not rebased: " + err.Error()})
	w.log.Warn("rebasing a task's branch", "task_id", id, "err", err)
	return Reply{Outcome: inject.Failed, Text: "Neuraphage could not rebase your branch onto main: " + err.Error() + ". Nothing was changed."}
}
