package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

// mcpScript is the scripted model: one task writes a file and completes,
// the other sleeps in a tool until it is cancelled.
const mcpScript = `conversations:
  - name: alpha
    match: {user: "write the alpha file"}
    steps:
      - tool_calls:
          - {name: write_file, input: {path: alpha.txt, content: "alpha\n"}}
      - tool_calls:
          - {name: complete_task, input: {summary: "alpha.txt is written"}}
  - name: sleeper
    match: {user: "sleep on it"}
    steps:
      - tool_calls:
          - {name: bash, input: {command: "exec sleep 600", timeout: 900}}
      - tool_calls:
          - {name: complete_task, input: {summary: "slept"}}
`

// mcpSession is an MCP client of a `neuraphage mcp` subprocess, with the
// tools it listed and their resolved output schemas.
type mcpSession struct {
	t        *testing.T
	cs       *mcp.ClientSession
	tools    map[string]*mcp.Tool
	inputs   map[string]*jsonschema.Resolved
	outputs  map[string]*jsonschema.Resolved
	mu       sync.Mutex
	progress []string
}

// startMCP starts a scripted model server and `neuraphage mcp` under a fresh
// NEURAPHAGE_HOME (the daemon starts on first use), with a git repository.
func startMCP(t *testing.T) (*mcpSession, string, []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	work := t.TempDir()
	home := filepath.Join(work, "h")
	repo := filepath.Join(work, "repo")
	scriptFile := filepath.Join(work, "llm.yaml")
	if err := os.WriteFile(scriptFile, []byte(mcpScript), 0o600); err != nil {
		t.Fatal(err)
	}
	script, err := llmtest.LoadScript(scriptFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- llmtest.ServeListener(ctx, ln, script, nil) }()
	t.Cleanup(func() {
		stopDaemon(t, filepath.Join(home, "run", "daemon.pid"))
		cancel()
		if err := <-served; err != nil {
			t.Logf("scripted model server: %v", err)
		}
	})
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("a repository\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}

	env := append(os.Environ(), "NEURAPHAGE_HOME="+home, "HOME="+work, "XDG_RUNTIME_DIR=",
		"ANTHROPIC_BASE_URL=http://"+ln.Addr().String(), "ANTHROPIC_API_KEY=test", "OPENAI_API_KEY=", "OPENAI_BASE_URL=",
		"GORACE=atexit_sleep_ms=0")
	return connectMCP(t, env), repo, env
}

// connectMCP starts `neuraphage mcp` with env and connects to it.
func connectMCP(t *testing.T, env []string) *mcpSession {
	t.Helper()
	cmd := exec.Command("neuraphage", "mcp")
	cmd.Env = env
	cmd.Stderr = os.Stderr
	s := &mcpSession{t: t, tools: map[string]*mcp.Tool{}, inputs: map[string]*jsonschema.Resolved{}, outputs: map[string]*jsonschema.Resolved{}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.progress = append(s.progress, r.Params.Message)
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to neuraphage mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s.cs = cs
	return s
}

// listTools lists the tools and resolves each one's schemas.
func (s *mcpSession) listTools(ctx context.Context) {
	s.t.Helper()
	res, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, tool := range res.Tools {
		s.tools[tool.Name] = tool
		in := resolveSchema(s.t, tool.Name+" input", tool.InputSchema)
		s.inputs[tool.Name] = in
		if in.Schema().Type != "object" {
			s.t.Errorf("%s: input schema type %q, want object", tool.Name, in.Schema().Type)
		}
		if tool.OutputSchema == nil {
			s.t.Errorf("%s has no output schema", tool.Name)
			continue
		}
		s.outputs[tool.Name] = resolveSchema(s.t, tool.Name+" output", tool.OutputSchema)
		if tool.Description == "" {
			s.t.Errorf("%s has no description", tool.Name)
		}
	}
}

// jsonValue is v as JSON decodes it.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func resolveSchema(t *testing.T, what string, v any) *jsonschema.Resolved {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var sc jsonschema.Schema
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	r, err := sc.Resolve(nil)
	if err != nil {
		t.Fatalf("%s schema: %v", what, err)
	}
	return r
}

// call calls a tool that must succeed, checks its structured result against
// the tool's output schema and decodes it into out.
func (s *mcpSession) call(ctx context.Context, name string, args map[string]any, out any) *mcp.CallToolResult {
	s.t.Helper()
	if in, ok := s.inputs[name]; !ok {
		s.t.Fatalf("%s was not listed", name)
	} else if err := in.Validate(jsonValue(s.t, args)); err != nil {
		s.t.Fatalf("%s(%v): the arguments do not match the input schema: %v", name, args, err)
	}
	res := s.callRaw(ctx, name, args)
	if res.IsError {
		s.t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		s.t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		s.t.Fatal(err)
	}
	sc, ok := s.outputs[name]
	if !ok {
		s.t.Fatalf("%s was not listed", name)
	}
	if err := sc.Validate(v); err != nil {
		s.t.Errorf("%s: the result does not match the output schema: %v\n%s", name, err, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s: decoding %s: %v", name, b, err)
		}
	}
	return res
}

func (s *mcpSession) callRaw(ctx context.Context, name string, args map[string]any) *mcp.CallToolResult {
	s.t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if name == "wait_tasks" {
		p.SetProgressToken("wait-1")
	}
	res, err := s.cs.CallTool(ctx, p)
	if err != nil {
		s.t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// toolError calls a tool that must fail with a tool error containing want.
func (s *mcpSession) toolError(ctx context.Context, name string, args map[string]any, want string) {
	s.t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	res, err := s.cs.CallTool(ctx, p)
	if err != nil {
		s.t.Fatalf("%s(%v): a protocol error, want a tool error: %v", name, args, err)
	}
	if !res.IsError || !strings.Contains(text(res), want) {
		s.t.Errorf("%s(%v) = error %v %q, want a tool error with %q", name, args, res.IsError, text(res), want)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

type taskRef struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// TestMCP drives `neuraphage mcp` as a host does: it lists the tools, spawns
// two scripted tasks, steers one with an urgent message and cancels it,
// waits for both, reads the other's report and log; bad input is a tool
// error that leaves the server serving.
func TestMCP(t *testing.T) {
	t.Parallel()
	s, repo, env := startMCP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	s.listTools(ctx)
	want := []string{"spawn_task", "list_tasks", "get_task", "wait_tasks", "send_message", "answer_task", "pause_task",
		"resume_task", "cancel_task", "get_report", "search_knowledge", "merge_status"}
	for _, name := range want {
		if s.tools[name] == nil {
			t.Errorf("tool %s is not listed", name)
		}
	}
	if len(s.tools) != len(want) {
		t.Errorf("%d tools listed, want %d", len(s.tools), len(want))
	}
	if !strings.Contains(s.cs.InitializeResult().Instructions, "merge queue") {
		t.Errorf("the instructions do not mention the merge queue:\n%s", s.cs.InitializeResult().Instructions)
	}

	// Bad input: the schema refuses a missing field; the daemon an unknown
	// task or engine; the server keeps serving.
	s.toolError(ctx, "get_task", map[string]any{}, "id")
	s.toolError(ctx, "get_task", map[string]any{"id": "t-zzzzz"}, "not found")
	s.toolError(ctx, "spawn_task", map[string]any{"description": "x", "repo": repo, "engine": "nope"}, "no such engine")
	s.toolError(ctx, "spawn_task", map[string]any{"description": "x", "repo": repo, "watch": []string{"nope"}}, `"nope"`)
	s.toolError(ctx, "wait_tasks", map[string]any{"ids": []string{"t-zzzzz"}}, "not found")
	s.toolError(ctx, "wait_tasks", map[string]any{"ids": []string{"x"}, "mode": "some"}, "mode")

	var a, b taskRef
	s.call(ctx, "spawn_task", map[string]any{"description": "write the alpha file", "repo": repo, "tags": []string{"mcp"}}, &a)
	s.call(ctx, "spawn_task", map[string]any{"description": "sleep on it", "repo": repo}, &b)
	if a.ID == "" || b.ID == "" || a.ID == b.ID {
		t.Fatalf("spawned %q and %q", a.ID, b.ID)
	}

	// The sleeper runs its tool; an urgent message is queued for it, then
	// it is cancelled.
	waitFor(t, ctx, func() bool {
		var info struct {
			Status     string `json:"status"`
			Iterations int    `json:"iterations"`
		}
		s.call(ctx, "get_task", map[string]any{"id": b.ID}, &info)
		return info.Status == "running" && info.Iterations >= 1
	})
	var msg struct {
		MessageID  int64  `json:"message_id"`
		TaskStatus string `json:"task_status"`
	}
	s.call(ctx, "send_message", map[string]any{"id": b.ID, "text": "stop sleeping", "urgent": true}, &msg)
	if msg.MessageID == 0 || msg.TaskStatus != "running" {
		t.Errorf("send_message = %+v, want a message queued for a running task", msg)
	}
	s.toolError(ctx, "answer_task", map[string]any{"id": b.ID, "answer": "yes"}, "asked nothing")
	// A host that goes away leaves its tasks running: the next session
	// finds the sleeper still at work.
	if err := s.cs.Close(); err != nil {
		t.Logf("closing the first session: %v", err)
	}
	s = connectMCP(t, env)
	s.listTools(ctx)
	var still taskRef
	s.call(ctx, "get_task", map[string]any{"id": b.ID}, &still)
	if still.Status != "running" {
		t.Errorf("after the host left, %s is %s, want running", b.ID, still.Status)
	}
	var cancelled taskRef
	s.call(ctx, "cancel_task", map[string]any{"id": b.ID, "reason": "not needed"}, &cancelled)

	var w struct {
		Done     bool      `json:"done"`
		Tasks    []taskRef `json:"tasks"`
		Finished []string  `json:"finished"`
	}
	s.call(ctx, "wait_tasks", map[string]any{"ids": []string{a.ID, b.ID}, "mode": "all", "timeout_seconds": 120}, &w)
	if !w.Done || len(w.Finished) != 2 {
		t.Fatalf("wait_tasks = %+v, want both finished", w)
	}
	status := map[string]string{}
	for _, x := range w.Tasks {
		status[x.ID] = x.Status
	}
	if status[a.ID] != "completed" || status[b.ID] != "cancelled" {
		t.Errorf("statuses after the wait: %v, want %s completed and %s cancelled", status, a.ID, b.ID)
	}
	// The notifications are handled apart from the result: the last may
	// come after it.
	waitFor(t, ctx, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.ContainsFunc(s.progress, func(m string) bool { return strings.HasPrefix(m, "2/2 finished") })
	})

	var info struct {
		Status string `json:"status"`
		Merge  *struct {
			State  string `json:"state"`
			Commit string `json:"commit"`
		} `json:"merge"`
	}
	s.call(ctx, "get_task", map[string]any{"id": a.ID}, &info)
	if info.Merge == nil || info.Merge.State != "landed" || info.Merge.Commit == "" {
		t.Errorf("get_task %s merge = %+v, want landed with a commit", a.ID, info.Merge)
	}
	if got, err := os.ReadFile(filepath.Join(repo, "alpha.txt")); err != nil || string(got) != "alpha\n" {
		t.Errorf("alpha.txt on the repository's branch = %q, %v", got, err)
	}

	var rep struct {
		Status   string                  `json:"status"`
		Summary  string                  `json:"summary"`
		Files    []struct{ Path string } `json:"files"`
		Markdown string                  `json:"markdown"`
	}
	res := s.call(ctx, "get_report", map[string]any{"id": a.ID}, &rep)
	if rep.Summary != "alpha.txt is written" || len(rep.Files) != 1 || rep.Files[0].Path != "alpha.txt" {
		t.Errorf("get_report = %+v", rep)
	}
	if !strings.HasPrefix(text(res), "## Task complete: write the alpha file") {
		t.Errorf("get_report's text content:\n%s", text(res))
	}

	var l struct {
		Tasks []taskRef `json:"tasks"`
	}
	s.call(ctx, "list_tasks", map[string]any{"all": true}, &l)
	if len(l.Tasks) != 2 {
		t.Errorf("list_tasks all = %+v, want the two tasks", l.Tasks)
	}
	s.call(ctx, "list_tasks", map[string]any{}, &l)
	if len(l.Tasks) != 0 {
		t.Errorf("list_tasks (unfinished) = %+v, want none", l.Tasks)
	}
	// Values outside an enum are refused by the schema before the handler.
	s.toolError(ctx, "list_tasks", map[string]any{"status": []string{"done"}}, "status")
	if err := s.inputs["list_tasks"].Validate(jsonValue(t, map[string]any{"status": []string{"done"}})); err == nil {
		t.Error("list_tasks's input schema accepts the status done")
	}
	if err := s.inputs["wait_tasks"].Validate(jsonValue(t, map[string]any{"ids": []string{"t-a"}, "mode": "some"})); err == nil {
		t.Error("wait_tasks's input schema accepts the mode some")
	}
	var ms struct {
		Open   []any `json:"open"`
		Recent []struct {
			TaskID string `json:"task_id"`
			State  string `json:"state"`
		} `json:"recent"`
	}
	s.call(ctx, "merge_status", map[string]any{}, &ms)
	if len(ms.Recent) == 0 || ms.Recent[0].TaskID != a.ID {
		t.Errorf("merge_status = %+v, want %s's landing", ms, a.ID)
	}
	s.call(ctx, "search_knowledge", map[string]any{"query": "alpha"}, nil)

	checkMCPOverSocket(t, ctx, envValue(env, "NEURAPHAGE_HOME"), 2)

	// The resources: the report as markdown, the log as JSON.
	rr, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "neuraphage://tasks/" + a.ID + "/report"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "alpha.txt") {
		t.Errorf("reading the report resource: %v %+v", err, rr)
	}
	rr, err = s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "neuraphage://tasks/" + a.ID + "/log"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"write_file"`) {
		t.Errorf("reading the log resource: %v %+v", err, rr)
	}
	if _, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "neuraphage://tasks/t-zzzzz/log"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("reading an unknown task's log: %v, want not found", err)
	}
}

// TestMCPNoDaemon: with no daemon and auto_start off, a tool call is a tool
// error that says so, and the server keeps serving.
func TestMCPNoDaemon(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	home := filepath.Join(work, "h")
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config", "neuraphage.yaml"), []byte("daemon:\n  auto_start: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "NEURAPHAGE_HOME="+home, "HOME="+work, "XDG_RUNTIME_DIR=", "GORACE=atexit_sleep_ms=0")
	s := connectMCP(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s.listTools(ctx)
	s.toolError(ctx, "list_tasks", map[string]any{}, "no daemon is running")
	s.toolError(ctx, "wait_tasks", map[string]any{"ids": []string{"t-aaaaa"}}, "no daemon is running")
	if _, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "neuraphage://tasks/t-aaaaa/report"}); err == nil || !strings.Contains(err.Error(), "no daemon is running") {
		t.Errorf("reading a resource with no daemon: %v", err)
	}
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("the condition never held")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
