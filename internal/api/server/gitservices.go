package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/mainwatch"
	"github.com/neuraphage/neuraphage-go/internal/merge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// GitServices are the services behind the worktree, merge-queue and rebase
// routes, returning domain types; NewGit serves them.
type GitServices struct {
	// Tasks resolves references and asks for rebases (the tasks service).
	Tasks interface {
		Resolve(ctx context.Context, ref string) (task.ID, error)
		RequestRebase(ctx context.Context, ids []task.ID, all bool) ([]mainwatch.Request, error)
	}
	Worktrees interface {
		List(ctx context.Context) ([]worktree.Info, error)
		Inspect(ctx context.Context, id task.ID) (worktree.Info, error)
		Prune(ctx context.Context) ([]worktree.PruneResult, error)
		PruneArchives(ctx context.Context, olderThan time.Duration) ([]worktree.ArchivePruneResult, error)
		Restore(ctx context.Context, id task.ID) (store.Worktree, error)
	}
	Merges interface {
		Status(ctx context.Context, recent int) (open, closed []store.MergeEntry, err error)
		Enqueue(ctx context.Context, id task.ID) (store.MergeEntry, error)
		Retry(ctx context.Context, id task.ID) (store.MergeEntry, error)
		Cancel(ctx context.Context, id task.ID, reason string) (store.MergeEntry, error)
	}
	// Main is the main watcher's view of task branches.
	Main interface {
		Status(ctx context.Context) ([]mainwatch.TaskState, error)
		Health() mainwatch.Health
	}
}

// NewGit returns the Git the server needs from the services: references
// resolved, the records turned into wire types, and the services' refusals
// (the state refuses the request) marked as *RefusedError.
func NewGit(s GitServices) Git { return gitServices{s} }

type gitServices struct{ s GitServices }

// refused marks the services' refusals of a request as *RefusedError.
func refused(err error) error {
	var (
		m *merge.RefusedError
		w *worktree.RestoreRefusedError
		r *mainwatch.RefusedError
	)
	if errors.As(err, &m) || errors.As(err, &w) || errors.As(err, &r) {
		return &RefusedError{Err: err}
	}
	return err
}

func (g gitServices) Worktrees(ctx context.Context) ([]api.Worktree, error) {
	ins, err := g.s.Worktrees.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Worktree, len(ins))
	for i, in := range ins {
		out[i] = apiWorktree(in)
	}
	return out, nil
}

func (g gitServices) Worktree(ctx context.Context, ref string) (api.Worktree, error) {
	id, err := g.s.Tasks.Resolve(ctx, ref)
	if err != nil {
		return api.Worktree{}, err
	}
	return g.inspect(ctx, id)
}

// inspect returns a task's worktree; a problem reading it on disk (its
// repository gone, say) goes into the note, as List does.
func (g gitServices) inspect(ctx context.Context, id task.ID) (api.Worktree, error) {
	in, err := g.s.Worktrees.Inspect(ctx, id)
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

func (g gitServices) PruneWorktrees(ctx context.Context) ([]api.PruneResult, error) {
	res, err := g.s.Worktrees.Prune(ctx)
	out := make([]api.PruneResult, len(res))
	for i, r := range res {
		out[i] = api.PruneResult{TaskID: r.TaskID, Path: r.Path, Removed: r.Removed, Reason: r.Reason}
	}
	return out, err
}

func (g gitServices) PruneArchives(ctx context.Context, olderThan time.Duration) ([]api.ArchivePruneResult, error) {
	res, err := g.s.Worktrees.PruneArchives(ctx, olderThan)
	out := make([]api.ArchivePruneResult, len(res))
	for i, r := range res {
		out[i] = api.ArchivePruneResult{TaskID: r.TaskID, Dir: r.Dir, Files: r.Files, Removed: r.Removed, Reason: r.Reason}
	}
	return out, err
}

func (g gitServices) RestoreWorktree(ctx context.Context, ref string) (api.Worktree, error) {
	id, err := g.s.Tasks.Resolve(ctx, ref)
	if err != nil {
		return api.Worktree{}, err
	}
	if _, err := g.s.Worktrees.Restore(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return api.Worktree{}, noWorktree(id)
		}
		return api.Worktree{}, refused(err)
	}
	return g.inspect(ctx, id)
}

func (g gitServices) MergeStatus(ctx context.Context, recent int) (api.MergeStatus, error) {
	open, closed, err := g.s.Merges.Status(ctx, recent)
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

func (g gitServices) MergeEnqueue(ctx context.Context, ref string) (api.MergeEntry, error) {
	return g.merge(ctx, ref, g.s.Merges.Enqueue)
}

func (g gitServices) MergeRetry(ctx context.Context, ref string) (api.MergeEntry, error) {
	return g.merge(ctx, ref, g.s.Merges.Retry)
}

func (g gitServices) MergeCancel(ctx context.Context, ref, reason string) (api.MergeEntry, error) {
	return g.merge(ctx, ref, func(ctx context.Context, id task.ID) (store.MergeEntry, error) {
		return g.s.Merges.Cancel(ctx, id, reason)
	})
}

func (g gitServices) merge(ctx context.Context, ref string, op func(context.Context, task.ID) (store.MergeEntry, error)) (api.MergeEntry, error) {
	id, err := g.s.Tasks.Resolve(ctx, ref)
	if err != nil {
		return api.MergeEntry{}, err
	}
	e, err := op(ctx, id)
	if err != nil {
		return api.MergeEntry{}, refused(err)
	}
	return apiMergeEntry(e), nil
}

func (g gitServices) RebaseStatus(ctx context.Context) (api.RebaseStatus, error) {
	states, err := g.s.Main.Status(ctx)
	if err != nil {
		return api.RebaseStatus{}, err
	}
	h := g.s.Main.Health()
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

func (g gitServices) RebaseTask(ctx context.Context, ref string) (api.RebaseRequest, error) {
	id, err := g.s.Tasks.Resolve(ctx, ref)
	if err != nil {
		return api.RebaseRequest{}, err
	}
	rs, err := g.s.Tasks.RequestRebase(ctx, []task.ID{id}, false)
	if err != nil {
		return api.RebaseRequest{}, refused(err)
	}
	return apiRebaseRequest(rs[0]), nil
}

func (g gitServices) RebaseAll(ctx context.Context) ([]api.RebaseRequest, error) {
	rs, err := g.s.Tasks.RequestRebase(ctx, nil, true)
	if err != nil {
		return nil, err
	}
	out := make([]api.RebaseRequest, len(rs))
	for i, r := range rs {
		out[i] = apiRebaseRequest(r)
	}
	return out, nil
}

func apiWorktree(in worktree.Info) api.Worktree {
	w := in.Worktree
	return api.Worktree{
		TaskID: w.TaskID, Repo: w.Repo, Branch: w.Branch, Base: w.Base, BaseCommit: w.BaseCommit,
		Path: w.Path, State: string(w.State), Port: w.Port, Archive: w.Archive,
		Landed: w.Landed, LandedTip: w.LandedTip, Note: w.Note, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
		Exists: in.Exists, Changed: in.Changed, Untracked: in.Untracked, InProgress: in.InProgress, Ignored: in.Ignored,
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

func apiRebaseRequest(r mainwatch.Request) api.RebaseRequest {
	return api.RebaseRequest{TaskID: r.TaskID, Outcome: r.Outcome, Note: r.Note, Behind: r.Behind, Main: r.Main}
}
