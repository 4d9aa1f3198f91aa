package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/testkit/npmcli"
)

// rpcWait bounds every wait for a CLI's answer: generous, as a loaded
// machine starts Node slowly (Gemini CLI's initialize alone takes seconds).
const rpcWait = 3 * time.Minute

// rpcMsg is one JSON-RPC message in either direction.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      *int            `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// rpcSession drives a CLI's JSON-RPC protocol over its stdio, one JSON
// object per line, and keeps a transcript in the testdata/clis format.
// Its reader goroutine ends when the CLI closes stdout; close joins it.
type rpcSession struct {
	t       *testing.T
	version string // "2.0" for ACP; empty for Codex, which omits the member
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	msgs    chan rpcMsg   // closed when the CLI closes its output
	done    chan struct{} // closed when the reader has returned
	quit    chan struct{} // closed at cleanup: the reader stops delivering
	start   time.Time
	nextID  int

	mu         sync.Mutex // guards transcript
	transcript []map[string]any
}

func startRPC(t *testing.T, version, dir string, env []string, args ...string) *rpcSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", args[0], err)
	}
	s := &rpcSession{t: t, version: version, cmd: cmd, stdin: stdin, msgs: make(chan rpcMsg, 1024), done: make(chan struct{}), quit: make(chan struct{}), start: time.Now()}
	go s.read(stdout)
	t.Cleanup(func() {
		cancel() // kills the CLI if close did not end it
		close(s.quit)
		<-s.done
		_ = cmd.Wait()
		stderr.Close()
		if t.Failed() {
			b, _ := os.ReadFile(stderr.Name())
			t.Logf("%s stderr:\n%s", filepath.Base(args[0]), b)
		}
	})
	return s
}

func (s *rpcSession) read(r io.Reader) {
	defer close(s.done)
	defer close(s.msgs)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var m rpcMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue // a stray line that is not a message
		}
		s.record("recv", json.RawMessage(append([]byte(nil), sc.Bytes()...)))
		select {
		case s.msgs <- m:
		case <-s.quit:
			return
		}
	}
}

func (s *rpcSession) record(dir string, msg json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := json.Number(strconv.FormatFloat(time.Since(s.start).Seconds(), 'f', 3, 64))
	s.transcript = append(s.transcript, map[string]any{"t": at, "dir": dir, "msg": msg})
}

func (s *rpcSession) send(m rpcMsg) {
	s.t.Helper()
	m.JSONRPC = s.version
	b, err := json.Marshal(m)
	if err != nil {
		s.t.Fatal(err)
	}
	s.record("send", b)
	if _, err := s.stdin.Write(append(b, '\n')); err != nil {
		s.t.Fatalf("writing to the CLI: %v", err)
	}
}

// request sends a request and returns its id.
func (s *rpcSession) request(method string, params any) int {
	s.t.Helper()
	id := s.nextID
	s.nextID++
	s.send(rpcMsg{ID: &id, Method: method, Params: mustMarshal(s.t, params)})
	return id
}

func (s *rpcSession) notify(method string, params any) {
	s.t.Helper()
	var raw json.RawMessage
	if params != nil {
		raw = mustMarshal(s.t, params)
	}
	s.send(rpcMsg{Method: method, Params: raw})
}

// waitFor returns the first message for which match holds, failing the
// test if the CLI asks something (a server request) or goes away first.
func (s *rpcSession) waitFor(what string, match func(rpcMsg) bool) rpcMsg {
	s.t.Helper()
	timeout := time.After(rpcWait)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.t.Fatalf("the CLI closed its output before %s", what)
			}
			if m.ID != nil && m.Method != "" {
				s.t.Fatalf("the CLI asked %s (%s) while waiting for %s", m.Method, m.Params, what)
			}
			if match(m) {
				return m
			}
		case <-timeout:
			s.t.Fatalf("no %s within %v", what, rpcWait)
		}
	}
}

