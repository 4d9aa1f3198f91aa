// Package server serves the daemon's local API (see package api for the
// routes) over a listener the daemon provides, normally its Unix socket.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervise"
	"github.com/neuraphage/neuraphage-go/internal/syncer"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/tasks"
)

// Tasks is what the server needs of the tasks service: life changes act on
// a task the server resolved; reads take the reference as typed.
type Tasks interface {
	Create(ctx context.Context, spec task.Spec) (task.Task, error)
	Resolve(ctx context.Context, ref string) (task.ID, error)
	Get(ctx context.Context, ref string) (tasks.Detail, error)
	List(ctx context.Context, q tasks.ListQuery) (tasks.Page, error)
	// Pause, Resume, Cancel, Send and Depend act on a resolved task.
	Pause(ctx context.Context, id task.ID, reason string) (task.Task, error)
	Resume(ctx context.Context, id task.ID, reason string) (task.Task, error)
	Cancel(ctx context.Context, id task.ID, reason string) (task.Task, error)
	Send(ctx context.Context, id task.ID, text string, urgent bool) (inject.Injection, error)
	Depend(ctx context.Context, id, blocker task.ID) (tasks.Detail, error)
	// Log returns the task's conversation from entry from on.
	Log(ctx context.Context, ref string, from int) (task.ID, []store.Entry, error)
	// Costs summarizes the cost ledger for one task (ref) or all (ref empty),
	// grouped by "day", "task", "model", or "" for one row keyed "total".
	Costs(ctx context.Context, ref string, by string, since time.Time) ([]store.CostRow, error)
}

var _ Tasks = (*tasks.Service)(nil)

// Daemon is what the server needs of the daemon itself.
type Daemon interface {
	Status(ctx context.Context) (api.Status, error)
	Health() api.Health
	// Shutdown starts an orderly shutdown and returns at once.
	Shutdown(reason string)
}

// Personas is what the server needs for persona operations.
type Personas interface {
	// Escalate moves task id to persona to, or one step up its chain; by
	// is who asks. A refusal of the user's is a *task.InvalidError.
	Escalate(ctx context.Context, id task.ID, to, reason, by string) (executor.Escalation, error)
}

// Supervision serves the Watcher's views and the manual nudge.
type Supervision interface {
	// Health returns the Watcher's view of one task (ref), or of every
	// task it watches (ref "").
	Health(ctx context.Context, ref string) ([]supervise.Health, error)
	// Diagnoses returns the newest watcher.* events, oldest first, of
	// one task or all (ref ""), at most limit (0: a default).
	Diagnoses(ctx context.Context, ref string, limit int) ([]event.Event, error)
	// Stats returns the Watcher's counters and the Syncer's (nil when
	// there is no Syncer).
	Stats(ctx context.Context) (supervise.Stats, *syncer.Stats, error)
	// Nudge sends the user's nudge through the one door.
	Nudge(ctx context.Context, ref, text string) (inject.Injection, error)
}

// Knowledge serves the knowledge store and the Syncer's messages.
type Knowledge interface {
	// Learnings returns learnings: the best matches of search (full
	// text, any word) or, without one, the oldest first; of one task's
	// (ref) or all; at most limit (0: all).
	Learnings(ctx context.Context, search, ref string, limit int) ([]store.Learning, error)
	// Learning returns one learning with the messages that relayed it;
	// store.ErrNotFound (wrapped) when there is none.
	Learning(ctx context.Context, id int64) (store.Learning, []store.SyncMessage, error)
	// Forget deletes a learning and returns what it was.
	Forget(ctx context.Context, id int64) (store.Learning, error)
	// SyncMessages returns the newest sync messages to one task (ref) or
	// all, oldest first, at most limit (0: a default).
	SyncMessages(ctx context.Context, ref string, limit int) ([]store.SyncMessage, error)
}

// Config wires a Server.
type Config struct {
	Tasks Tasks
	// Supervision serves /v1/supervision/* and nudges; nil answers them 503.
	Supervision Supervision
	// Knowledge serves /v1/knowledge and /v1/sync/messages; nil answers
	// them 503.
	Knowledge Knowledge
	// Watchers serves /v1/watchers; nil answers them 503.
	Watchers Watchers
	// Web starts the web dashboard on demand (POST /v1/web); nil answers
	// it 503.
	Web Web
	// Overlap serves /v1/overlap; nil answers it 503.
	Overlap Overlap
	// Cluster serves /v1/cluster; nil answers it 503.
	Cluster Cluster
	// Personas serves escalations; nil answers them unavailable.
	Personas Personas
	Daemon   Daemon
	Log      event.Log
	Bus      *event.Bus
	// Git serves the worktree, merge-queue and rebase routes; nil answers them 503.
	Git Git
	// Reports serves task reports; nil answers them 503.
	Reports Reports
	// Metrics serves GET /metrics in the Prometheus text format
	// (metrics.Handler); nil answers it 503.
	Metrics http.Handler
	// DefaultPriority is used when a create request names none.
	DefaultPriority int
	Logger          *slog.Logger
}

