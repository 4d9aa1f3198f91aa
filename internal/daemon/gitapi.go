package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/server"
	"github.com/neuraphage/neuraphage-go/internal/control"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/mainwatch"
	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// gitAPI is the API's view of the worktrees and the merge queue: task
// references resolved through the control plane, the records turned into
// wire types, and the refusals of the current state marked as such
// (server.RefusedError) by looking at that state, never at error text.
type gitAPI struct {
	ctl *control.Control
	wt  *worktree.Manager
	mq  *merge.Queue
	mw  *mainwatch.Monitor
}

func newGitAPI(ctl *control.Control, rt *runtime) server.Git {
	return &gitAPI{ctl: ctl, wt: rt.wt, mq: rt.mq, mw: rt.mw}
}

var _ server.Git = (*gitAPI)(nil)

func (g *gitAPI) Worktrees(ctx context.Context) ([]api.Worktree, error) {
	ins, err := g.wt.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Worktree, len(ins))
	for i, in := range ins {
		out[i] = apiWorktree(in)
	}
	return out, nil
}

func (g *gitAPI) Worktree(ctx context.Context, ref string) (api.Worktree, error) {
	id, err := g.ctl.Resolve(ctx, ref)
	if err != nil {
		return api.Worktree{}, err
	}
	return g.inspect(ctx, id)
}

// inspect returns a task's worktree; a problem reading it on disk (its
// repository gone, say) goes into the note, as List does.
func (g *gitAPI) inspect(ctx context.Context, id task.ID) (api.Worktree, error) {
	in, err := g.wt.Inspect(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return api.Worktree{}, noWorktree(id)
	case err != nil && in.TaskID == "":
		return api.Worktree{}, err
	case err != nil:
		in.Note = strings.TrimSpace(in.Note + " " + err.Error())
	}
	return apiWorktree(in), nil
}

func noWorktree(id task.ID) error {
	return fmt.Errorf("task %s has no worktree (it has not run in a repository): %w", id, store.ErrNotFound)
}

func (g *gitAPI) PruneWorktrees(ctx context.Context) ([]api.PruneResult, error) {
	res, err := g.wt.Prune(ctx)
	out := make([]api.PruneResult, len(res))
	for i, r := range res {
		out[i] = api.PruneResult{TaskID: r.TaskID, Path: r.Path, Removed: r.Removed, Reason: r.Reason}
	}
	return out, err
}

func (g *gitAPI) RestoreWorktree(ctx context.Context, ref string) (api.Worktree, error) {
	id, err := g.ctl.Resolve(ctx, ref)
	if err != nil {
		return api.Worktree{}, err
	}
	if _, err := g.wt.Restore(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return api.Worktree{}, noWorktree(id)
		}
		return api.Worktree{}, g.restoreRefusal(ctx, id, err)
	}
	return g.inspect(ctx, id)
}

// restoreRefusal marks err, a failed restore, as a refusal when the state
// on disk refuses it: something else occupies the worktree's directory, the
// branch is gone with no archive of it, or the branch is checked out
// elsewhere. Anything else is a failure.
func (g *gitAPI) restoreRefusal(ctx context.Context, id task.ID, err error) error {
	if ctx.Err() != nil || errors.Is(err, store.ErrClosed) {
		return err
	}
	w, gerr := g.wt.Get(ctx, id)
	if gerr != nil {
		return err
	}
	if _, serr := os.Lstat(w.Path); serr == nil {
		if ok, _ := g.worktreeAt(ctx, w); !ok {
			return &server.RefusedError{Err: err}
		}
	}
	branch, berr := git.BranchExists(ctx, w.Repo, w.Branch)
	if berr != nil {
		return err
	}
	if !branch {
		if _, aerr := git.RevParse(ctx, w.Repo, worktree.ArchiveRef(id)); errors.Is(aerr, git.ErrNoRef) {
			return &server.RefusedError{Err: err}
		}
		return err
	}
	list, lerr := git.Worktrees(ctx, w.Repo)
	if lerr != nil {
		return err
	}
	for _, wt := range list {
		if wt.Branch == w.Branch && wt.Path != w.Path {
			return &server.RefusedError{Err: err}
		}
	}
	return err
}

