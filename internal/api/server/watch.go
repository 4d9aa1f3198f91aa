package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/watchers"
)

// Watchers serves the watcher sessions' routes (see api/watch.go).
type Watchers interface {
	Add(ctx context.Context, sp watchers.Spec) (store.WatchSession, error)
	List(ctx context.Context) ([]store.WatchSession, error)
	Get(ctx context.Context, ref string) (store.WatchSession, error)
	Log(ctx context.Context, ref string, after int64, limit int) (store.WatchSession, []store.WatchEvaluation, error)
	Pause(ctx context.Context, ref, reason string) (store.WatchSession, error)
	Resume(ctx context.Context, ref string) (store.WatchSession, error)
	Remove(ctx context.Context, ref string) (store.WatchSession, error)
	// CheckRole refuses a role that is not a watcher role
	// (*task.InvalidError).
	CheckRole(role string) error
}

var _ Watchers = (*watchers.Service)(nil)

func (s *Server) routeWatchers() {
	s.mux.HandleFunc("POST /v1/watchers", s.watchers(s.addWatcher))
	s.mux.HandleFunc("GET /v1/watchers", s.watchers(s.listWatchers))
	s.mux.HandleFunc("GET /v1/watchers/{ref}", s.watchers(s.watcherAction(func(ctx context.Context, w Watchers, ref string) (store.WatchSession, error) {
		return w.Get(ctx, ref)
	})))
	s.mux.HandleFunc("GET /v1/watchers/{ref}/log", s.watchers(s.watcherLog))
	s.mux.HandleFunc("POST /v1/watchers/{ref}/pause", s.watchers(s.watcherAction(func(ctx context.Context, w Watchers, ref string) (store.WatchSession, error) {
		return w.Pause(ctx, ref, "paused by the user")
	})))
	s.mux.HandleFunc("POST /v1/watchers/{ref}/resume", s.watchers(s.watcherAction(func(ctx context.Context, w Watchers, ref string) (store.WatchSession, error) {
		return w.Resume(ctx, ref)
	})))
	s.mux.HandleFunc("DELETE /v1/watchers/{ref}", s.watchers(s.watcherAction(func(ctx context.Context, w Watchers, ref string) (store.WatchSession, error) {
		return w.Remove(ctx, ref)
	})))
}

// watchers wraps a handler: without watcher sessions it answers 503.
func (s *Server) watchers(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Watchers == nil {
			writeJSON(w, http.StatusServiceUnavailable, api.Error{Code: api.CodeUnavailable,
				Message: "watcher sessions are not served by this daemon"})
			return
		}
		h(w, r)
	}
}

// failWatcher answers an error about a session: an unknown one is
// CodeNotFound with a hint about sessions; the rest as fail.
func (s *Server) failWatcher(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		writeJSON(w, http.StatusNotFound, api.Error{Code: api.CodeNotFound, Message: err.Error(),
			Hint: "`neuraphage watch list` lists the watcher sessions"})
		return
	}
	s.fail(w, r, err)
}

func (s *Server) addWatcher(w http.ResponseWriter, r *http.Request) {
	var req api.WatchAddRequest
	if !decode(w, r, &req) {
		return
	}
	ws, err := s.cfg.Watchers.Add(r.Context(), watchers.Spec{Task: req.Task, Tags: req.Tags, All: req.All, Role: req.Role, Brief: req.Brief,
		Authority: req.Authority, Tier: req.Tier, BudgetUSD: req.BudgetUSD})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, wireWatch(ws))
}

func (s *Server) listWatchers(w http.ResponseWriter, r *http.Request) {
	all, err := s.cfg.Watchers.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := api.WatchList{Sessions: make([]api.WatchSession, 0, len(all))}
	for _, ws := range all {
		out.Sessions = append(out.Sessions, wireWatch(ws))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) watcherAction(f func(ctx context.Context, w Watchers, ref string) (store.WatchSession, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ws, err := f(r.Context(), s.cfg.Watchers, r.PathValue("ref"))
		if err != nil {
			s.failWatcher(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, wireWatch(ws))
	}
}

func (s *Server) watcherLog(w http.ResponseWriter, r *http.Request) {
	limit, err := limitParam(r, "evaluations")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var after int64
	if v := r.URL.Query().Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			s.fail(w, r, &task.InvalidError{Field: "after", Msg: "must be an evaluation's number, got " + strconv.Quote(v)})
			return
		}
	}
	ws, evs, err := s.cfg.Watchers.Log(r.Context(), r.PathValue("ref"), after, limit)
	if err != nil {
		s.failWatcher(w, r, err)
		return
	}
	out := api.WatchLog{Session: wireWatch(ws), Evaluations: make([]api.WatchEvaluation, 0, len(evs))}
	for _, e := range evs {
		out.Evaluations = append(out.Evaluations, api.WatchEvaluation{ID: e.ID, Task: e.TaskID, At: e.At, Decision: e.Decision, Urgent: e.Urgent,
			Content: e.Content, Note: e.Note, InjectionID: e.InjectionID, Undelivered: e.Undelivered, Error: e.Error, Observations: e.Observations,
			Model: e.Model, InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, CostUSD: e.CostUSD, DurationMs: e.DurationMs})
	}
	writeJSON(w, http.StatusOK, out)
}

func wireWatch(ws store.WatchSession) api.WatchSession {
	return api.WatchSession{ID: ws.ID, Name: ws.Name, Title: ws.Title, Role: ws.Role, Brief: ws.Brief, Authority: ws.Authority, Tier: ws.Tier,
		Target: api.WatchTarget{Task: ws.Target.TaskID, Tags: ws.Target.Tags, All: ws.Target.All}, Status: string(ws.Status), Reason: ws.Reason,
		BudgetUSD: ws.BudgetUSD, SpentUSD: ws.SpentUSD, Evaluations: ws.Evaluations, Interjections: ws.Interjections,
		CreatedAt: ws.CreatedAt, UpdatedAt: ws.UpdatedAt}
}

// checkWatchRoles checks the roles of a create request's --watch before
// the task is created; false means it answered.
func (s *Server) checkWatchRoles(w http.ResponseWriter, r *http.Request, roles []string) bool {
	if len(roles) == 0 {
		return true
	}
	if s.cfg.Watchers == nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Code: api.CodeUnavailable, Message: "watcher sessions are not served by this daemon"})
		return false
	}
	for _, role := range roles {
		if err := s.cfg.Watchers.CheckRole(role); err != nil {
			s.fail(w, r, err)
			return false
		}
	}
	return true
}

// attachWatchers adds a session of each role to the new task; false means
// it answered (an error: the task exists, the message says so).
func (s *Server) attachWatchers(w http.ResponseWriter, r *http.Request, id task.ID, roles []string) bool {
	for _, role := range roles {
		if _, err := s.cfg.Watchers.Add(r.Context(), watchers.Spec{Task: string(id), Role: role}); err != nil {
			s.fail(w, r, fmt.Errorf("task %s was created, but attaching the %s watcher: %w", id, role, err))
			return false
		}
	}
	return true
}
