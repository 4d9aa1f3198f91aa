// Package client is the Go client of the daemon's local API. The CLI and the
// TUI use it; it is the only way they reach the daemon.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// ErrUnreachable is returned (wrapped) when no daemon answers on the socket.
var ErrUnreachable = errors.New("daemon unreachable")

// Error is an error answer from the daemon.
type Error struct {
	Status int
	Body   api.Error
}

func (e *Error) Error() string { return e.Body.Message }

// Code returns the error's API code.
func (e *Error) Code() api.ErrorCode { return e.Body.Code }

// Client talks to one daemon over its Unix socket. It is safe for concurrent use.
type Client struct {
	socket string
	http   *http.Client
}

// New returns a client for the daemon listening on socket.
func New(socket string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{socket: socket, http: &http.Client{Transport: tr}}
}

// Socket returns the socket path the client dials.
func (c *Client) Socket() string { return c.socket }

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding the request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://neuraphage"+path, body)
	if err != nil {
		return fmt.Errorf("building request %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// send sends req with the daemon's API token, read from the token file
// next to the socket at each request (a restarted daemon has a new one). An
// answer of 300 or more is returned as an *Error; a refusal for want of the
// token says why this client could not read it.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	token, tokenErr := c.token()
	if tokenErr == nil {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		e := decodeError(resp)
		if e.Status == http.StatusUnauthorized && tokenErr != nil {
			e.Body.Message += " (" + tokenErr.Error() + ")"
		}
		return nil, e
	}
	return resp, nil
}

// token reads the daemon's API token.
func (c *Client) token() (string, error) {
	b, err := os.ReadFile(api.TokenPath(c.socket))
	if err != nil {
		return "", err
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("%s is empty", api.TokenPath(c.socket))
	}
	return t, nil
}

func (c *Client) transportError(err error) error {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return fmt.Errorf("%w at %s: %v", ErrUnreachable, c.socket, opErr.Err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// The connection broke after it was made: the daemon went away.
	return fmt.Errorf("%w at %s: %v", ErrUnreachable, c.socket, err)
}

func decodeError(resp *http.Response) *Error {
	e := &Error{Status: resp.StatusCode}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err := json.Unmarshal(b, &e.Body); err != nil || e.Body.Message == "" {
		e.Body.Code = api.CodeInternal
		e.Body.Message = fmt.Sprintf("daemon answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return e
}

// Health probes the daemon.
func (c *Client) Health(ctx context.Context) (api.Health, error) {
	var h api.Health
	err := c.do(ctx, http.MethodGet, "/v1/health", nil, &h)
	return h, err
}

// Status describes the daemon.
func (c *Client) Status(ctx context.Context) (api.Status, error) {
	var s api.Status
	err := c.do(ctx, http.MethodGet, "/v1/status", nil, &s)
	return s, err
}

// Shutdown asks the daemon to stop in order.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/v1/shutdown", nil, nil)
}

// CreateTask creates a task.
func (c *Client) CreateTask(ctx context.Context, req api.CreateTaskRequest) (task.Task, error) {
	var t task.Task
	err := c.do(ctx, http.MethodPost, "/v1/tasks", req, &t)
	return t, err
}

// ListQuery selects a page of tasks for ListPage.
type ListQuery struct {
	// Statuses selects tasks in these statuses; with none, the unfinished
	// ones, or every task when All is set.
	Statuses []task.Status
	All      bool
	// After starts the page after this task (a TaskList.Next, or any task
	// reference); Limit caps it, 0 for no cap.
	After string
	Limit int
}

func (q ListQuery) values() url.Values {
	v := url.Values{}
	for _, s := range q.Statuses {
		v.Add("status", string(s))
	}
	if q.All {
		v.Set("all", "1")
	}
	if q.After != "" {
		v.Set("after", q.After)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// ListTasks lists what listings show of tasks: those in statuses, or with
// none given the unfinished ones, or every task when all is set.
func (c *Client) ListTasks(ctx context.Context, statuses []task.Status, all bool) ([]task.Summary, error) {
	l, err := c.ListPage(ctx, ListQuery{Statuses: statuses, All: all})
	return l.Tasks, err
}

// ListPage returns one page of a listing of tasks.
func (c *Client) ListPage(ctx context.Context, q ListQuery) (api.TaskList, error) {
	var l api.TaskList
	err := c.do(ctx, http.MethodGet, "/v1/tasks?"+q.values().Encode(), nil, &l)
	return l, err
}

// GetTask returns one task with its details.
func (c *Client) GetTask(ctx context.Context, ref string) (api.TaskDetail, error) {
	var d api.TaskDetail
	err := c.do(ctx, http.MethodGet, "/v1/tasks/"+url.PathEscape(ref), nil, &d)
	return d, err
}

// Action names a change of a task's life.
type Action string

// The actions.
const (
	Cancel Action = "cancel"
	Pause  Action = "pause"
	Resume Action = "resume"
)

// Act applies an action to a task.
func (c *Client) Act(ctx context.Context, ref string, a Action, reason string) (task.Task, error) {
	var t task.Task
	err := c.do(ctx, http.MethodPost, "/v1/tasks/"+url.PathEscape(ref)+"/"+string(a), api.ActionRequest{Reason: reason}, &t)
	return t, err
}

// ActMany applies an action to several tasks in one call; each task
// changes or fails on its own (api.BulkActionItem).
func (c *Client) ActMany(ctx context.Context, refs []string, a Action, reason string) (api.BulkActionResult, error) {
	var r api.BulkActionResult
	err := c.do(ctx, http.MethodPost, "/v1/tasks/actions", api.BulkActionRequest{Action: string(a), Refs: refs, Reason: reason}, &r)
	if err == nil && len(r.Results) != len(refs) {
		return r, fmt.Errorf("the daemon answered %d results for %d tasks", len(r.Results), len(refs))
	}
	return r, err
}

// Send queues a message for a task.
func (c *Client) Send(ctx context.Context, ref, text string) (api.Message, error) {
	return c.SendMessage(ctx, ref, api.SendRequest{Text: text})
}

// SendMessage queues a message for a task, urgent or not.
func (c *Client) SendMessage(ctx context.Context, ref string, req api.SendRequest) (api.Message, error) {
	var m api.Message
	err := c.do(ctx, http.MethodPost, "/v1/tasks/"+url.PathEscape(ref)+"/messages", req, &m)
	return m, err
}

// Depend makes a task wait for a blocker.
func (c *Client) Depend(ctx context.Context, ref, blocker string) (api.TaskDetail, error) {
	var d api.TaskDetail
	err := c.do(ctx, http.MethodPost, "/v1/tasks/"+url.PathEscape(ref)+"/dependencies", api.DependRequest{Blocker: blocker}, &d)
	return d, err
}

// Escalate moves a task to persona to, or one step up its escalation
// chain when to is empty.
func (c *Client) Escalate(ctx context.Context, ref, to, reason string) (api.Escalation, error) {
	var e api.Escalation
	err := c.do(ctx, http.MethodPost, "/v1/tasks/"+url.PathEscape(ref)+"/escalate", api.EscalateRequest{To: to, Reason: reason}, &e)
	return e, err
}

func queryValues(q event.Query) url.Values {
	v := url.Values{}
	if q.TaskID != "" {
		v.Set("task", string(q.TaskID))
	}
	for _, k := range q.Kinds {
		v.Add("kind", k)
	}
	if q.AfterID != 0 {
		v.Set("after", strconv.FormatInt(q.AfterID, 10))
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// Events reads a page of the event log. q.TaskID may be any task reference.
func (c *Client) Events(ctx context.Context, q event.Query) ([]event.Event, error) {
	var l api.EventList
	err := c.do(ctx, http.MethodGet, "/v1/events?"+queryValues(q).Encode(), nil, &l)
	return l.Events, err
}

// Watch opens a live stream of events. With q.AfterID < 0 it starts live;
// otherwise it first replays logged events after q.AfterID. The caller must
// Close the stream; cancelling ctx also ends it.
func (c *Client) Watch(ctx context.Context, q event.Query) (*Stream, error) {
	v := queryValues(q)
	if q.AfterID < 0 {
		v.Del("after")
	} else {
		v.Set("after", strconv.FormatInt(q.AfterID, 10))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://neuraphage/v1/watch?"+v.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("building the watch request: %w", err)
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &Stream{body: resp.Body, sc: sc}, nil
}

// Stream is a live event stream. Next is for one goroutine.
type Stream struct {
	body io.ReadCloser
	sc   *bufio.Scanner
}

// Next returns the next event; io.EOF when the daemon ended the stream.
func (s *Stream) Next() (event.Event, error) {
	for s.sc.Scan() {
		line := s.sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e event.Event
		if err := json.Unmarshal(line, &e); err != nil {
			return event.Event{}, fmt.Errorf("decoding a watched event: %w", err)
		}
		return e, nil
	}
	if err := s.sc.Err(); err != nil {
		return event.Event{}, err
	}
	return event.Event{}, io.EOF
}

// Close ends the stream.
func (s *Stream) Close() error { return s.body.Close() }
