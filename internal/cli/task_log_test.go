package cli

// Tests of how a task's run is rendered: stored (task log) and live (attach,
// events --follow), and of the commands end to end against a fake daemon.

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

func at(secs int) time.Time { return t0.Add(time.Duration(secs) * time.Second) }

func assistant(parts ...llm.Part) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Parts: parts}
}

func call(id, name, input string) llm.Part {
	return llm.ToolCallPart(llm.ToolCall{ID: id, Name: name, Input: json.RawMessage(input)})
}

func result(id, content string, failed bool) llm.Part {
	return llm.ToolResultPart(llm.ToolResult{CallID: id, Content: content, IsError: failed})
}

func sampleLog() api.TaskLog {
	return api.TaskLog{TaskID: "t-4k2x9", Entries: []api.LogEntry{
		{Seq: 0, Turn: 0, At: at(0), Message: llm.UserText("add token expiry checks\n\nthe parser is in internal/config")},
		{Seq: 1, Turn: 1, At: at(1), Message: assistant(llm.TextPart("Let me look."),
			call("c1", "read_file", `{ "path": "internal/config/config.go" }`),
			call("c2", "bash", `{"command":"go test ./..."}`))},
		{Seq: 2, Turn: 1, At: at(2), Message: llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
			result("c1", "package config\n\nimport (\n\t\"os\"\n)\n\nfunc Load() {}\n", false),
			result("c2", "FAIL", true),
		}}},
		{Seq: 3, Turn: 2, At: at(3), Message: assistant(call("c3", "edit_file", `{"path":"a.go"}`))},
		{Seq: 4, Turn: 2, At: at(4), Message: llm.Message{Role: llm.RoleUser, Parts: []llm.Part{result("c3", "", false)}}},
		{Seq: 5, Turn: 3, At: at(5), Message: llm.UserText(`<system-nudge severity="low">run the tests</system-nudge>`)},
		{Seq: 6, Turn: 3, At: at(6), Message: assistant(llm.TextPart(strings.Repeat("done\n", assistantLines+2)))},
	}}
}

