package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Git is what the server needs for worktrees and the merge queue. A ref is
// a task reference as the user typed it.
type Git interface {
	Worktrees(ctx context.Context) ([]api.Worktree, error)
	Worktree(ctx context.Context, ref string) (api.Worktree, error)
	PruneWorktrees(ctx context.Context) ([]api.PruneResult, error)
	// PruneArchives deletes the ignored-files archives no longer needed
	// (olderThan > 0: also those of worktrees removed longer ago).
	PruneArchives(ctx context.Context, olderThan time.Duration) ([]api.ArchivePruneResult, error)
	RestoreWorktree(ctx context.Context, ref string) (api.Worktree, error)
	MergeStatus(ctx context.Context, recent int) (api.MergeStatus, error)
	MergeEnqueue(ctx context.Context, ref string) (api.MergeEntry, error)
	MergeRetry(ctx context.Context, ref string) (api.MergeEntry, error)
	MergeCancel(ctx context.Context, ref, reason string) (api.MergeEntry, error)
	// RebaseStatus compares every watched task branch with main now.
	RebaseStatus(ctx context.Context) (api.RebaseStatus, error)
	// RebaseTask asks for a blocking rebase of one task; RebaseAll of
	// every task that is behind main.
	RebaseTask(ctx context.Context, ref string) (api.RebaseRequest, error)
	RebaseAll(ctx context.Context) ([]api.RebaseRequest, error)
}

// RefusedError is a request the current state refuses, with the reason for
// the user: the task is still running, it has no branch to merge, the
// worktree's directory is taken. It answers 409 conflict with Err's message.
// A Git implementation wraps its refusals in it.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// defaultRecent is how many closed merge entries GET /v1/merge returns
// without ?recent.
const defaultRecent = 20

// Hints for a reference that names no worktree, merge entry or task.
const (
	worktreeHint = "`neuraphage worktree list` lists the worktrees; `neuraphage task list --all` every task"
	mergeHint    = "`neuraphage merge status` shows the merge queue"
	rebaseHint   = "`neuraphage rebase status` shows the watched task branches"
)

// git wraps a worktree, merge or rebase handler: without a Git it answers
// 503.
func (s *Server) git(h func(http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Git == nil {
			writeJSON(w, http.StatusServiceUnavailable, api.Error{
				Code:    api.CodeUnavailable,
				Message: "this daemon runs without worktrees, the merge queue and the main watcher",
				Hint:    "restart the daemon (`neuraphage daemon stop`, then any command starts it again)",
			})
			return
		}
		h(w, r)
	}
}

// gitFail answers a worktree, merge or rebase error: refusals are conflicts, a
// reference naming nothing gets hint; the rest is mapped as fail does.
func (s *Server) gitFail(w http.ResponseWriter, r *http.Request, err error, hint string) {
	var ref *RefusedError
	switch {
	case errors.As(err, &ref), errors.Is(err, store.ErrExists):
		writeJSON(w, http.StatusConflict, api.Error{Code: api.CodeConflict, Message: err.Error()})
	case errors.Is(err, store.ErrNotFound):
		writeJSON(w, http.StatusNotFound, api.Error{Code: api.CodeNotFound, Message: err.Error(), Hint: hint})
	default:
		s.fail(w, r, err)
	}
}

func (s *Server) listWorktrees(w http.ResponseWriter, r *http.Request) {
	ws, err := s.cfg.Git.Worktrees(r.Context())
	if err != nil {
		s.gitFail(w, r, err, worktreeHint)
		return
	}
	if ws == nil {
		ws = []api.Worktree{}
	}
	writeJSON(w, http.StatusOK, api.WorktreeList{Worktrees: ws})
}

func (s *Server) getWorktree(w http.ResponseWriter, r *http.Request) {
	wt, err := s.cfg.Git.Worktree(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.gitFail(w, r, err, worktreeHint)
		return
	}
	writeJSON(w, http.StatusOK, wt)
}

