package server

import (
	"context"
	"net/http"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// Cluster serves /v1/cluster (docs/cluster.md).
type Cluster interface {
	// Status is the workers and the coordinator's lag.
	Status(ctx context.Context) api.ClusterStatus
	// Join issues a token for a new worker.
	Join(ctx context.Context, req api.JoinRequest) (api.JoinInfo, error)
}

func (s *Server) routeCluster() {
	s.mux.HandleFunc("GET /v1/cluster", s.clusterStatus)
	s.mux.HandleFunc("POST /v1/cluster/join", s.clusterJoin)
}

func (s *Server) noCluster(w http.ResponseWriter) bool {
	if s.cfg.Cluster != nil {
		return false
	}
	writeJSON(w, http.StatusServiceUnavailable, api.Error{Code: api.CodeUnavailable,
		Message: "this daemon coordinates no cluster; set cluster.enabled: true and restart it"})
	return true
}

func (s *Server) clusterStatus(w http.ResponseWriter, r *http.Request) {
	if s.noCluster(w) {
		return
	}
	writeJSON(w, http.StatusOK, s.cfg.Cluster.Status(r.Context()))
}

func (s *Server) clusterJoin(w http.ResponseWriter, r *http.Request) {
	if s.noCluster(w) {
		return
	}
	var req api.JoinRequest
	if !decode(w, r, &req) {
		return
	}
	info, err := s.cfg.Cluster.Join(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}