func TestWriteTaskLog(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeTaskLog(&b, sampleLog(), 0, time.UTC)
	want := `── turn 0 · 2026-11-21 09:00:00 ──
user       add token expiry checks

           the parser is in internal/config
── turn 1 · 2026-11-21 09:00:01 ──
assistant  Let me look.
→ read_file {"path":"internal/config/config.go"}
→ bash {"command":"go test ./..."}
← read_file ok (49 bytes)
    package config

    import (
    	"os"
    … 3 more lines
← bash error (4 bytes)
    FAIL
── turn 2 · 2026-11-21 09:00:03 ──
→ edit_file {"path":"a.go"}
← ok (0 bytes)
── turn 3 · 2026-11-21 09:00:05 ──
user       <system-nudge severity="low">run the tests</system-nudge>
assistant  done
` + strings.Repeat("           done\n", assistantLines-1) + `           … 2 more lines
(entries 0–6; ` + "`--from 7`" + ` shows what follows)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("task log (-want +got):\n%s", diff)
	}
}

func TestWriteTaskLogCutsLongResultLines(t *testing.T) {
	t.Parallel()
	l := api.TaskLog{TaskID: "t-4k2x9", Entries: []api.LogEntry{
		{Seq: 9, Turn: 4, At: at(0), Message: llm.Message{Role: llm.RoleUser, Parts: []llm.Part{result("c", strings.Repeat("x", 500), false)}}},
	}}
	var b bytes.Buffer
	writeTaskLog(&b, l, 9, time.UTC)
	want := "── turn 4 · 2026-11-21 09:00:00 ──\n← ok (500 bytes)\n    " + strings.Repeat("x", resultWidth-1) + "…\n(entries 9–9; `--from 10` shows what follows)\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("task log (-want +got):\n%s", diff)
	}
}

func TestWriteTaskLogWithoutEntries(t *testing.T) {
	t.Parallel()
	for from, want := range map[int]string{0: "t-4k2x9 has no conversation yet\n", 7: "t-4k2x9: no entries from 7 on\n"} {
		var b bytes.Buffer
		writeTaskLog(&b, api.TaskLog{TaskID: "t-4k2x9"}, from, time.UTC)
		if b.String() != want {
			t.Errorf("from %d: %q, want %q", from, b.String(), want)
		}
	}
}

// run is a task's run as its observations report it, with a retried
// stream and the events of its life around it.
func sampleRun() []event.Event {
	const id = "t-4k2x9"
	evs := []event.Event{
		event.New(at(0), id, event.TaskStatus{From: task.Queued, To: task.Running, Reason: "dispatched"}),
		event.New(at(1), id, event.TurnStarted{Turn: 1, Engine: "native", Model: "claude-sonnet-4-5"}),
		event.New(at(1), id, event.TextDelta{Turn: 1, Text: "Let me"}),
		event.New(at(1), id, event.TextDelta{Turn: 1, Reset: true}),
		event.New(at(1), id, event.TextDelta{Turn: 1, Text: "Let me look"}),
		event.New(at(1), id, event.TextDelta{Turn: 1, Text: " at it."}),
		event.New(at(2), id, event.Text{Turn: 1, Text: "Let me look at it."}),
		event.New(at(2), id, event.ToolCall{Turn: 1, CallID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`)}),
		event.New(at(2), id, event.ToolResult{Turn: 1, CallID: "c1", Name: "read_file", Size: 2345, Preview: "package a\n\nfunc A() {}\n", DurationMs: 12}),
		event.New(at(2), id, event.Usage{Turn: 1, InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 1000, CostUSD: 0.0123, TotalTokens: 12300, TotalCostUSD: 0.4567}),
		event.New(at(3), id, event.TurnEnded{Turn: 1, StopReason: "tool_use", DurationMs: 3200, Attempts: 2}),
		event.New(at(4), id, event.TurnStarted{Turn: 2, Engine: "native", Model: "claude-sonnet-4-5", Resumed: true}),
		event.New(at(4), id, event.Text{Turn: 2, Text: "Two edits to make."}),
		event.New(at(4), id, event.ToolCall{Turn: 2, CallID: "c2", Name: "edit_file", Args: json.RawMessage(`{"path":"a.go"}`)}),
		event.New(at(4), id, event.ToolCall{Turn: 2, CallID: "c3", Name: "bash", Args: json.RawMessage(`{"command":"go vet"}`)}),
		event.New(at(5), id, event.ToolResult{Turn: 2, CallID: "c3", Name: "bash", Error: true, Size: 4, Preview: "FAIL", DurationMs: 1500}),
		event.New(at(5), id, event.FileChanged{Turn: 2, Path: "a.go", Op: "modified", Tool: "edit_file"}),
		event.New(at(6), id, event.NeedsInput{Turn: 2, Question: "Should I update the docs?"}),
		event.New(at(7), id, event.TaskMessage{InjectionID: 3, Source: "watcher", Kind: "nudge", Attrs: map[string]string{"severity": "high"}, Urgent: true, Text: "stop looping"}),
		event.New(at(7), id, event.Interrupted{Turn: 2, Dropped: []string{"model call"}}),
		event.New(at(8), id, event.Delivered{Turn: 3, InjectionIDs: []int64{3, 4}, Kinds: []string{"nudge", "message"}, LatencyMs: []int64{120, 3400}}),
		event.New(at(9), id, event.Learning{Turn: 3, LearningID: 4, Summary: "config lives in internal/config", Tags: []string{"config"}}),
		event.New(at(9), id, event.Completed{Turn: 3, Summary: "Added expiry checks."}),
		event.New(at(9), id, event.TaskStatus{From: task.Running, To: task.Completed}),
	}
	for i := range evs {
		if !evs[i].Transient() {
			evs[i].ID = int64(10 + i)
		}
	}
	return evs
}

