package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// Web starts the web dashboard on demand and signs browsers in.
type Web interface {
	// Open starts the dashboard when it is not running and returns a
	// one-time sign-in link; rotate ends every session first.
	Open(ctx context.Context, rotate bool) (api.WebLogin, error)
}

func (s *Server) routeWeb() {
	s.mux.HandleFunc("POST /v1/web", s.web)
}

func (s *Server) web(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Web == nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Code: api.CodeUnavailable,
			Message: "the web dashboard is not served by this daemon"})
		return
	}
	var req api.WebRequest
	if r.ContentLength != 0 {
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, api.Error{Code: api.CodeInvalid, Message: "reading the request: " + err.Error()})
			return
		}
	}
	l, err := s.cfg.Web.Open(r.Context(), req.Rotate)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Code: api.CodeUnavailable, Message: err.Error(),
			Hint: "check web.listen, web.tls_cert and web.tls_key (neuraphage config show) and the daemon's log"})
		return
	}
	writeJSON(w, http.StatusOK, l)
}
