package codex

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/testkit/codexcli"
)

// e2eScript drives the real CLI. Codex's first user message is its
// environment context, so conversations match the task's text as a later
// user message (after): "make" tasks write a file and finish; "hold"
// tasks answer at once (the tests hold the request open); a nudge is
// answered in kind.
const e2eScript = `
conversations:
  - name: nudged
    match: {after: "nudge-7731"}
    steps:
      - text: "Saw nudge-7731."
  - name: retried
    match: {after: "(?i)try it again"}
    steps:
      - text: "Trying again."
        tool_calls:
          - {name: exec_command, input: {cmd: "echo hi > made.txt"}}
      - text: "Done after the retry."
  - name: make
    match: {after: "(?i)make task"}
    steps:
      - text: "I'll create the file."
        tool_calls:
          - {name: exec_command, input: {cmd: "echo hi > made.txt"}}
      - text: "Done: made.txt created."
  - name: resumed
    match: {after: "(?i)session was stopped"}
    steps:
      - text: "Resumed and done."
  - name: hold
    match: {after: "(?i)hold task"}
    steps:
      - text: "Held reply."
default:
  steps:
    - text: "ok"
`

type e2e struct {
	t     *testing.T
	srv   *llmtest.Server
	cli   string
	state string
	dir   string
	rec   string // where the traffic is recorded, "" when it is not
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real Codex CLI")
	}
	cli := codexcli.CLI(t)
	srv := enginetest.Server(t, "e2e.yaml", e2eScript)
	dir := enginetest.GitRepo(t)
	return &e2e{t: t, srv: srv, cli: cli, state: filepath.Join(t.TempDir(), "state"), dir: dir}
}

// engine is a new engine on the same state: a restarted daemon's. With
// NEURAPHAGE_RECORD_CODEX=1 the CLI's traffic is recorded (the fake in
// record mode sits in between) into testdata/<test>-<n>.jsonl, the
// fixtures of the unit tests.
func (x *e2e) engine() *Engine {
	o := Options{Command: x.cli, StateDir: x.state, BaseURL: x.srv.OpenAIBaseURL(), APIKey: "sk-test-secret-4242",
		Model: func(task.Task) string { return "gpt-llmtest" }}
	if os.Getenv("NEURAPHAGE_RECORD_CODEX") == "1" {
		if x.rec == "" {
			x.rec = x.t.TempDir()
			x.t.Setenv("FAKE_CODEX_MODE", "record")
			x.t.Setenv("FAKE_CODEX_REAL", x.cli)
			x.t.Setenv("FAKE_CODEX_DIR", x.rec)
			x.t.Cleanup(x.saveRecordings)
		}
		o.Command, o.EnvAllow = os.Args[0], fakeEnv
	}
	return New(o)
}

// saveRecordings copies the recorded traffic into testdata.
func (x *e2e) saveRecordings() {
	files, _ := filepath.Glob(filepath.Join(x.rec, "*.jsonl"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			x.t.Error(err)
			continue
		}
		name := strings.ToLower(strings.TrimPrefix(x.t.Name(), "TestReal")) + "-" + filepath.Base(f)
		if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
			x.t.Error(err)
		}
	}
}

func (x *e2e) task(desc string) task.Task {
	return task.Task{ID: task.ID("t" + strings.ReplaceAll(strings.ToLower(x.t.Name()[4:]), "/", "-")), Description: desc}
}

func (x *e2e) run(ctx context.Context, eng *Engine, t task.Task, h engine.Host) <-chan engine.Outcome {
	out := make(chan engine.Outcome, 1)
	go func() { out <- eng.Run(ctx, engine.Run{Task: t, Dir: x.dir, Host: h}) }()
	return out
}

func outcome(t *testing.T, c <-chan engine.Outcome) engine.Outcome {
	t.Helper()
	select {
	case o := <-c:
		return o
	case <-time.After(testkit.WaitLimit):
		t.Fatal("the run did not end")
		return engine.Outcome{}
	}
}