func TestLiveTranscript(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := newLiveWriter(&b, time.UTC, true)
	for _, e := range sampleRun() {
		if err := w.Print(e); err != nil {
			t.Fatal(err)
		}
	}
	want := `09:00:00.000  task.status      queued → running: dispatched
── turn 1 · claude-sonnet-4-5 · 09:00:01 ──
Let me
⟲ the model call was retried; the text above is discarded
Let me look at it.
→ read_file {"path":"a.go"}
← ok (2345 bytes, 12ms)
    package a

    func A() {}
· 1.2k in / 340 out tokens (cache 1.0k read), $0.0123; task total 12.3k tokens, $0.4567
· turn 1 ended: tool_use, 3.2s, 2 attempts
── turn 2 · claude-sonnet-4-5 · 09:00:04 · resumed ──
Two edits to make.
→ edit_file {"path":"a.go"}
→ bash {"command":"go vet"}
← bash error (4 bytes, 1.5s)
    FAIL
✎ modified a.go (edit_file)
? Should I update the docs?
  (the task waits for your answer: type it and press Enter)
09:00:07.000  task.message     nudge #3 from watcher queued [severity=high, urgent]: stop looping
! turn 2 interrupted by an urgent message; dropped model call
✉ turn 3 took in nudge #3 after 120ms, message #4 after 3.4s
* learning #4: config lives in internal/config [config]
✓ completed: Added expiry checks.
09:00:09.000  task.status      running → completed
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

func TestLiveTranscriptRepeatsTextWhenDeltasWereDropped(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := newLiveWriter(&b, time.UTC, true)
	for _, e := range []event.Event{
		event.New(at(1), "t-4k2x9", event.TextDelta{Turn: 1, Text: "Hello, "}),
		// The delta "world" was dropped: this watcher was too slow.
		event.New(at(1), "t-4k2x9", event.TextDelta{Turn: 1, Text: "!"}),
		event.New(at(2), "t-4k2x9", event.Text{Turn: 1, Text: "Hello, world!"}),
	} {
		w.Print(e)
	}
	want := "Hello, !\n⟲ some streamed text was missed; the turn's text in full:\nHello, world!\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

func TestLiveLogLinesStreamTextInline(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := newLiveWriter(&b, time.UTC, false)
	delta := func(id task.ID, turn int, text string) event.Event {
		return event.New(at(1), id, event.TextDelta{Turn: turn, Text: text})
	}
	for _, e := range []event.Event{
		delta("t-aaaaa", 1, "Hello"), delta("t-aaaaa", 1, ", world"),
		delta("t-bbbbb", 4, "Other task\n"),
		delta("t-aaaaa", 1, "!"),
		{ID: 7, Time: at(2), Kind: event.KindText, TaskID: "t-aaaaa", Payload: event.Text{Turn: 1, Text: "Hello, world!"}},
	} {
		w.Print(e)
	}
	want := `-      09:00:01.000  t-aaaaa  agent.text.delta   Hello, world
-      09:00:01.000  t-bbbbb  agent.text.delta   Other task
-      09:00:01.000  t-aaaaa  agent.text.delta   !
7      09:00:02.000  t-aaaaa  agent.text         turn 1: Hello, world!
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}