// worktreeAt reports whether w's directory is a work tree of its own branch.
func (g *gitAPI) worktreeAt(ctx context.Context, w store.Worktree) (bool, error) {
	list, err := git.Worktrees(ctx, w.Repo)
	if err != nil {
		return false, err
	}
	for _, wt := range list {
		if wt.Path == w.Path && wt.Branch == w.Branch && !wt.Prunable {
			return true, nil
		}
	}
	return false, nil
}

func (g *gitAPI) MergeStatus(ctx context.Context, recent int) (api.MergeStatus, error) {
	open, closed, err := g.mq.Status(ctx, recent)
	if err != nil {
		return api.MergeStatus{}, err
	}
	st := api.MergeStatus{Open: make([]api.MergeEntry, len(open)), Recent: make([]api.MergeEntry, len(closed))}
	for i, e := range open {
		st.Open[i] = apiMergeEntry(e)
	}
	for i, e := range closed {
		st.Recent[i] = apiMergeEntry(e)
	}
	return st, nil
}

func (g *gitAPI) MergeEnqueue(ctx context.Context, ref string) (api.MergeEntry, error) {
	id, err := g.ctl.Resolve(ctx, ref)
	if err != nil {
		return api.MergeEntry{}, err
	}
	e, err := g.mq.Enqueue(ctx, id)
	if err != nil {
		return api.MergeEntry{}, g.enqueueRefusal(ctx, id, err)
	}
	return apiMergeEntry(e), nil
}

func (g *gitAPI) MergeRetry(ctx context.Context, ref string) (api.MergeEntry, error) {
	id, err := g.ctl.Resolve(ctx, ref)
	if err != nil {
		return api.MergeEntry{}, err
	}
	e, err := g.mq.Retry(ctx, id)
	if err != nil {
		// With nothing open, a retry is an enqueue and refused as one.
		return api.MergeEntry{}, g.enqueueRefusal(ctx, id, err)
	}
	return apiMergeEntry(e), nil
}

// enqueueRefusal marks err, a failed enqueue, as a refusal when the task's
// state refuses it: the task is still in flight, or it has no worktree and
// so no branch. Anything else is passed on (a task with an open entry
// already is store.ErrExists, a conflict too).
func (g *gitAPI) enqueueRefusal(ctx context.Context, id task.ID, err error) error {
	if ctx.Err() != nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrClosed) {
		return err
	}
	d, gerr := g.ctl.Get(ctx, string(id))
	if gerr != nil {
		return err
	}
	switch d.Task.Status {
	case task.Queued, task.Running, task.Waiting:
		return &server.RefusedError{Err: err}
	}
	if _, werr := g.wt.Get(ctx, id); errors.Is(werr, store.ErrNotFound) {
		return &server.RefusedError{Err: err}
	}
	return err
}

func (g *gitAPI) MergeCancel(ctx context.Context, ref, reason string) (api.MergeEntry, error) {
	id, err := g.ctl.Resolve(ctx, ref)
	if err != nil {
		return api.MergeEntry{}, err
	}
	e, err := g.mq.Cancel(ctx, id, reason)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrClosed) && !g.hasOpenEntry(ctx, id) {
			// The entry closed meanwhile (it landed, say): nothing to cancel.
			return api.MergeEntry{}, &server.RefusedError{Err: err}
		}
		return api.MergeEntry{}, err
	}
	return apiMergeEntry(e), nil
}

// hasOpenEntry reports whether task id has an open merge entry; true when
// that cannot be read.
func (g *gitAPI) hasOpenEntry(ctx context.Context, id task.ID) bool {
	open, _, err := g.mq.Status(ctx, 0)
	if err != nil {
		return true
	}
	for _, e := range open {
		if e.TaskID == id {
			return true
		}
	}
	return false
}