// call sends a request and returns its result.
func (s *rpcSession) call(method string, params any, result any) {
	s.t.Helper()
	id := s.request(method, params)
	m := s.waitFor("the answer to "+method, func(m rpcMsg) bool { return m.ID != nil && *m.ID == id && m.Method == "" })
	if len(m.Error) > 0 {
		s.t.Fatalf("%s failed: %s", method, m.Error)
	}
	if result != nil {
		if err := json.Unmarshal(m.Result, result); err != nil {
			s.t.Fatalf("%s result %s: %v", method, m.Result, err)
		}
	}
}

// notification waits for a notification of method and decodes its params.
func (s *rpcSession) notification(method string, params any) {
	s.t.Helper()
	m := s.waitFor(method, func(m rpcMsg) bool { return m.ID == nil && m.Method == method })
	if err := json.Unmarshal(m.Params, params); err != nil {
		s.t.Fatalf("%s params %s: %v", method, m.Params, err)
	}
}

// close ends the CLI's input and saves the transcript when recording.
func (s *rpcSession) close(name string) {
	s.t.Helper()
	s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(rpcWait):
		s.t.Errorf("the CLI did not exit after its input closed")
	}
	if os.Getenv(recordEnv) != "1" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.Create(filepath.Join("testdata", "clis", name+".jsonl"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, l := range s.transcript {
		if err := enc.Encode(l); err != nil {
			s.t.Fatal(err)
		}
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type obj = map[string]any

func textInput(text string) []any {
	return []any{obj{"type": "text", "text": text, "text_elements": []any{}}}
}

// TestCodexAppServer drives `codex app-server` against the scripted
// server through one thread: a turn steered while its first model request
// is held open, then a turn interrupted while held, then a turn on the
// same thread that completes. Holding the request (Server.Hold) makes the
// order certain without sleeping.
func TestCodexAppServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Codex CLI")
	}
	t.Parallel()
	codex := npmcli.Install(t, codexPackage, codexVersion, "codex")
	srv := llmtest.NewServer(t, &llmtest.Script{Conversations: []llmtest.Conversation{
		{Name: "steered", Match: llmtest.Match{Model: "^gpt-", After: "STEER-NOTE"}, Steps: []llmtest.Step{
			{Text: "Saw the steer."}, {Text: "Second turn done."}, {Text: "Third turn done."},
		}},
		{Name: "codex", Match: llmtest.Match{Model: "^gpt-"}, Steps: []llmtest.Step{{Text: "Not steered."}}},
	}})
	home, work := t.TempDir(), t.TempDir()
	env := cliEnv("HOME="+home, "CODEX_HOME="+home, "LLMTEST_KEY=sk-llmtest")
	s := startRPC(t, "", work, env, codex, "app-server", "--disable", "plugins", "-c", "analytics.enabled=false",
		"-c", "model_provider=llmtest",
		"-c", `model_providers.llmtest={name="llmtest", base_url="`+srv.OpenAIBaseURL()+`", wire_api="responses", env_key="LLMTEST_KEY"}`)

	s.call("initialize", obj{"clientInfo": obj{"name": "neuraphage", "title": nil, "version": "0.0.0"}, "capabilities": nil}, nil)
	s.notify("initialized", nil)
	var thread struct {
		Thread struct{ ID string } `json:"thread"`
	}
	s.call("thread/start", obj{"model": "gpt-llmtest", "cwd": work, "approvalPolicy": "never", "sandbox": "workspace-write"}, &thread)
	tid := thread.Thread.ID
	type turnResult struct {
		Turn struct{ ID, Status string } `json:"turn"`
	}
	ctx := t.Context()

	// Steer: the first request is held until the steer has been accepted.
	release := srv.Hold("codex", 0)
	var first turnResult
	s.call("turn/start", obj{"threadId": tid, "input": textInput("run the marker command")}, &first)
	if err := srv.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var steered struct {
		TurnID string `json:"turnId"`
	}
	s.call("turn/steer", obj{"threadId": tid, "expectedTurnId": first.Turn.ID, "input": textInput("STEER-NOTE: also say hello")}, &steered)
	release()
	if steered.TurnID != first.Turn.ID {
		t.Errorf("turn/steer answered turn %q, want the running turn %q", steered.TurnID, first.Turn.ID)
	}
	var done turnResult
	s.notification("turn/completed", &done)
	if done.Turn.ID != first.Turn.ID || done.Turn.Status != "completed" {
		t.Errorf("first turn ended %+v, want %s completed", done.Turn, first.Turn.ID)
	}
	if last := srv.Requests()[len(srv.Requests())-1]; last.Conversation != "steered" {
		t.Errorf("the request after the steer was answered by %q, want the steered conversation", last.Conversation)
	}

	// Interrupt: the second turn's request is held while turn/interrupt runs.
	release = srv.Hold("steered", 1)
	defer release()
	n := len(srv.Requests())
	var second turnResult
	s.call("turn/start", obj{"threadId": tid, "input": textInput("a second task")}, &second)
	if err := srv.WaitRequests(ctx, n+1); err != nil {
		t.Fatal(err)
	}
	s.call("turn/interrupt", obj{"threadId": tid, "turnId": second.Turn.ID}, nil)
	s.notification("turn/completed", &done)
	if done.Turn.ID != second.Turn.ID || done.Turn.Status != "interrupted" {
		t.Errorf("second turn ended %+v, want %s interrupted", done.Turn, second.Turn.ID)
	}
	release()

	// The thread goes on after an interrupt.
	var third turnResult
	s.call("turn/start", obj{"threadId": tid, "input": textInput("a third task")}, &third)
	s.notification("turn/completed", &done)
	if done.Turn.ID != third.Turn.ID || done.Turn.Status != "completed" {
		t.Errorf("third turn ended %+v, want %s completed", done.Turn, third.Turn.ID)
	}
	s.close("codex-app-server-" + codexVersion)
}

// TestGeminiACP drives `gemini --acp` against the scripted server: one
// prompt with a shell tool call that completes, then a prompt cancelled
// while its model request is held open.
func TestGeminiACP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI")
	}
	t.Parallel()
	gemini := npmcli.Install(t, geminiPackage, geminiVersion, "gemini")
	srv := llmtest.NewServer(t, cliScript())
	home, work := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cliEnv("HOME="+home, "GEMINI_API_KEY=gm-llmtest", "GOOGLE_GEMINI_BASE_URL="+srv.GeminiBaseURL(), "GEMINI_CLI_TRUST_WORKSPACE=true")
	s := startRPC(t, "2.0", work, env, gemini, "--acp", "--yolo", "-m", "gemini-2.5-flash")

	var init struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
	}
	s.call("initialize", obj{"protocolVersion": 1, "clientCapabilities": obj{"fs": obj{"readTextFile": false, "writeTextFile": false}, "terminal": false}}, &init)
	if init.ProtocolVersion != 1 || !init.AgentCapabilities.LoadSession {
		t.Errorf("initialize = %+v, want protocol 1 with loadSession", init)
	}
	s.call("authenticate", obj{"methodId": "gemini-api-key"}, nil)
	var session struct {
		SessionID string `json:"sessionId"`
	}
	s.call("session/new", obj{"cwd": work, "mcpServers": []any{}}, &session)
	type promptResult struct {
		StopReason string `json:"stopReason"`
	}
	var res promptResult
	s.call("session/prompt", obj{"sessionId": session.SessionID, "prompt": []any{obj{"type": "text", "text": "run the marker command"}}}, &res)
	if res.StopReason != "end_turn" {
		t.Errorf("first prompt stopped %q, want end_turn", res.StopReason)
	}
	checkToolRoundTrip(t, srv, "gemini")

	// Cancel while the next model request is held open.
	release := srv.Hold("gemini", 2)
	defer release()
	n := len(srv.Requests())
	id := s.request("session/prompt", obj{"sessionId": session.SessionID, "prompt": []any{obj{"type": "text", "text": "now something long"}}})
	if err := srv.WaitRequests(t.Context(), n+1); err != nil {
		t.Fatal(err)
	}
	s.notify("session/cancel", obj{"sessionId": session.SessionID})
	m := s.waitFor("the cancelled prompt's answer", func(m rpcMsg) bool { return m.ID != nil && *m.ID == id && m.Method == "" })
	if err := json.Unmarshal(m.Result, &res); err != nil || res.StopReason != "cancelled" {
		t.Errorf("cancelled prompt answered %s (%v), want stopReason cancelled", m.Result, err)
	}
	release()
	s.close("gemini-acp-" + geminiVersion)
}
