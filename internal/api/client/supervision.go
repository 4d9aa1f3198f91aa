package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
)

// SupervisionHealth returns the Watcher's view of one task (ref), or of
// every task it watches (ref ""). (Health is the daemon's own probe.)
func (c *Client) SupervisionHealth(ctx context.Context, ref string) ([]api.TaskHealth, error) {
	path := "/v1/supervision/health"
	if ref != "" {
		path += "?" + url.Values{"task": {ref}}.Encode()
	}
	var l struct {
		Tasks []api.TaskHealth `json:"tasks"`
	}
	err := c.do(ctx, http.MethodGet, path, nil, &l)
	return l.Tasks, err
}

// Diagnoses returns the newest watcher.* events, oldest first, of one task
// (ref) or of all (ref ""), at most limit of them (0: the daemon's default).
func (c *Client) Diagnoses(ctx context.Context, ref string, limit int) ([]event.Event, error) {
	v := url.Values{}
	if ref != "" {
		v.Set("task", ref)
	}
	if limit != 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	path := "/v1/supervision/diagnoses"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var l api.EventList
	err := c.do(ctx, http.MethodGet, path, nil, &l)
	return l.Events, err
}

// SupervisionStats returns the Watcher's counters since the daemon started.
func (c *Client) SupervisionStats(ctx context.Context) (api.SupervisionStats, error) {
	var st api.SupervisionStats
	err := c.do(ctx, http.MethodGet, "/v1/supervision/stats", nil, &st)
	return st, err
}

// Nudge queues the user's nudge for a task, through the Watcher; it is
// delivered at the task's next turn boundary.
func (c *Client) Nudge(ctx context.Context, ref, text string) (api.Message, error) {
	var m api.Message
	err := c.do(ctx, http.MethodPost, "/v1/tasks/"+url.PathEscape(ref)+"/nudge", api.NudgeRequest{Text: text}, &m)
	return m, err
}