// Server is the API's HTTP handler.
type Server struct {
	cfg Config
	mux *http.ServeMux
}

// New returns a Server with its routes.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /v1/health", s.health)
	s.mux.HandleFunc("GET /v1/status", s.status)
	s.mux.HandleFunc("POST /v1/shutdown", s.shutdown)
	s.mux.HandleFunc("POST /v1/tasks", s.createTask)
	s.mux.HandleFunc("GET /v1/tasks", s.listTasks)
	s.mux.HandleFunc("GET /v1/tasks/{ref}", s.getTask)
	s.mux.HandleFunc("POST /v1/tasks/{ref}/cancel", s.action((Tasks).Cancel))
	s.mux.HandleFunc("POST /v1/tasks/{ref}/pause", s.action((Tasks).Pause))
	s.mux.HandleFunc("POST /v1/tasks/{ref}/resume", s.action((Tasks).Resume))
	s.mux.HandleFunc("POST /v1/tasks/actions", s.actions)
	s.mux.HandleFunc("POST /v1/tasks/{ref}/messages", s.send)
	s.mux.HandleFunc("POST /v1/tasks/{ref}/dependencies", s.depend)
	s.mux.HandleFunc("POST /v1/tasks/{ref}/escalate", s.escalate)
	s.mux.HandleFunc("GET /v1/tasks/{ref}/log", s.taskLog)
	s.mux.HandleFunc("GET /v1/tasks/{ref}/report", s.taskReport)
	s.mux.HandleFunc("GET /v1/cost", s.cost)
	s.mux.HandleFunc("GET /v1/events", s.events)
	s.mux.HandleFunc("GET /v1/watch", s.watch)
	s.mux.HandleFunc("GET /v1/worktrees", s.git(s.listWorktrees))
	s.mux.HandleFunc("GET /v1/worktrees/{ref}", s.git(s.getWorktree))
	s.mux.HandleFunc("POST /v1/worktrees/prune", s.git(s.pruneWorktrees))
	s.mux.HandleFunc("POST /v1/worktrees/prune-archives", s.git(s.pruneArchives))
	s.mux.HandleFunc("POST /v1/worktrees/{ref}/restore", s.git(s.restoreWorktree))
	s.mux.HandleFunc("GET /v1/merge", s.git(s.mergeStatus))
	s.mux.HandleFunc("POST /v1/merge/{ref}/enqueue", s.git(s.mergeAction((Git).MergeEnqueue)))
	s.mux.HandleFunc("POST /v1/merge/{ref}/retry", s.git(s.mergeAction((Git).MergeRetry)))
	s.mux.HandleFunc("POST /v1/merge/{ref}/cancel", s.git(s.mergeCancel))
	s.mux.HandleFunc("GET /v1/rebase", s.git(s.rebaseStatus))
	s.mux.HandleFunc("POST /v1/rebase", s.git(s.rebaseAll))
	s.mux.HandleFunc("POST /v1/tasks/{ref}/rebase", s.git(s.rebaseTask))
	s.mux.HandleFunc("GET /v1/supervision/health", s.supervision(s.supervisionHealth))
	s.mux.HandleFunc("GET /v1/supervision/diagnoses", s.supervision(s.supervisionDiagnoses))
	s.mux.HandleFunc("GET /v1/supervision/stats", s.supervision(s.supervisionStats))
	s.mux.HandleFunc("POST /v1/tasks/{ref}/nudge", s.supervision(s.nudge))
	s.mux.HandleFunc("GET /v1/knowledge", s.knowledge(s.listLearnings))
	s.mux.HandleFunc("GET /v1/knowledge/{id}", s.knowledge(s.getLearning))
	s.mux.HandleFunc("DELETE /v1/knowledge/{id}", s.knowledge(s.forgetLearning))
	s.mux.HandleFunc("GET /v1/sync/messages", s.knowledge(s.syncMessages))
	s.routeWatchers()
	s.routeOverlap()
	s.routeWeb()
	s.routeCluster()
	s.mux.HandleFunc("GET /metrics", s.metrics)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, api.Error{Code: api.CodeNotFound, Message: "no route " + r.Method + " " + r.URL.Path})
	})
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.cfg.Daemon.Health())
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st, err := s.cfg.Daemon.Status(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) shutdown(w http.ResponseWriter, r *http.Request) {
	s.cfg.Daemon.Shutdown("requested through the API")
	writeJSON(w, http.StatusAccepted, struct{}{})
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Metrics == nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Code: api.CodeUnavailable, Message: "this daemon serves no metrics"})
		return
	}
	s.cfg.Metrics.ServeHTTP(w, r)
}