func (s *Server) pruneWorktrees(w http.ResponseWriter, r *http.Request) {
	res, err := s.cfg.Git.PruneWorktrees(r.Context())
	if err != nil {
		s.gitFail(w, r, err, worktreeHint)
		return
	}
	if res == nil {
		res = []api.PruneResult{}
	}
	writeJSON(w, http.StatusOK, api.PruneReport{Results: res})
}

func (s *Server) pruneArchives(w http.ResponseWriter, r *http.Request) {
	var req api.ArchivePruneRequest
	if !decode(w, r, &req) {
		return
	}
	if req.OlderThanSeconds < 0 {
		writeJSON(w, http.StatusBadRequest, api.Error{Code: api.CodeInvalid, Message: "older_than_seconds must not be negative"})
		return
	}
	res, err := s.cfg.Git.PruneArchives(r.Context(), time.Duration(req.OlderThanSeconds)*time.Second)
	if err != nil {
		s.gitFail(w, r, err, worktreeHint)
		return
	}
	if res == nil {
		res = []api.ArchivePruneResult{}
	}
	writeJSON(w, http.StatusOK, api.ArchivePruneReport{Results: res})
}

func (s *Server) restoreWorktree(w http.ResponseWriter, r *http.Request) {
	wt, err := s.cfg.Git.RestoreWorktree(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.gitFail(w, r, err, worktreeHint)
		return
	}
	writeJSON(w, http.StatusOK, wt)
}

func (s *Server) mergeStatus(w http.ResponseWriter, r *http.Request) {
	recent := defaultRecent
	if v := r.URL.Query().Get("recent"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.fail(w, r, &task.InvalidError{Field: "recent", Msg: "must be a number of entries, 0 or more"})
			return
		}
		recent = n
	}
	st, err := s.cfg.Git.MergeStatus(r.Context(), recent)
	if err != nil {
		s.gitFail(w, r, err, mergeHint)
		return
	}
	if st.Open == nil {
		st.Open = []api.MergeEntry{}
	}
	if st.Recent == nil {
		st.Recent = []api.MergeEntry{}
	}
	writeJSON(w, http.StatusOK, st)
}

// mergeAction serves enqueue and retry.
func (s *Server) mergeAction(op func(Git, context.Context, string) (api.MergeEntry, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		e, err := op(s.cfg.Git, r.Context(), r.PathValue("ref"))
		if err != nil {
			s.gitFail(w, r, err, mergeHint)
			return
		}
		writeJSON(w, http.StatusOK, e)
	}
}

func (s *Server) mergeCancel(w http.ResponseWriter, r *http.Request) {
	var req api.MergeRequest
	if r.ContentLength != 0 && !decode(w, r, &req) {
		return
	}
	e, err := s.cfg.Git.MergeCancel(r.Context(), r.PathValue("ref"), req.Reason)
	if err != nil {
		s.gitFail(w, r, err, mergeHint)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

func (s *Server) rebaseStatus(w http.ResponseWriter, r *http.Request) {
	st, err := s.cfg.Git.RebaseStatus(r.Context())
	if err != nil {
		s.gitFail(w, r, err, rebaseHint)
		return
	}
	if st.Tasks == nil {
		st.Tasks = []api.TaskRebase{}
	}
	if st.Watcher.Repos == nil {
		st.Watcher.Repos = []api.MainRef{}
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) rebaseTask(w http.ResponseWriter, r *http.Request) {
	req, err := s.cfg.Git.RebaseTask(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.gitFail(w, r, err, rebaseHint)
		return
	}
	writeJSON(w, http.StatusOK, req)
}

// rebaseAll answers a JSON array: one request per task that was behind.
func (s *Server) rebaseAll(w http.ResponseWriter, r *http.Request) {
	reqs, err := s.cfg.Git.RebaseAll(r.Context())
	if err != nil {
		s.gitFail(w, r, err, rebaseHint)
		return
	}
	if reqs == nil {
		reqs = []api.RebaseRequest{}
	}
	writeJSON(w, http.StatusOK, reqs)
}
