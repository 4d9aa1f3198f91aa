package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// Overlap returns the overlap radar's matrix: the running tasks that
// share files, pair by pair; with ref set, only that task's pairs.
func (c *Client) Overlap(ctx context.Context, ref string) ([]api.OverlapPair, error) {
	path := "/v1/overlap"
	if ref != "" {
		path += "?" + url.Values{"task": {ref}}.Encode()
	}
	var ps []api.OverlapPair
	err := c.do(ctx, http.MethodGet, path, nil, &ps)
	return ps, err
}