// maxBody bounds request bodies.
const maxBody = 1 << 20

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, api.Error{Code: api.CodeInvalid, Message: "reading the request body: " + err.Error()})
		return false
	}
	return true
}

func (s *Server) createTask(w http.ResponseWriter, r *http.Request) {
	var req api.CreateTaskRequest
	if !decode(w, r, &req) {
		return
	}
	prio := s.cfg.DefaultPriority
	if req.Priority != nil {
		prio = *req.Priority
	}
	if !s.checkWatchRoles(w, r, req.Watch) {
		return
	}
	t, err := s.cfg.Tasks.Create(r.Context(), task.Spec{
		Description: req.Description, Context: req.Context, Tags: req.Tags, Priority: prio,
		ParentID: task.ID(req.ParentID), Persona: req.Persona, Engine: req.Engine, Model: req.Model,
		Repo: req.Repo, Hold: req.NoStart, Workflow: req.Workflow, NoSupervision: req.NoSupervision,
		Budget: task.Budget{MaxIterations: req.Budget.MaxIterations, MaxTokens: req.Budget.MaxTokens, MaxCostUSD: req.Budget.MaxCostUSD},
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !s.attachWatchers(w, r, t.ID, req.Watch) {
		return
	}
	writeJSON(w, http.StatusCreated, t)
}

func (s *Server) escalate(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Personas == nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Code: api.CodeUnavailable, Message: "personas are not served by this daemon"})
		return
	}
	var req api.EscalateRequest
	if !decode(w, r, &req) {
		return
	}
	id, err := s.cfg.Tasks.Resolve(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := s.cfg.Personas.Escalate(r.Context(), id, req.To, req.Reason, "user")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Escalation{TaskID: e.TaskID, From: e.From, To: e.To, Applied: e.Applied})
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var statuses []task.Status
	for _, v := range splitList(q["status"]) {
		st, err := task.ParseStatus(v)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		statuses = append(statuses, st)
	}
	limit, err := limitParam(r, "tasks")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.cfg.Tasks.List(r.Context(), tasks.ListQuery{
		Statuses: statuses,
		All:      q.Get("all") == "1" || q.Get("all") == "true",
		After:    q.Get("after"),
		Limit:    limit,
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The store's JSON goes out as it is: an api.TaskList with one task a
	// line, nothing decoded or encoded.
	head := []byte("{\"tasks\":[\n")
	var tail []byte
	if p.N > 0 {
		tail = append(tail, '\n')
	}
	tail = append(tail, ']')
	if p.Next != "" {
		tail = append(tail, `,"next":`...)
		tail = strconv.AppendQuote(tail, string(p.Next))
	}
	tail = append(tail, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(p.JSON)+len(tail)))
	w.WriteHeader(http.StatusOK)
	w.Write(head)
	w.Write(p.JSON)
	w.Write(tail)
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	d, err := s.cfg.Tasks.Get(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, detail(d))
}

func detail(d tasks.Detail) api.TaskDetail {
	out := api.TaskDetail{Task: d.Task, Readiness: d.Readiness, Blockers: d.Blockers}
	for _, inj := range d.Pending {
		out.Pending = append(out.Pending, message(inj))
	}
	for _, inj := range d.Returned {
		out.Returned = append(out.Returned, message(inj))
	}
	return out
}

func message(inj inject.Injection) api.Message {
	return api.Message{ID: inj.ID, TaskID: inj.TaskID, Source: string(inj.Source), Kind: string(inj.Kind), Text: inj.Text, Urgent: inj.Urgent,
		CreatedAt: inj.CreatedAt, DeliveredAt: inj.DeliveredAt, ReturnedAt: inj.ReturnedAt}
}

