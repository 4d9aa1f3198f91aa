package llmtest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/testkit/npmcli"
)

// The CLI versions the engines are built and verified against.
const (
	codexPackage  = "@openai/codex"
	codexVersion  = "0.169.0"
	geminiPackage = "@google/gemini-cli"
	geminiVersion = "0.61.0"
)

// recordEnv, set to 1, makes the CLI tests write what each CLI sent to
// testdata/clis (see TestRecordedCLITraffic, which replays it).
const recordEnv = "NEURAPHAGE_RECORD_CLIS"

// marker is what the scripted shell call prints; finding it in the next
// request proves the CLI ran the tool and sent its result back.
const marker = "llmtest-marker-7f3a"

// cliScript answers both CLIs: one shell tool call (each CLI's own shell
// tool), then a final text once the result is back.
func cliScript() *llmtest.Script {
	final := "The command printed the marker. Done."
	return &llmtest.Script{Conversations: []llmtest.Conversation{
		{Name: "codex", Match: llmtest.Match{Model: "^gpt-"}, Steps: []llmtest.Step{
			{Text: "Running the command.", ToolCalls: []llmtest.ToolCall{{Name: "exec_command", Input: map[string]any{"cmd": "echo " + marker}}}},
			{Text: final},
		}},
		{Name: "gemini", Match: llmtest.Match{Model: "^gemini-"}, Steps: []llmtest.Step{
			{Text: "Running the command.", ToolCalls: []llmtest.ToolCall{{Name: "run_shell_command",
				Input: map[string]any{"command": "echo " + marker, "description": "Print a marker."}}}},
			{Text: final},
		}},
	}}
}

// recorded is one request a CLI sent, as stored in testdata/clis.
type recorded struct {
	Method string              `json:"method"`
	Path   string              `json:"path"`
	Query  string              `json:"query,omitempty"`
	Header map[string][]string `json:"header"`
	Body   json.RawMessage     `json:"body"`
}

// recorder sits in front of the scripted server and keeps every request.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	reqs []recorded
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rec := recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: json.RawMessage(body)}
	if !json.Valid(body) {
		rec.Body, _ = json.Marshal(string(body))
	}
	rc.reqs = append(rc.reqs, rec)
	rc.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	rc.next.ServeHTTP(w, r)
}

