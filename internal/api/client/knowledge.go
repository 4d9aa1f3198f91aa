package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// Learnings returns learnings of the knowledge store: the best matches of
// search (full text, any word) or, without one, the oldest first; of one
// task (ref) or of all (ref ""); at most limit of them (0: all).
func (c *Client) Learnings(ctx context.Context, search, ref string, limit int) ([]api.Learning, error) {
	v := url.Values{}
	if search != "" {
		v.Set("q", search)
	}
	if ref != "" {
		v.Set("task", ref)
	}
	if limit != 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	path := "/v1/knowledge"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var ls []api.Learning
	err := c.do(ctx, http.MethodGet, path, nil, &ls)
	return ls, err
}

// Learning returns one learning with the sync messages that relayed it.
func (c *Client) Learning(ctx context.Context, id int64) (api.Learning, error) {
	var l api.Learning
	err := c.do(ctx, http.MethodGet, "/v1/knowledge/"+strconv.FormatInt(id, 10), nil, &l)
	return l, err
}

// Forget removes a learning from the knowledge store and returns what it
// was.
func (c *Client) Forget(ctx context.Context, id int64) (api.Learning, error) {
	var l api.Learning
	err := c.do(ctx, http.MethodDelete, "/v1/knowledge/"+strconv.FormatInt(id, 10), nil, &l)
	return l, err
}

// SyncMessages returns the newest sync messages relayed to one task (ref)
// or to any (ref ""), oldest first, at most limit of them (0: the
// daemon's default).
func (c *Client) SyncMessages(ctx context.Context, ref string, limit int) ([]api.SyncMessage, error) {
	v := url.Values{}
	if ref != "" {
		v.Set("task", ref)
	}
	if limit != 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	path := "/v1/sync/messages"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var ms []api.SyncMessage
	err := c.do(ctx, http.MethodGet, path, nil, &ms)
	return ms, err
}