func (s *Server) action(op func(Tasks, context.Context, task.ID, string) (task.Task, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req api.ActionRequest
		if r.ContentLength != 0 && !decode(w, r, &req) {
			return
		}
		id, err := s.cfg.Tasks.Resolve(r.Context(), r.PathValue("ref"))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		t, err := op(s.cfg.Tasks, r.Context(), id, req.Reason)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, t)
	}
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	var req api.SendRequest
	if !decode(w, r, &req) {
		return
	}
	id, err := s.cfg.Tasks.Resolve(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	inj, err := s.cfg.Tasks.Send(r.Context(), id, req.Text, req.Urgent)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	m := message(inj)
	if d, err := s.cfg.Tasks.Get(r.Context(), string(id)); err == nil {
		m.TaskStatus = d.Task.Status
	}
	writeJSON(w, http.StatusCreated, m)
}

func (s *Server) depend(w http.ResponseWriter, r *http.Request) {
	var req api.DependRequest
	if !decode(w, r, &req) {
		return
	}
	id, err := s.cfg.Tasks.Resolve(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	blocker, err := s.cfg.Tasks.Resolve(r.Context(), req.Blocker)
	if err != nil {
		s.fail(w, r, fmt.Errorf("blocker: %w", err))
		return
	}
	d, err := s.cfg.Tasks.Depend(r.Context(), id, blocker)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, detail(d))
}

// query parses the event selection shared by /v1/events and /v1/watch.
func (s *Server) query(r *http.Request, defaultAfter int64) (event.Query, error) {
	v := r.URL.Query()
	q := event.Query{AfterID: defaultAfter}
	if ref := v.Get("task"); ref != "" {
		id, err := s.cfg.Tasks.Resolve(r.Context(), ref)
		if err != nil {
			return q, err
		}
		q.TaskID = id
	}
	q.Kinds = splitList(v["kind"])
	if a := v.Get("after"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return q, &task.InvalidError{Field: "after", Msg: "must be an event id (an integer)"}
		}
		q.AfterID = n
	}
	if since := v.Get("since"); since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			return q, &task.InvalidError{Field: "since", Msg: "must be an RFC 3339 time"}
		}
		q.Since = t
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return q, &task.InvalidError{Field: "limit", Msg: "must be a non-negative integer"}
		}
		q.Limit = n
	}
	return q, nil
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	q, err := s.query(r, 0)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	evs, err := s.cfg.Log.ReadEvents(r.Context(), q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if evs == nil {
		evs = []event.Event{}
	}
	writeJSON(w, http.StatusOK, api.EventList{Events: evs})
}

// watch streams events as NDJSON until the client goes away or the daemon
// shuts down. Without ?after it starts live; with it, it replays from the log.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	q, err := s.query(r, -1)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, errors.New("streaming is not supported by this connection"))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	enc := json.NewEncoder(w)
	err = event.Follow(r.Context(), s.cfg.Bus, s.cfg.Log, q, func(e event.Event) error {
		if err := enc.Encode(e); err != nil {
			return err
		}
		fl.Flush()
		return nil
	})
	if err != nil && r.Context().Err() == nil && !errors.Is(err, event.ErrClosed) {
		s.cfg.Logger.Warn("watch stream ended", "err", err)
	}
}

func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// fail maps an error to its API code. It never matches on error text.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, e := s.errorBody(r, err)
	writeJSON(w, code, e)
}

// errorBody is the status and body that answer err: fail's, and each
// failed item of a bulk action's.
func (s *Server) errorBody(r *http.Request, err error) (int, api.Error) {
	var (
		inv *task.InvalidError
		amb *store.AmbiguousError
		tr  *task.TransitionError
		cyc *store.CycleError
		fin *task.FinishedError
	)
	e := api.Error{Message: err.Error()}
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, store.ErrNotFound):
		code, e.Code, e.Hint = http.StatusNotFound, api.CodeNotFound, "`neuraphage task list --all` lists every task"
	case errors.As(err, &amb):
		code, e.Code, e.Hint = http.StatusBadRequest, api.CodeInvalid, "type more characters of the task id"
	case errors.As(err, &inv):
		code, e.Code = http.StatusBadRequest, api.CodeInvalid
	case errors.As(err, &tr), errors.As(err, &fin), errors.As(err, &cyc):
		code, e.Code = http.StatusConflict, api.CodeConflict
	case errors.Is(err, store.ErrClosed):
		code, e.Code = http.StatusServiceUnavailable, api.CodeUnavailable
	case errors.Is(err, store.ErrFull):
		code, e.Code, e.Hint = http.StatusServiceUnavailable, api.CodeUnavailable,
			"free space on the data disk (`neuraphage daemon status` shows where it is); nothing needs restarting, waiting runs go on by themselves"
		s.cfg.Logger.Warn("api request refused: the data disk is full", "method", r.Method, "path", r.URL.Path, "err", err)
	default:
		e.Code = api.CodeInternal
		s.cfg.Logger.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	return code, e
}
