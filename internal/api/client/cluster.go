package client

import (
	"context"
	"net/http"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// ClusterStatus returns the cluster's workers and lag.
func (c *Client) ClusterStatus(ctx context.Context) (api.ClusterStatus, error) {
	var s api.ClusterStatus
	err := c.do(ctx, http.MethodGet, "/v1/cluster", nil, &s)
	return s, err
}

// ClusterJoin issues a token for a new worker.
func (c *Client) ClusterJoin(ctx context.Context, req api.JoinRequest) (api.JoinInfo, error) {
	var info api.JoinInfo
	err := c.do(ctx, http.MethodPost, "/v1/cluster/join", req, &info)
	return info, err
}
