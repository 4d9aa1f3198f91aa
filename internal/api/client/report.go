package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// TaskLog returns a task's stored conversation, the entries from position
// from on (0: all of it).
func (c *Client) TaskLog(ctx context.Context, ref string, from int) (api.TaskLog, error) {
	path := "/v1/tasks/" + url.PathEscape(ref) + "/log"
	if from != 0 {
		path += "?from=" + strconv.Itoa(from)
	}
	var l api.TaskLog
	err := c.do(ctx, http.MethodGet, path, nil, &l)
	return l, err
}

// Costs summarizes the cost ledger as q selects and groups it.
func (c *Client) Costs(ctx context.Context, q api.CostQuery) (api.CostReport, error) {
	v := url.Values{}
	if q.Task != "" {
		v.Set("task", q.Task)
	}
	if q.By != "" {
		v.Set("by", q.By)
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	path := "/v1/cost"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var r api.CostReport
	err := c.do(ctx, http.MethodGet, path, nil, &r)
	return r, err
}

// TaskReport returns a task's report (seed 003's summary).
func (c *Client) TaskReport(ctx context.Context, ref string) (api.TaskReport, error) {
	var r api.TaskReport
	err := c.do(ctx, http.MethodGet, "/v1/tasks/"+url.PathEscape(ref)+"/report", nil, &r)
	return r, err
}