func TestRealCompletes(t *testing.T) {
	x := newE2E(t)
	tk := x.task("make task: create made.txt")
	h := enginetest.NewHost(tk)
	eng := x.engine()
	o := outcome(t, x.run(context.Background(), eng, tk, h))
	if o.Status != engine.Completed || !strings.Contains(o.Reason, "made.txt created") {
		t.Fatalf("outcome = %+v, want completed with the final text", o)
	}
	if b, err := os.ReadFile(filepath.Join(x.dir, "made.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Fatalf("made.txt = %q, %v", b, err)
	}
	var call, result, file, usage, started bool
	evs, steps := h.Snapshot()
	for _, e := range evs {
		switch p := e.(type) {
		case event.ToolCall:
			var args map[string]any
			_ = json.Unmarshal(p.Args, &args)
			call = call || p.Name == "bash" && strings.Contains(args["command"].(string), "echo hi > made.txt")
		case event.ToolResult:
			result = result || p.Name == "bash" && !p.Error
		case event.FileChanged:
			file = file || p.Path == "made.txt"
		case event.Usage:
			usage = usage || p.InputTokens > 0 && p.OutputTokens > 0 && p.Provider == Provider
		case event.TurnStarted:
			started = started || p.Engine == Name
		}
	}
	if !call || !result || !file || !usage || !started {
		t.Errorf("observations: call %v result %v file %v usage %v turn %v; events %v", call, result, file, usage, started, evs)
	}
	var calls int
	for _, s := range steps {
		if s.Call != nil {
			calls++
		}
	}
	if calls == 0 {
		t.Error("no step carried the turn's usage (Call)")
	}
	if eng.Thread(tk.ID) == "" {
		t.Error("the thread id was not stored")
	}
	if reqs := x.srv.Requests(); reqs[0].Header.Get("Authorization") != "Bearer sk-test-secret-4242" {
		t.Errorf("the CLI sent Authorization %q, want the configured key", reqs[0].Header.Get("Authorization"))
	}
}

// TestRealSteer: a message that arrives while the turn's model request is
// in flight is steered into the running turn (turn/steer, never a second
// turn/start): the scripted server sees it in the same turn's next
// request, and the turn completes from the steered reply.
func TestRealSteer(t *testing.T) {
	x := newE2E(t)
	tk := x.task("hold task: wait for a nudge")
	h := enginetest.NewHost(tk)
	release := x.srv.Hold("hold", 0)
	defer release()
	out := x.run(context.Background(), x.engine(), tk, h)
	if err := x.srv.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	id := h.Inject(inject.Nudge, "nudge-7731: also say you saw this", false)
	testkit.WaitFor(t, "the steer accepted", func() bool { return h.Delivered(id) })
	release()
	o := outcome(t, out)
	if o.Status != engine.Completed || !strings.Contains(o.Reason, "Saw nudge-7731") {
		t.Fatalf("outcome = %+v, want completed from the steered reply", o)
	}
	nudged := false
	for _, r := range x.srv.Requests() {
		nudged = nudged || r.Conversation == "nudged"
	}
	if !nudged {
		t.Error("the scripted server never saw the nudge")
	}
	// One turn: the steer went into it.
	turnsStarted := 0
	_, steps := h.Snapshot()
	for _, s := range steps {
		for _, m := range s.Messages {
			if m.Role == llm.RoleUser && strings.Contains(m.Text(), "hold task") {
				turnsStarted++
			}
		}
	}
	if turnsStarted != 1 {
		t.Errorf("the task's text was sent %d times, want once", turnsStarted)
	}
}

// TestRealPauseResume: an urgent pause interrupts the turn in flight
// (turn/interrupt) and ends the run paused; the next run, from a new
// engine (a restarted daemon), resumes the same thread.
func TestRealPauseResume(t *testing.T) {
	x := newE2E(t)
	tk := x.task("hold task: be paused")
	h := enginetest.NewHost(tk)
	release := x.srv.Hold("hold", 0)
	defer release()
	eng := x.engine()
	out := x.run(context.Background(), eng, tk, h)
	if err := x.srv.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	h.Inject(inject.Pause, "stop for now", true)
	o := outcome(t, out)
	release()
	if o.Status != engine.Paused || o.Reason != "stop for now" {
		t.Fatalf("outcome = %+v, want paused", o)
	}
	if !h.Has(event.KindInterrupted, nil) {
		t.Error("no interrupted observation")
	}
	thread := eng.Thread(tk.ID)
	o = outcome(t, x.run(context.Background(), x.engine(), tk, h))
	if o.Status != engine.Completed || !strings.Contains(o.Reason, "Resumed and done") {
		t.Fatalf("resumed outcome = %+v, want completed on the resumed thread", o)
	}
	reqs := x.srv.Requests()
	if got := reqs[len(reqs)-1].Header.Get("Thread-Id"); got != thread {
		t.Errorf("the resumed run's request was on thread %q, want the stored %q", got, thread)
	}
}

// TestRealRestart: the daemon stops mid-turn (the run's context ends, the
// CLI's group is killed, as after kill -9 its tracker reaps it); the next
// run resumes the thread.
func TestRealRestart(t *testing.T) {
	x := newE2E(t)
	tk := x.task("hold task: survive a restart")
	h := enginetest.NewHost(tk)
	release := x.srv.Hold("hold", 0)
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	eng := x.engine()
	out := x.run(ctx, eng, tk, h)
	if err := x.srv.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if o := outcome(t, out); o.Status != engine.Stopped {
		t.Fatalf("outcome = %+v, want stopped", o)
	}
	release()
	thread := eng.Thread(tk.ID)
	o := outcome(t, x.run(context.Background(), x.engine(), tk, h))
	if o.Status != engine.Completed {
		t.Fatalf("resumed outcome = %+v, want completed", o)
	}
	if eng.Thread(tk.ID) != thread {
		t.Errorf("thread changed from %q to %q", thread, eng.Thread(tk.ID))
	}
}

// TestRealDeclined: the task's manifest names the commands it may run
// (git), so the CLI asks before a command it does not hold safe
// (approvalPolicy "untrusted"); the engine declines one the manifest does
// not allow, the CLI reports the command declined, the moderate strategy
// widens the manifest within the user's policy, and the retried command
// is accepted and runs: the model server sees its result and the task
// completes.
func TestRealDeclined(t *testing.T) {
	x := newE2E(t)
	tk := x.task("make task: create made.txt")
	tk.Manifest = &task.Manifest{Tools: []string{"Read", "Bash"}, Commands: []string{"git"}, Writable: []string{"."}}
	h := enginetest.NewHost(tk)
	eng := x.engine()
	eng.o.Recovery = &lifecycle.Recoverer{Policy: lifecycle.Policy{Tools: []string{"Read", "Bash"}, MaxEscalations: 3, Recovery: lifecycle.Moderate}}
	o := outcome(t, x.run(context.Background(), eng, tk, h))
	if o.Status != engine.Completed || !strings.Contains(o.Reason, "Done after the retry") {
		t.Fatalf("outcome = %+v, want completed after the retry", o)
	}
	if !h.Has(event.KindPermissionDenied, func(p event.Payload) bool {
		return strings.Contains(p.(event.PermissionDenied).Command, "echo hi > made.txt")
	}) {
		t.Error("no permission denial of the declined command")
	}
	if m := h.Manifest(); m == nil || !slices.Contains(m.Commands, "echo") || m.Escalations != 1 {
		t.Errorf("stored manifest %+v, want echo allowed after one escalation", m)
	}
	if b, err := os.ReadFile(filepath.Join(x.dir, "made.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Fatalf("made.txt = %q, %v", b, err)
	}
	var results []string
	for _, r := range x.srv.Requests() {
		if r.Conversation != "retried" || r.Step != 1 {
			continue
		}
		for _, m := range r.Messages {
			for _, p := range m.Parts {
				if p.ToolResult != nil {
					results = append(results, p.ToolResult.Content)
				}
			}
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "rejected") || !strings.Contains(results[1], "exited with code 0") {
		t.Errorf("the model server's tool results %q, want the refusal then the retried command's success", results)
	}
}

func TestPinnedIsMinVersion(t *testing.T) {
	if codexcli.PinnedVersion != MinVersion {
		t.Errorf("tests pin Codex %s, the engine wants %s", codexcli.PinnedVersion, MinVersion)
	}
}
