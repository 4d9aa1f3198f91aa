package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Metrics returns the daemon's metrics in the Prometheus text format, as
// served at GET /metrics.
func (c *Client) Metrics(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://neuraphage/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("building request GET /metrics: %w", err)
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the answer to GET /metrics: %w", err)
	}
	return b, nil
}
