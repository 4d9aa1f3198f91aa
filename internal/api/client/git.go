package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// Worktrees lists every worktree record with its state on disk, and the
// stray worktrees found in their repositories.
func (c *Client) Worktrees(ctx context.Context) ([]api.Worktree, error) {
	var l api.WorktreeList
	err := c.do(ctx, http.MethodGet, "/v1/worktrees", nil, &l)
	return l.Worktrees, err
}

// Worktree returns one task's worktree.
func (c *Client) Worktree(ctx context.Context, ref string) (api.Worktree, error) {
	var w api.Worktree
	err := c.do(ctx, http.MethodGet, "/v1/worktrees/"+url.PathEscape(ref), nil, &w)
	return w, err
}

// PruneWorktrees removes the worktrees of finished tasks that hold nothing
// uncommitted, and says what it did with each.
func (c *Client) PruneWorktrees(ctx context.Context) ([]api.PruneResult, error) {
	var rep api.PruneReport
	err := c.do(ctx, http.MethodPost, "/v1/worktrees/prune", nil, &rep)
	return rep.Results, err
}

// PruneArchives deletes the ignored-files archives no longer needed (see
// api.ArchivePruneRequest) and says what became of each.
func (c *Client) PruneArchives(ctx context.Context, olderThan time.Duration) ([]api.ArchivePruneResult, error) {
	var rep api.ArchivePruneReport
	err := c.do(ctx, http.MethodPost, "/v1/worktrees/prune-archives", api.ArchivePruneRequest{OlderThanSeconds: int64(olderThan / time.Second)}, &rep)
	return rep.Results, err
}

// RestoreWorktree brings back a task's removed (or missing) worktree.
func (c *Client) RestoreWorktree(ctx context.Context, ref string) (api.Worktree, error) {
	var w api.Worktree
	err := c.do(ctx, http.MethodPost, "/v1/worktrees/"+url.PathEscape(ref)+"/restore", nil, &w)
	return w, err
}

// MergeStatus returns the merge queue's open entries and its recent newest
// closed ones.
func (c *Client) MergeStatus(ctx context.Context, recent int) (api.MergeStatus, error) {
	var st api.MergeStatus
	err := c.do(ctx, http.MethodGet, "/v1/merge?recent="+strconv.Itoa(recent), nil, &st)
	return st, err
}

// MergeEnqueue puts a task's branch in the merge queue.
func (c *Client) MergeEnqueue(ctx context.Context, ref string) (api.MergeEntry, error) {
	var e api.MergeEntry
	err := c.do(ctx, http.MethodPost, "/v1/merge/"+url.PathEscape(ref)+"/enqueue", nil, &e)
	return e, err
}

// MergeRetry takes a task's parked or waiting merge up again.
func (c *Client) MergeRetry(ctx context.Context, ref string) (api.MergeEntry, error) {
	var e api.MergeEntry
	err := c.do(ctx, http.MethodPost, "/v1/merge/"+url.PathEscape(ref)+"/retry", nil, &e)
	return e, err
}

// MergeCancel takes a task's open entry out of the merge queue.
func (c *Client) MergeCancel(ctx context.Context, ref, reason string) (api.MergeEntry, error) {
	var e api.MergeEntry
	err := c.do(ctx, http.MethodPost, "/v1/merge/"+url.PathEscape(ref)+"/cancel", api.MergeRequest{Reason: reason}, &e)
	return e, err
}

// RebaseStatus returns the main watcher's health and where every watched
// task branch stands against main now.
func (c *Client) RebaseStatus(ctx context.Context) (api.RebaseStatus, error) {
	var st api.RebaseStatus
	err := c.do(ctx, http.MethodGet, "/v1/rebase", nil, &st)
	return st, err
}

// RebaseTask asks for a rebase of one task's branch onto main, carried out
// at the task's next tool boundary. A refusal is an *Error with
// api.CodeConflict.
func (c *Client) RebaseTask(ctx context.Context, ref string) (api.RebaseRequest, error) {
	var r api.RebaseRequest
	err := c.do(ctx, http.MethodPost, "/v1/tasks/"+url.PathEscape(ref)+"/rebase", nil, &r)
	return r, err
}

// RebaseAll asks for a rebase of every task whose branch is behind main;
// a task that cannot be rebased is in the answer as refused.
func (c *Client) RebaseAll(ctx context.Context) ([]api.RebaseRequest, error) {
	var rs []api.RebaseRequest
	err := c.do(ctx, http.MethodPost, "/v1/rebase", nil, &rs)
	return rs, err
}
