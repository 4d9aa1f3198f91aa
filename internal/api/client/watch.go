package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// AddWatcher adds a watcher session.
func (c *Client) AddWatcher(ctx context.Context, req api.WatchAddRequest) (api.WatchSession, error) {
	var ws api.WatchSession
	err := c.do(ctx, http.MethodPost, "/v1/watchers", req, &ws)
	return ws, err
}

// Watchers lists the watcher sessions, oldest first.
func (c *Client) Watchers(ctx context.Context) ([]api.WatchSession, error) {
	var l api.WatchList
	err := c.do(ctx, http.MethodGet, "/v1/watchers", nil, &l)
	return l.Sessions, err
}

// Watcher returns one session: ref is its name, its id or a prefix of it.
func (c *Client) Watcher(ctx context.Context, ref string) (api.WatchSession, error) {
	var ws api.WatchSession
	err := c.do(ctx, http.MethodGet, "/v1/watchers/"+url.PathEscape(ref), nil, &ws)
	return ws, err
}

// WatcherLog returns a session's evaluations after the one numbered after,
// the newest limit of them (0: all), oldest first.
func (c *Client) WatcherLog(ctx context.Context, ref string, after int64, limit int) (api.WatchLog, error) {
	v := url.Values{}
	if after > 0 {
		v.Set("after", strconv.FormatInt(after, 10))
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	path := "/v1/watchers/" + url.PathEscape(ref) + "/log"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var l api.WatchLog
	err := c.do(ctx, http.MethodGet, path, nil, &l)
	return l, err
}

// PauseWatcher pauses a session.
func (c *Client) PauseWatcher(ctx context.Context, ref string) (api.WatchSession, error) {
	var ws api.WatchSession
	err := c.do(ctx, http.MethodPost, "/v1/watchers/"+url.PathEscape(ref)+"/pause", nil, &ws)
	return ws, err
}

// ResumeWatcher resumes a paused session.
func (c *Client) ResumeWatcher(ctx context.Context, ref string) (api.WatchSession, error) {
	var ws api.WatchSession
	err := c.do(ctx, http.MethodPost, "/v1/watchers/"+url.PathEscape(ref)+"/resume", nil, &ws)
	return ws, err
}

// RemoveWatcher ends a session; its log stays.
func (c *Client) RemoveWatcher(ctx context.Context, ref string) (api.WatchSession, error) {
	var ws api.WatchSession
	err := c.do(ctx, http.MethodDelete, "/v1/watchers/"+url.PathEscape(ref), nil, &ws)
	return ws, err
}