func TestDescribeEvent(t *testing.T) {
	t.Parallel()
	want := []string{
		"queued → running: dispatched",
		"turn 1 started (native, claude-sonnet-4-5)",
		"turn 1: Let me",
		"turn 1: retried; the text so far is discarded",
		"turn 1: Let me look",
		"turn 1: at it.",
		"turn 1: Let me look at it.",
		`turn 1 → read_file {"path":"a.go"}`,
		"turn 1 ← read_file ok (2345 bytes, 12ms)",
		"turn 1: 1.2k in / 340 out tokens (cache 1.0k read), $0.0123; task total 12.3k tokens, $0.4567",
		"turn 1 ended: tool_use, 3.2s, 2 attempts",
		"turn 2 started (native, claude-sonnet-4-5), resumed from the stored conversation",
		"turn 2: Two edits to make.",
		`turn 2 → edit_file {"path":"a.go"}`,
		`turn 2 → bash {"command":"go vet"}`,
		"turn 2 ← bash error (4 bytes, 1.5s)",
		"modified a.go (edit_file)",
		"turn 2 asks: Should I update the docs?",
		"nudge #3 from watcher queued [severity=high, urgent]: stop looping",
		"turn 2 interrupted by an urgent message; dropped model call",
		"turn 3 took in nudge #3 after 120ms, message #4 after 3.4s",
		"learning #4: config lives in internal/config [config]",
		"completed: Added expiry checks.",
		"running → completed",
	}
	var got []string
	for _, e := range sampleRun() {
		got = append(got, describeEvent(e))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("descriptions (-want +got):\n%s", diff)
	}
	// A plain user message reads as it always did.
	plain := describeEvent(event.New(t0, "t-4k2x9", event.TaskMessage{InjectionID: 1, Source: "user", Text: "hi"}))
	if plain != "message #1 from user queued: hi" {
		t.Errorf("plain message: %q", plain)
	}
}

func TestParseSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.Local)
	tests := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "24h", want: now.Add(-24 * time.Hour)},
		{in: "7d", want: now.AddDate(0, 0, -7)},
		{in: "2026-11-01", want: time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local)},
		{in: "2026-11-01T09:00:00Z", want: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)},
		{in: "-3d", bad: true},
		{in: "yesterday", bad: true},
		{in: "7dd", bad: true},
	}
	for _, tt := range tests {
		got, err := parseSince(tt.in, now)
		var ue *usageError
		switch {
		case tt.bad && !errors.As(err, &ue):
			t.Errorf("parseSince(%q) = %v, %v; want a usage error", tt.in, got, err)
		case !tt.bad && (err != nil || !got.Equal(tt.want)):
			t.Errorf("parseSince(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// fakeDaemon serves routes on the socket the CLI finds under a new home, as a
// daemon would, answering the health probe itself. It returns the home.
func fakeDaemon(t *testing.T, routes map[string]http.HandlerFunc) string {
	t.Helper()
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(home, "run", "neuraphage.sock"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(api.Health{Status: "ok"})
	})
	for pattern, h := range routes {
		mux.HandleFunc(pattern, h)
	}
	srv := &http.Server{Handler: mux}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return home
}

// runCLI runs the command line under home and returns its exit code and output.
func runCLI(t *testing.T, home, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(Env{
		Args: args, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut,
		Getenv:     func(k string) string { return map[string]string{"NEURAPHAGE_HOME": home}[k] },
		Version:    "test",
		Executable: func() (string, error) { return "", errors.New("no daemon binary in tests") },
		Argv0:      "neuraphage",
	})
	return code, out.String(), errOut.String()
}

func writeAPI(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func TestTaskLogCommand(t *testing.T) {
	t.Parallel()
	paths := make(chan string, 2)
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/tasks/{ref}/log": func(w http.ResponseWriter, r *http.Request) {
			paths <- r.URL.RequestURI()
			l := sampleLog()
			l.Entries = l.Entries[5:]
			writeAPI(w, l)
		},
	})
	code, out, errOut := runCLI(t, home, "", "task", "log", "4k2", "--from", "5")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got := <-paths; got != "/v1/tasks/4k2/log?from=5" {
		t.Errorf("request %s", got)
	}
	if !strings.HasPrefix(out, "── turn 3 · ") || !strings.Contains(out, `user       <system-nudge severity="low">run the tests</system-nudge>`) {
		t.Errorf("output:\n%s", out)
	}
	code, out, _ = runCLI(t, home, "", "task", "log", "4k2", "--json")
	var l api.TaskLog
	if err := json.Unmarshal([]byte(out), &l); code != ExitOK || err != nil || l.TaskID != "t-4k2x9" || len(l.Entries) != 2 {
		t.Errorf("--json: exit %d, %v, %+v", code, err, l)
	}
}

