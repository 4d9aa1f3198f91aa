package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/supervise"
	"github.com/neuraphage/neuraphage-go/internal/syncer"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The Watcher's routes.
//
//	GET  /v1/supervision/health?task=REF             {"tasks":[TaskHealth]}: every watched task, or one
//	GET  /v1/supervision/diagnoses?task=REF&limit=N  EventList: the newest watcher.* events, oldest first
//	GET  /v1/supervision/stats                       SupervisionStats
//	POST /v1/tasks/{ref}/nudge                       NudgeRequest → Message (201)
//
// A task reference is resolved here, so one naming no task is the usual
// not-found error whatever the Supervision does with it. A daemon without
// a Supervision answers them all with CodeUnavailable (503).

// healthList is the answer to GET /v1/supervision/health. An object, not a
// bare array, so that fields can be added; client.SupervisionHealth reads
// the same shape.
type healthList struct {
	Tasks []api.TaskHealth `json:"tasks"`
}

// supervision wraps a Watcher handler: without a Supervision it answers 503.
func (s *Server) supervision(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Supervision == nil {
			writeJSON(w, http.StatusServiceUnavailable, api.Error{
				Code:    api.CodeUnavailable,
				Message: "supervision is not served by this daemon",
				Hint:    "`neuraphage config get supervision.watcher` shows the Watcher's settings; a change takes effect at the daemon's next start",
			})
			return
		}
		h(w, r)
	}
}

// taskRef resolves the optional ?task= of a Watcher route to a task id;
// "" when none was given.
func (s *Server) taskRef(r *http.Request) (string, error) {
	ref := r.URL.Query().Get("task")
	if ref == "" {
		return "", nil
	}
	id, err := s.cfg.Tasks.Resolve(r.Context(), ref)
	if err != nil {
		return "", err
	}
	return string(id), nil
}

func (s *Server) supervisionHealth(w http.ResponseWriter, r *http.Request) {
	ref, err := s.taskRef(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hs, err := s.cfg.Supervision.Health(r.Context(), ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]api.TaskHealth, len(hs))
	for i, h := range hs {
		out[i] = taskHealth(h)
	}
	writeJSON(w, http.StatusOK, healthList{Tasks: out})
}

func (s *Server) supervisionDiagnoses(w http.ResponseWriter, r *http.Request) {
	limit := 0 // the Supervision's default
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			s.fail(w, r, &task.InvalidError{Field: "limit", Msg: "must be a positive number of events, got " + strconv.Quote(v)})
			return
		}
		limit = n
	}
	ref, err := s.taskRef(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	evs, err := s.cfg.Supervision.Diagnoses(r.Context(), ref, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if evs == nil {
		evs = []event.Event{}
	}
	writeJSON(w, http.StatusOK, api.EventList{Events: evs})
}

func (s *Server) supervisionStats(w http.ResponseWriter, r *http.Request) {
	st, sy, err := s.cfg.Supervision.Stats(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, supervisionStats(st, sy))
}

// taskHealth is the wire form of the Watcher's view of a task, field for
// field (TestTaskHealthCarriesEveryField holds the two types together).
func taskHealth(h supervise.Health) api.TaskHealth {
	out := api.TaskHealth{TaskID: h.TaskID, State: h.State, Status: h.Status, Activity: h.Activity, Confidence: h.Confidence,
		Diagnosis: h.Diagnosis, Check: h.Check, Tier: h.Tier, Ladder: h.Ladder, Unheeded: h.Unheeded, LastCheck: h.LastCheck,
		Steps: h.Steps, StepsSinceProgress: h.StepsSinceProgress, TokensSinceProgress: h.TokensSinceProgress,
		USDSinceProgress: h.USDSinceProgress, LastProgress: h.LastProgress, Evidence: h.Evidence}
	if m := h.Model; m != nil {
		w := api.ModelCall(*m)
		out.Model = &w
	}
	return out
}

// supervisionStats is the wire form of the Watcher's and the Syncer's
// counters. api.SyncerStats is field for field the domain type
// (syncer.Stats) with JSON tags: a field added to one and not the other
// stops the conversion from compiling.
func supervisionStats(st supervise.Stats, sy *syncer.Stats) api.SupervisionStats {
	out := api.SupervisionStats{Enabled: st.Enabled, Running: st.Running, Started: st.Started, LastCycle: st.LastCycle,
		Cycles: st.Cycles, Observations: st.Observations, Watched: st.Watched, Tier1: st.Tier1,
		Tier2Calls: st.Tier2Calls, Tier2Failures: st.Tier2Failures, Tier2Tokens: st.Tier2Tokens, Tier2USD: st.Tier2USD,
		Degraded: st.Degraded, DegradedReason: st.DegradedReason, DegradedSecs: st.DegradedSecs,
		Nudges: st.Nudges, Escalations: st.Escalations, Pauses: st.Pauses, Aborts: st.Aborts, HookBlocks: st.HookBlocks,
		Panics: st.Panics, Restarts: st.Restarts}
	if out.Tier1 == nil {
		out.Tier1 = map[string]uint64{}
	}
	if sy != nil {
		w := api.SyncerStats(*sy)
		out.Syncer = &w
	}
	return out
}

// nudge queues the user's nudge for a task through the Supervision, which
// sends it through the one door as the Watcher's own nudges go.
func (s *Server) nudge(w http.ResponseWriter, r *http.Request) {
	var req api.NudgeRequest
	if !decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		s.fail(w, r, &task.InvalidError{Field: "text", Msg: "must not be empty: a nudge says what to try"})
		return
	}
	id, err := s.cfg.Tasks.Resolve(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	inj, err := s.cfg.Supervision.Nudge(r.Context(), string(id), req.Text)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, message(inj))
}