func apiWorktree(in worktree.Info) api.Worktree {
	w := in.Worktree
	return api.Worktree{
		TaskID: w.TaskID, Repo: w.Repo, Branch: w.Branch, Base: w.Base, BaseCommit: w.BaseCommit,
		Path: w.Path, State: string(w.State), Port: w.Port, Archive: w.Archive,
		Landed: w.Landed, LandedTip: w.LandedTip, Note: w.Note, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
		Exists: in.Exists, Changed: in.Changed, Untracked: in.Untracked, InProgress: in.InProgress,
		Tip: in.Tip, Ahead: in.Ahead, Behind: in.Behind, Merged: in.Merged, Archived: in.Archived, Stray: in.Stray,
	}
}

func apiMergeEntry(e store.MergeEntry) api.MergeEntry {
	return api.MergeEntry{
		ID: e.ID, TaskID: e.TaskID, Repo: e.Repo, Branch: e.Branch, Target: e.Target, State: string(e.State),
		Detail: e.Detail, Files: e.Files, Attempts: e.Attempts, Commit: e.Commit, PRURL: e.PRURL,
		EnqueuedAt: e.EnqueuedAt, UpdatedAt: e.UpdatedAt, StartedAt: e.StartedAt, FinishedAt: e.FinishedAt,
	}
}

func (g *gitAPI) RebaseStatus(ctx context.Context) (api.RebaseStatus, error) {
	states, err := g.mw.Status(ctx)
	if err != nil {
		return api.RebaseStatus{}, err
	}
	h := g.mw.Health()
	out := api.RebaseStatus{
		Watcher: api.MainWatcher{Enabled: h.Enabled, Urgency: string(h.Urgency), Watching: h.Watching,
			Cycles: h.Cycles, Notices: h.Notices, Rebases: h.Rebases, Conflicts: h.Conflicts, Panics: h.Panics},
		Tasks: make([]api.TaskRebase, len(states)),
	}
	if !h.LastCycle.IsZero() {
		out.Watcher.LastCycle = &h.LastCycle
	}
	for _, r := range h.Repos {
		out.Watcher.Repos = append(out.Watcher.Repos, api.MainRef{Repo: r.Repo, Main: r.Main, Commit: r.Commit, Error: r.Error, FetchError: r.FetchErr})
	}
	for i, s := range states {
		out.Tasks[i] = api.TaskRebase{TaskID: s.TaskID, Status: s.Status, Repo: s.Repo, Branch: s.Branch, Main: s.Main, MainCommit: s.MainCommit,
			Behind: s.Behind, Ahead: s.Ahead, NewCommits: s.NewCommits, Forecast: s.Forecast, Conflicts: s.Conflicts, Overlap: s.Overlap,
			State: s.State, Note: s.Note, LastNotice: s.LastNotice, LastNoticeMain: s.LastNoticeMain, LastRebased: s.LastRebased}
	}
	return out, nil
}

func (g *gitAPI) RebaseTask(ctx context.Context, ref string) (api.RebaseRequest, error) {
	id, err := g.ctl.Resolve(ctx, ref)
	if err != nil {
		return api.RebaseRequest{}, err
	}
	rs, err := g.mw.RequestRebase(ctx, []task.ID{id}, false)
	if re := (*mainwatch.RefusedError)(nil); errors.As(err, &re) {
		return api.RebaseRequest{}, &server.RefusedError{Err: err}
	}
	if err != nil {
		return api.RebaseRequest{}, err
	}
	return apiRebaseRequest(rs[0]), nil
}

func (g *gitAPI) RebaseAll(ctx context.Context) ([]api.RebaseRequest, error) {
	rs, err := g.mw.RequestRebase(ctx, nil, true)
	if err != nil {
		return nil, err
	}
	out := make([]api.RebaseRequest, len(rs))
	for i, r := range rs {
		out[i] = apiRebaseRequest(r)
	}
	return out, nil
}

func apiRebaseRequest(r mainwatch.Request) api.RebaseRequest {
	return api.RebaseRequest{TaskID: r.TaskID, Outcome: r.Outcome, Note: r.Note, Behind: r.Behind, Main: r.Main}
}
