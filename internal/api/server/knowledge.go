package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The knowledge store's and the Syncer's routes.
//
//	GET    /v1/knowledge?q=WORDS&task=REF&limit=N  []Learning: the best matches of q, or the oldest first
//	GET    /v1/knowledge/{id}                      Learning, with the sync messages that relayed it
//	DELETE /v1/knowledge/{id}                      Learning: the one forgotten
//	GET    /v1/sync/messages?task=REF&limit=N      []SyncMessage: the newest relayed to one task or all, oldest first
//
// limit is a non-negative number (0: every learning; the Knowledge's
// default number of messages). A task reference is resolved here, as for
// the Watcher's routes. A learning id is a positive number; an unknown one
// answers CodeNotFound (404). A daemon without a Knowledge answers them all
// with CodeUnavailable (503).

// knowledge wraps a knowledge handler: without a Knowledge it answers 503.
func (s *Server) knowledge(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Knowledge == nil {
			writeJSON(w, http.StatusServiceUnavailable, api.Error{
				Code:    api.CodeUnavailable,
				Message: "the knowledge store is not served by this daemon",
				Hint:    "`neuraphage config get supervision.syncer` shows the Syncer's settings; a change takes effect at the daemon's next start",
			})
			return
		}
		h(w, r)
	}
}

// limitParam reads the optional ?limit= of a knowledge route: a
// non-negative number, 0 when none was given.
func limitParam(r *http.Request, what string) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, &task.InvalidError{Field: "limit", Msg: "must be a non-negative number of " + what + ", got " + strconv.Quote(v)}
	}
	return n, nil
}

// learningID reads the {id} of a learning route: a positive number.
func learningID(r *http.Request) (int64, error) {
	v := r.PathValue("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, &task.InvalidError{Field: "id", Msg: "must be a learning's number, e.g. 12, got " + strconv.Quote(v)}
	}
	return id, nil
}

// failLearning answers an error about one learning: an unknown one is
// CodeNotFound with a hint about learnings (not tasks); the rest as fail.
func (s *Server) failLearning(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		writeJSON(w, http.StatusNotFound, api.Error{Code: api.CodeNotFound, Message: err.Error(),
			Hint: "`neuraphage knowledge list` lists the learnings"})
		return
	}
	s.fail(w, r, err)
}

func (s *Server) listLearnings(w http.ResponseWriter, r *http.Request) {
	limit, err := limitParam(r, "learnings")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ref, err := s.taskRef(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	search := strings.TrimSpace(r.URL.Query().Get("q"))
	ls, err := s.cfg.Knowledge.Learnings(r.Context(), search, ref, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]api.Learning, len(ls))
	for i, l := range ls {
		out[i] = apiLearning(l)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getLearning(w http.ResponseWriter, r *http.Request) {
	id, err := learningID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	l, relayed, err := s.cfg.Knowledge.Learning(r.Context(), id)
	if err != nil {
		s.failLearning(w, r, err)
		return
	}
	out := apiLearning(l)
	for _, m := range relayed {
		out.Relayed = append(out.Relayed, apiSync(m))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) forgetLearning(w http.ResponseWriter, r *http.Request) {
	id, err := learningID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	l, err := s.cfg.Knowledge.Forget(r.Context(), id)
	if err != nil {
		s.failLearning(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, apiLearning(l))
}

func (s *Server) syncMessages(w http.ResponseWriter, r *http.Request) {
	limit, err := limitParam(r, "messages")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ref, err := s.taskRef(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ms, err := s.cfg.Knowledge.SyncMessages(r.Context(), ref, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]api.SyncMessage, len(ms))
	for i, m := range ms {
		out[i] = apiSync(m)
	}
	writeJSON(w, http.StatusOK, out)
}

// apiLearning is a learning's wire form.
func apiLearning(l store.Learning) api.Learning {
	out := api.Learning{ID: l.ID, Kind: l.Kind, Summary: l.Summary, Detail: l.Detail, Tags: l.Tags, Files: l.Files,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt, Sources: []api.LearningSource{}}
	for _, s := range l.Sources {
		out.Sources = append(out.Sources, api.LearningSource{TaskID: s.TaskID, Kind: s.Kind, At: s.At})
	}
	return out
}

// apiSync is a sync message's wire form.
func apiSync(m store.SyncMessage) api.SyncMessage {
	return api.SyncMessage{ID: m.ID, LearningID: m.LearningID, From: m.From, To: m.TaskID, Urgency: m.Urgency,
		Relevance: m.Relevance, Score: m.Score, Message: m.Message, Reason: m.Reason, DecidedBy: m.DecidedBy,
		State: string(m.State), Note: m.Note, InjectionID: m.InjectionID, CreatedAt: m.CreatedAt,
		QueuedAt: m.QueuedAt, DeliveredAt: m.DeliveredAt}
}
