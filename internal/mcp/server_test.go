package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

// TestExplain: the daemon's errors reach a model as words it can act on.
func TestExplain(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w at /run/x.sock: connection refused", client.ErrUnreachable), "the Neuraphage daemon is not reachable"},
		{&client.Error{Status: 404, Body: api.Error{Code: api.CodeNotFound, Message: `no task "t-zzzzz"`}}, `not found: no task "t-zzzzz"`},
		{&client.Error{Status: 400, Body: api.Error{Code: api.CodeInvalid, Message: "engine: nope", Hint: "engines: native"}}, "invalid request: engine: nope (engines: native)"},
		{&client.Error{Status: 409, Body: api.Error{Code: api.CodeConflict, Message: "task is completed"}}, "not possible now: task is completed"},
		{errors.New("other"), "other"},
	} {
		if got := explain(c.err).Error(); !strings.Contains(got, c.want) {
			t.Errorf("explain(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestResourceTask: only the two templates' shapes name a task.
func TestResourceTask(t *testing.T) {
	t.Parallel()
	if id, err := resourceTask("neuraphage://tasks/t-ab12c/log", "/log"); err != nil || id != "t-ab12c" {
		t.Errorf("log URI: %q, %v", id, err)
	}
	for _, bad := range []string{"neuraphage://tasks//log", "neuraphage://tasks/a/b/log", "other://tasks/t-a/log", "neuraphage://tasks/t-a/report"} {
		if _, err := resourceTask(bad, "/log"); err == nil {
			t.Errorf("resourceTask(%q) named a task", bad)
		}
	}
}

// TestToolsListed: the server lists every tool with both schemas, over the
// SDK's in-memory transport; a call with no daemon is a tool error.
func TestToolsListed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := New(Options{Connect: func(context.Context) (*client.Client, error) {
		return nil, fmt.Errorf("%w at /nowhere: no such file", client.ErrUnreachable)
	}, Version: "test"})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 12 {
		t.Errorf("%d tools, want 12", len(res.Tools))
	}
	for _, tool := range res.Tools {
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: input schema %v, output schema %v, description %q", tool.Name, tool.InputSchema != nil, tool.OutputSchema != nil, tool.Description)
		}
	}
	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_task", Arguments: map[string]any{"id": "t-ab12c"}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(r.Content[0].(*sdk.TextContent).Text, "daemon is not reachable") {
		t.Errorf("get_task with no daemon: %+v", r)
	}
}
