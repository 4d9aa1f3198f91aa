// Package mcp serves Neuraphage to a host agent over the Model Context
// Protocol: a host (Claude Code, Codex, Gemini CLI, …) spawns tasks, waits for
// them, steers them and reads their reports through tools. The server is a
// client of the daemon's local API like the CLI; it holds no state of its own,
// so a host that disconnects leaves its tasks running.
//
// It is the only package that imports the MCP SDK.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

// Connect returns a client of the daemon, starting the daemon when it may.
type Connect func(ctx context.Context) (*client.Client, error)

// Options configure a server.
type Options struct {
	// Connect reaches the daemon; it is called for each tool call, so a
	// daemon that went away and came back is found again.
	Connect Connect
	// Version is the binary's version, reported to the host.
	Version string
}

// Instructions tell a host how to use the server.
const Instructions = `Neuraphage runs coding tasks in the background, each in its own git worktree of
a repository, supervised, and lands each finished task's work on the repository's
branch (main) through a merge queue that rebases and checks it first.

How to use it:
- Split work into independent tasks that touch different files; give each a
  self-contained description (what to change, where, how to check it). Use
  depends_on when one task needs another's result on main first.
- spawn_task returns an id at once; the task runs without you. Spawn all the
  tasks of a batch first, then call wait_tasks with their ids (mode "all", or
  "any" to react to the first one finishing). wait_tasks returns at its timeout
  even when tasks are unfinished: call it again to keep waiting.
- A task in status "waiting" asked a question (get_task shows it); reply with
  answer_task. send_message steers a running task; urgent interrupts its turn.
- When a task completes, its work is already on main (or in the merge queue:
  status "merging"). Read get_report for what changed; merge_status shows the
  queue. A failed or cancelled task's work did not land.
- Tasks keep running if you disconnect; list_tasks finds them again.`

// New returns the MCP server with its tools and resources.
func New(opts Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "neuraphage", Title: "Neuraphage", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: Instructions,
	})
	h := &handlers{connect: opts.Connect}
	h.addTools(s)
	h.addResources(s)
	return s
}

// HTTPHandler serves the MCP server over the streamable HTTP transport; each
// session gets a server of its own.
func HTTPHandler(opts Options) http.Handler {
	srv := New(opts)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// handlers implement the tools over the daemon's API.
type handlers struct {
	connect Connect
}

// client reaches the daemon or says why not, in words for a model.
func (h *handlers) client(ctx context.Context) (*client.Client, error) {
	c, err := h.connect(ctx)
	if err != nil {
		return nil, explain(err)
	}
	return c, nil
}

// explain turns an error of the daemon's API into one a model can act on.
func explain(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, client.ErrUnreachable) {
		return fmt.Errorf("the Neuraphage daemon is not reachable (%v); start it with `neuraphage daemon start`, or set daemon.auto_start", err)
	}
	var ae *client.Error
	if errors.As(err, &ae) {
		msg := ae.Body.Message
		if ae.Body.Hint != "" {
			msg += " (" + ae.Body.Hint + ")"
		}
		switch ae.Code() {
		case api.CodeNotFound:
			return errors.New("not found: " + msg)
		case api.CodeInvalid:
			return errors.New("invalid request: " + msg)
		case api.CodeConflict:
			return errors.New("not possible now: " + msg)
		case api.CodeUnavailable:
			return errors.New("unavailable: " + msg)
		}
		return errors.New(msg)
	}
	return err
}

// Serve runs the server over newline-delimited JSON-RPC on in and out (a
// host's stdio) until the host closes in or ctx ends. The end of a session is
// not an error, and it leaves the tasks it spawned running.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err := New(opts).Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
