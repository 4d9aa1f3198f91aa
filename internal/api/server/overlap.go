package server

import (
	"net/http"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Overlap serves GET /v1/overlap: the overlap radar's matrix.
type Overlap interface {
	// Overlap returns the pairs of running tasks that share files; with
	// id set, only that task's.
	Overlap(id task.ID) []api.OverlapPair
}

func (s *Server) routeOverlap() {
	s.mux.HandleFunc("GET /v1/overlap", s.overlap)
}

// overlap answers the matrix; ?task=REF keeps one task's pairs.
func (s *Server) overlap(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Overlap == nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Code: api.CodeUnavailable,
			Message: "the overlap radar is not served by this daemon"})
		return
	}
	var id task.ID
	if ref := r.URL.Query().Get("task"); ref != "" {
		var err error
		if id, err = s.cfg.Tasks.Resolve(r.Context(), ref); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, s.cfg.Overlap.Overlap(id))
}
