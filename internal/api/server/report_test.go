package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/api/server"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// fakeTasks serves the report methods from fixed data and records the cost
// queries it gets. The other methods of server.Tasks are not used here.
type fakeTasks struct {
	server.Tasks

	id      task.ID
	entries []store.Entry
	rows    map[string][]store.CostRow // by grouping ("" is the total)

	mu      sync.Mutex
	queries []costCall // guarded by mu
}

type costCall struct {
	Ref, By string
	Since   time.Time
}

func (f *fakeTasks) Resolve(_ context.Context, ref string) (task.ID, error) {
	if ref != "" && strings.HasPrefix(string(f.id), task.IDPrefix+strings.TrimPrefix(ref, task.IDPrefix)) {
		return f.id, nil
	}
	return "", fmt.Errorf("task %q: %w", ref, store.ErrNotFound)
}

func (f *fakeTasks) Log(ctx context.Context, ref string, from int) (task.ID, []store.Entry, error) {
	id, err := f.Resolve(ctx, ref)
	if err != nil {
		return "", nil, err
	}
	var out []store.Entry
	for _, e := range f.entries {
		if e.Seq >= from {
			out = append(out, e)
		}
	}
	return id, out, nil
}

func (f *fakeTasks) Costs(_ context.Context, ref, by string, since time.Time) ([]store.CostRow, error) {
	f.mu.Lock()
	f.queries = append(f.queries, costCall{ref, by, since})
	f.mu.Unlock()
	rows, ok := f.rows[by]
	if !ok {
		return nil, &task.InvalidError{Field: "by", Msg: fmt.Sprintf("%q is not a grouping; want day, task or model", by)}
	}
	return rows, nil
}

func newFake() *fakeTasks {
	return &fakeTasks{
		id: "t-4k2x9",
		entries: []store.Entry{
			{Seq: 0, Turn: 0, At: t0, Message: llm.UserText("add token expiry checks")},
			{Seq: 1, Turn: 1, At: t0.Add(time.Second), Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.TextPart("Looking."),
				llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)}),
			}}},
			{Seq: 2, Turn: 1, At: t0.Add(2 * time.Second), Message: llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
				llm.ToolResultPart(llm.ToolResult{CallID: "c1", Content: "package a", IsError: true}),
			}}},
		},
		rows: map[string][]store.CostRow{
			"model": {
				{Key: "anthropic/claude-sonnet-4-5", Calls: 3, InputTokens: 3000, OutputTokens: 300, CacheReadTokens: 1000, CostUSD: 0.03},
				{Key: "openai/gpt-5-mini", Calls: 1, InputTokens: 100, OutputTokens: 10, CostUSD: 0.001},
			},
			"day": nil,
			"":    {{Key: "total", Calls: 4, InputTokens: 3100, OutputTokens: 310, CacheReadTokens: 1000, CostUSD: 0.031}},
		},
	}
}

func newServer(f server.Tasks) *server.Server {
	return server.New(server.Config{Tasks: f, Logger: slog.New(slog.DiscardHandler)})
}

// serve runs the server on a Unix socket, as the daemon does, and returns a
// client for it.
func serve(t *testing.T, f server.Tasks) *client.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(newServer(f))
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	c := client.New(sock)
	t.Cleanup(c.Close)
	return c
}

func TestTaskLogThroughTheClient(t *testing.T) {
	t.Parallel()
	f := newFake()
	c := serve(t, f)
	got, err := c.TaskLog(context.Background(), "4k2", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := api.TaskLog{TaskID: "t-4k2x9"}
	for _, e := range f.entries[1:] {
		want.Entries = append(want.Entries, api.LogEntry{Seq: e.Seq, Turn: e.Turn, At: e.At, Message: e.Message})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TaskLog (-want +got):\n%s", diff)
	}
}

func TestTaskLogIsAnEmptyListWhenNothingIsNew(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	newServer(newFake()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/tasks/t-4k2x9/log?from=99", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"entries":[]`) {
		t.Errorf("answer %d %s; want 200 with an empty entries array", rec.Code, rec.Body)
	}
}

func TestReportErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path string
		status     int
		code       api.ErrorCode
		msg        string // a part of the message
	}{
		{"from not a number", "/v1/tasks/t-4k2x9/log?from=x", 400, api.CodeInvalid, "from must be an entry number"},
		{"negative from", "/v1/tasks/t-4k2x9/log?from=-1", 400, api.CodeInvalid, "from must be an entry number"},
		{"unknown task log", "/v1/tasks/t-zzzzz/log", 404, api.CodeNotFound, "not found"},
		{"unknown grouping", "/v1/cost?by=week", 400, api.CodeInvalid, `"week" is not a grouping`},
		{"bad since", "/v1/cost?since=yesterday", 400, api.CodeInvalid, "since must be an RFC 3339 time"},
		{"unknown task cost", "/v1/cost?task=zzz", 404, api.CodeNotFound, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			newServer(newFake()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			var e api.Error
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatalf("decoding %q: %v", rec.Body, err)
			}
			if rec.Code != tt.status || e.Code != tt.code || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("answer %d %+v; want %d %s with %q", rec.Code, e, tt.status, tt.code, tt.msg)
			}
		})
	}
}

func TestCostsThroughTheClient(t *testing.T) {
	t.Parallel()
	f := newFake()
	c := serve(t, f)
	since := t0.Add(-24 * time.Hour)
	got, err := c.Costs(context.Background(), api.CostQuery{Task: "4k", By: "model", Since: since})
	if err != nil {
		t.Fatal(err)
	}
	want := api.CostReport{
		TaskID: "t-4k2x9", Since: since, By: "model",
		Rows: []api.CostRow{
			{Key: "anthropic/claude-sonnet-4-5", Calls: 3, InputTokens: 3000, OutputTokens: 300, CacheReadTokens: 1000, CostUSD: 0.03},
			{Key: "openai/gpt-5-mini", Calls: 1, InputTokens: 100, OutputTokens: 10, CostUSD: 0.001},
		},
		Total: api.CostRow{Key: "total", Calls: 4, InputTokens: 3100, OutputTokens: 310, CacheReadTokens: 1000, CostUSD: 0.031},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Costs (-want +got):\n%s", diff)
	}
	// The total is the same selection, ungrouped.
	wantCalls := []costCall{{"t-4k2x9", "model", since}, {"t-4k2x9", "", since}}
	if diff := cmp.Diff(wantCalls, f.queries); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

func TestCostsWithoutChargesOrGrouping(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.rows[""] = nil // a ledger with no charges
	c := serve(t, f)
	for _, by := range []string{"", "day"} {
		got, err := c.Costs(context.Background(), api.CostQuery{By: by})
		if err != nil {
			t.Fatal(err)
		}
		want := api.CostReport{By: by, Rows: []api.CostRow{}, Total: api.CostRow{Key: "total"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("by %q (-want +got):\n%s", by, diff)
		}
	}
	// Without a grouping only the total is asked for.
	if diff := cmp.Diff([]costCall{{"", "", time.Time{}}, {"", "day", time.Time{}}, {"", "", time.Time{}}}, f.queries); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}