func (rc *recorder) save(t *testing.T, name string) {
	t.Helper()
	if os.Getenv(recordEnv) != "1" {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	b, err := json.MarshalIndent(rc.reqs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "clis", name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serveForCLI starts the scripted server behind a recorder.
func serveForCLI(t *testing.T) (*llmtest.Server, *recorder, string) {
	srv := llmtest.NewServer(t, cliScript())
	rec := &recorder{next: srv}
	front := httptest.NewServer(rec)
	t.Cleanup(front.Close)
	return srv, rec, front.URL
}

// cliEnv is the caller's environment without any model provider settings
// (a developer's real keys must not leak into the test), plus extra.
func cliEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "OPENAI_"), strings.HasPrefix(name, "GEMINI_"), strings.HasPrefix(name, "GOOGLE_"),
			strings.HasPrefix(name, "CODEX_"), strings.HasPrefix(name, "ANTHROPIC_"), name == "HOME":
		default:
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func runCLI(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	res, err := proc.Run(t.Context(), proc.Cmd{Args: args, Dir: dir, Env: env, Timeout: 4 * time.Minute, SeparateStderr: true, MaxOutput: 8 << 20})
	if err != nil {
		t.Fatalf("running %s: %v", args[0], err)
	}
	if res.ExitCode != 0 || res.TimedOut {
		t.Fatalf("%s exited %d (timed out %t)\nstdout:\n%s\nstderr:\n%s", filepath.Base(args[0]), res.ExitCode, res.TimedOut, res.Output, res.Stderr)
	}
	return res.Output
}

// jsonLines decodes the JSON objects of a CLI's JSONL output, skipping
// lines that are not JSON objects.
func jsonLines(out string) []map[string]any {
	var evs []map[string]any
	for line := range strings.Lines(out) {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

// checkToolRoundTrip checks the server saw two requests of conv, the
// second holding the shell tool's output with the marker.
func checkToolRoundTrip(t *testing.T, srv *llmtest.Server, conv string) {
	t.Helper()
	var steps []llmtest.Request
	for _, r := range srv.Requests() {
		if r.Conversation == conv {
			steps = append(steps, r)
		}
	}
	if len(steps) != 2 || steps[0].Step != 0 || steps[1].Step != 1 {
		t.Fatalf("server saw %d requests of %s, want steps 0 and 1", len(steps), conv)
	}
	if first := steps[0].Messages[0]; first.Role != llm.RoleUser || !strings.Contains(first.Text(), "run the marker command") {
		t.Errorf("first request's first message does not hold the prompt: %+v", first)
	}
	last := steps[1].Messages[len(steps[1].Messages)-1]
	var result *llm.ToolResult
	for _, p := range last.Parts {
		if p.ToolResult != nil {
			result = p.ToolResult
		}
	}
	if result == nil || !strings.Contains(result.Content, marker) {
		t.Errorf("second request ends with %+v, want the shell output holding %q", last, marker)
	}
	if len(steps[0].Tools) == 0 || steps[0].System == "" {
		t.Errorf("first request has %d tools and system %q, want the CLI's tools and prompt", len(steps[0].Tools), steps[0].System)
	}
}

func TestCodexCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Codex CLI")
	}
	t.Parallel()
	codex := npmcli.Install(t, codexPackage, codexVersion, "codex")
	srv, rec, url := serveForCLI(t)
	home, work := t.TempDir(), t.TempDir()
	env := cliEnv("HOME="+home, "CODEX_HOME="+home, "LLMTEST_KEY=sk-llmtest")
	out := runCLI(t, work, env, codex, "exec", "--json", "--skip-git-repo-check",
		"--disable", "plugins", "-c", "analytics.enabled=false",
		"-c", "model_provider=llmtest",
		"-c", `model_providers.llmtest={name="llmtest", base_url="`+url+`/v1", wire_api="responses", env_key="LLMTEST_KEY"}`,
		"-m", "gpt-llmtest", "run the marker command")
	rec.save(t, "codex-"+codexVersion)
	checkToolRoundTrip(t, srv, "codex")
	var ranShell, answered, completed bool
	for _, ev := range jsonLines(out) {
		item, _ := ev["item"].(map[string]any)
		switch {
		case ev["type"] == "item.completed" && item["type"] == "command_execution":
			ranShell = strings.Contains(item["aggregated_output"].(string), marker) && item["exit_code"] == 0.0
		case ev["type"] == "item.completed" && item["type"] == "agent_message":
			answered = answered || item["text"] == "The command printed the marker. Done."
		case ev["type"] == "turn.completed":
			usage, _ := ev["usage"].(map[string]any)
			completed = usage["output_tokens"].(float64) > 0
		}
	}
	if !ranShell || !answered || !completed {
		t.Errorf("codex events: ran shell %t, answered %t, completed with usage %t\n%s", ranShell, answered, completed, out)
	}
	if h := srv.Requests()[0].Header; h.Get("Authorization") != "Bearer sk-llmtest" || !strings.HasPrefix(h.Get("Accept"), "text/event-stream") {
		t.Errorf("codex sent authorization %q accept %q", h.Get("Authorization"), h.Get("Accept"))
	}
}

func TestGeminiCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI")
	}
	t.Parallel()
	gemini := npmcli.Install(t, geminiPackage, geminiVersion, "gemini")
	srv, rec, url := serveForCLI(t)
	home, work := t.TempDir(), t.TempDir()
	// Without settings selecting key auth the CLI ignores the variables
	// ("Invalid auth method selected"); without trusting the folder it
	// refuses to run headless.
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}}}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cliEnv("HOME="+home, "GEMINI_API_KEY=gm-llmtest", "GOOGLE_GEMINI_BASE_URL="+url, "GEMINI_CLI_TRUST_WORKSPACE=true")
	out := runCLI(t, work, env, gemini, "-p", "run the marker command", "-o", "stream-json", "--yolo", "-m", "gemini-2.5-flash")
	rec.save(t, "gemini-"+geminiVersion)
	checkToolRoundTrip(t, srv, "gemini")
	var used, result, success bool
	for _, ev := range jsonLines(out) {
		switch ev["type"] {
		case "tool_use":
			used = ev["tool_name"] == "run_shell_command"
		case "tool_result":
			result = ev["status"] == "success" && strings.Contains(ev["output"].(string), marker)
		case "result":
			success = ev["status"] == "success"
		}
	}
	if !used || !result || !success {
		t.Errorf("gemini events: tool_use %t, tool_result %t, result success %t\n%s", used, result, success, out)
	}
	if h := srv.Requests()[0].Header; h.Get("X-Goog-Api-Key") != "gm-llmtest" {
		t.Errorf("gemini sent x-goog-api-key %q", h.Get("X-Goog-Api-Key"))
	}
}

// TestRecordedCLITraffic replays what the real CLIs sent (recorded by the
// tests above with NEURAPHAGE_RECORD_CLIS=1) to a fresh server: the
// server parses every request, answers the right step, and sees the tool
// output in the second. It runs offline, without the CLIs.
func TestRecordedCLITraffic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, conv, path, query string
		api                     llmtest.API
	}{
		{"codex-" + codexVersion, "codex", "/v1/responses", "", llmtest.APIResponses},
		{"gemini-" + geminiVersion, "gemini", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "alt=sse", llmtest.APIGemini},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("testdata", "clis", tc.file+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var reqs []recorded
			if err := json.Unmarshal(raw, &reqs); err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewServer(t, cliScript())
			for i, r := range reqs {
				if r.Method != http.MethodPost || r.Path != tc.path || r.Query != tc.query {
					t.Errorf("request %d: %s %s?%s, want POST %s?%s", i, r.Method, r.Path, r.Query, tc.path, tc.query)
				}
				hreq, err := http.NewRequestWithContext(t.Context(), r.Method, srv.URL()+r.Path+"?"+r.Query, bytes.NewReader(r.Body))
				if err != nil {
					t.Fatal(err)
				}
				for k, vs := range r.Header {
					if k != "Content-Length" && k != "Accept-Encoding" {
						hreq.Header[k] = vs
					}
				}
				resp, err := http.DefaultClient.Do(hreq)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					t.Errorf("request %d: status %d %s: %.300s", i, resp.StatusCode, resp.Header.Get("Content-Type"), body)
				}
			}
			for _, r := range srv.Requests() {
				if r.API != tc.api || !r.Stream {
					t.Errorf("parsed as %s (stream %t), want streaming %s", r.API, r.Stream, tc.api)
				}
			}
			checkToolRoundTrip(t, srv, tc.conv)
		})
	}
}