func TestTaskLogRefusesANegativeFrom(t *testing.T) {
	t.Parallel()
	code, _, errOut := runCLI(t, t.TempDir(), "", "task", "log", "4k2", "--from", "-1")
	if code != ExitUsage || !strings.Contains(errOut, "--from -1: entries are numbered from 0") || !strings.Contains(errOut, "hint: ") {
		t.Errorf("exit %d, stderr %q; want a usage error with a hint", code, errOut)
	}
}

// TestAttachAnswersAQuestion: attach renders the run live, sends the line
// typed after the question, and returns when the task finishes.
func TestAttachAnswersAQuestion(t *testing.T) {
	t.Parallel()
	answered := make(chan string, 1)
	run := sampleRun()
	ask := 17 // the needs_input event
	if _, ok := run[ask].Payload.(event.NeedsInput); !ok {
		t.Fatalf("event %d is %s", ask, run[ask].Kind)
	}
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/tasks/{ref}": func(w http.ResponseWriter, r *http.Request) {
			writeAPI(w, api.TaskDetail{Task: task.Task{ID: "t-4k2x9", Status: task.Running, Description: "add token expiry checks"}})
		},
		"POST /v1/tasks/{ref}/messages": func(w http.ResponseWriter, r *http.Request) {
			var req api.SendRequest
			json.NewDecoder(r.Body).Decode(&req)
			answered <- r.PathValue("ref") + ": " + req.Text
			writeAPI(w, api.Message{ID: 4, TaskID: "t-4k2x9", Source: "user", Text: req.Text})
		},
		"GET /v1/watch": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("task") != "t-4k2x9" {
				http.Error(w, "watch of "+r.URL.RawQuery, http.StatusBadRequest)
				return
			}
			enc := json.NewEncoder(w)
			for i, e := range run {
				enc.Encode(e)
				w.(http.Flusher).Flush()
				if i == ask {
					select { // the task waits for its answer
					case <-answered:
					case <-r.Context().Done():
						return
					}
				}
			}
			<-r.Context().Done() // attach, not the stream, ends the session
		},
	})
	code, out, errOut := runCLI(t, home, "yes, update them\n", "task", "attach", "4k2")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"attached to t-4k2x9 (running): add token expiry checks\n",
		"⟲ the model call was retried; the text above is discarded\nLet me look at it.\n→ read_file",
		"? Should I update the docs?\n  (the task waits for your answer: type it and press Enter)\n",
		"✓ completed: Added expiry checks.\n",
		"running → completed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "Let me look at it.") != 1 {
		t.Errorf("the streamed text is printed again:\n%s", out)
	}
}

// TestAttachJSONIsNDJSON: --json prints each event as one JSON line.
func TestAttachJSONIsNDJSON(t *testing.T) {
	t.Parallel()
	run := sampleRun()
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/tasks/{ref}": func(w http.ResponseWriter, r *http.Request) {
			writeAPI(w, api.TaskDetail{Task: task.Task{ID: "t-4k2x9", Status: task.Running}})
		},
		"GET /v1/watch": func(w http.ResponseWriter, r *http.Request) {
			enc := json.NewEncoder(w)
			for _, e := range run {
				enc.Encode(e)
			}
		},
	})
	code, out, errOut := runCLI(t, home, "", "task", "attach", "4k2", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(run) {
		t.Fatalf("%d lines for %d events:\n%s", len(lines), len(run), out)
	}
	for i, l := range lines {
		var e event.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Kind != run[i].Kind {
			t.Errorf("line %d: %v, kind %s; want %s", i, err, e.Kind, run[i].Kind)
		}
	}
}
