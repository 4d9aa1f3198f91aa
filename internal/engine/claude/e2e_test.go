package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
	"github.com/neuraphage/neuraphage-go/internal/testkit/claudecli"
)

// e2eScript drives the real CLI: "make" tasks write a file and finish;
// "wait" tasks run a command that waits for a flag file (the test acts
// while it runs), then finish; a nudge is answered in kind.
const e2eScript = `
conversations:
  - name: nudged
    match: {user: "(?i)wait task", after: "nudge-7731"}
    steps:
      - text: "Saw nudge-7731."
        tool_calls:
          - {name: Bash, input: {command: "echo ack > ack.txt", description: "ack"}}
      - text: "Done after the nudge."
  - name: make
    match: {user: "(?i)make task"}
    steps:
      - text: "I'll create the file."
        tool_calls:
          - {name: Bash, input: {command: "echo hi > made.txt && env", description: "make file"}}
      - text: "Done: made.txt created."
  - name: wait
    match: {user: "(?i)wait task"}
    steps:
      - text: "Waiting for the flag."
        tool_calls:
          - {name: Bash, input: {command: "echo $$ > pid.txt; while [ ! -f go.flag ]; do sleep 0.05; done; echo flagged", description: "wait"}}
      - text: "Done waiting."
  - name: denied-retried
    match: {user: "(?i)deny task", after: "sandbox now allows"}
    steps:
      - text: "Trying again."
        tool_calls:
          - {name: Bash, input: {command: "node -e \"console.log('recovered-ok')\"", description: "say"}}
      - text: "Listed the root."
  - name: denied
    match: {user: "(?i)deny task"}
    steps:
      - text: "Listing the root."
        tool_calls:
          - {name: Bash, input: {command: "node -e \"console.log('recovered-ok')\"", description: "say"}}
      - text: "I was refused."
default:
  steps:
    - text: "ok"
`

type e2e struct {
	t   *testing.T
	srv *llmtest.Server
	eng *Engine
	dir string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	cli := claudecli.CLI(t)
	srv := enginetest.Server(t, "e2e.yaml", e2eScript)
	dir := enginetest.GitRepo(t)
	eng := New(Options{Command: cli, StateDir: filepath.Join(t.TempDir(), "state"), BaseURL: srv.URL(), APIKey: "sk-test-secret-4242",
		AllowedTools: []string{"Bash"}, Grace: time.Second})
	return &e2e{t: t, srv: srv, eng: eng, dir: dir}
}

func (x *e2e) task(desc string) task.Task {
	return task.Task{ID: task.ID("t" + strings.ReplaceAll(strings.ToLower(x.t.Name()[4:]), "/", "-")), Description: desc}
}

// run runs the task in the background; the outcome arrives on the channel.
func (x *e2e) run(ctx context.Context, t task.Task, h engine.Host) <-chan engine.Outcome {
	out := make(chan engine.Outcome, 1)
	go func() { out <- x.eng.Run(ctx, engine.Run{Task: t, Dir: x.dir, Host: h}) }()
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
	o := outcome(t, x.run(context.Background(), tk, h))
	if o.Status != engine.Completed || !strings.Contains(o.Reason, "made.txt created") {
		t.Fatalf("outcome = %+v, want completed with the final text", o)
	}
	if b, err := os.ReadFile(filepath.Join(x.dir, "made.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Fatalf("made.txt = %q, %v", b, err)
	}
	var call, result, file, usage bool
	evs, steps := h.Snapshot()
	for _, e := range evs {
		switch p := e.(type) {
		case event.ToolCall:
			var args map[string]any
			_ = json.Unmarshal(p.Args, &args)
			call = call || p.Name == "bash" && len(args) == 1 && args["command"] == "echo hi > made.txt && env"
		case event.ToolResult:
			result = result || p.Name == "bash" && !p.Error
		case event.FileChanged:
			file = file || p.Path == "made.txt"
		case event.Usage:
			usage = usage || p.CostUSD > 0 && p.Provider == Provider
		}
	}
	if !call || !result || !file || !usage {
		t.Errorf("observations: tool call %v, tool result %v, file changed %v, usage with cost %v; events %+v", call, result, file, usage, evs)
	}
	charged := false
	for _, s := range steps {
		charged = charged || s.Call != nil && s.Call.CostUSD > 0
	}
	if !charged {
		t.Error("no step charged the CLI's total_cost_usd to the task")
	}
	// The key reaches the model server, and is in no environment the
	// CLI's tools see (their `env` output is in the conversation).
	conv, _ := h.Conversation(context.Background())
	for _, m := range conv {
		for _, p := range m.Parts {
			if p.ToolResult != nil && strings.Contains(p.ToolResult.Content, "sk-test-secret-4242") {
				t.Errorf("the CLI's Bash tool saw the API key:\n%s", p.ToolResult.Content)
			}
		}
	}
	if reqs := x.srv.Requests(); len(reqs) == 0 || reqs[0].Header.Get("X-Api-Key") != "sk-test-secret-4242" {
		t.Error("the model server did not get the key")
	}
	if x.eng.transcript(tk.ID) == "" {
		t.Error("the session was not kept under the task's config directory")
	}
}

// waitTool waits until the CLI's Bash tool runs the wait command.
func (x *e2e) waitTool(h *enginetest.Host) int {
	x.t.Helper()
	var pid int
	testkit.WaitFor(x.t, "the wait command to run", func() bool {
		b, err := os.ReadFile(filepath.Join(x.dir, "pid.txt"))
		if err != nil {
			return false
		}
		_, err = fmtSscan(strings.TrimSpace(string(b)), &pid)
		return err == nil
	})
	return pid
}

func (x *e2e) flag() {
	if err := os.WriteFile(filepath.Join(x.dir, "go.flag"), nil, 0o644); err != nil {
		x.t.Fatal(err)
	}
}

// TestRealNudgeMidTool: a nudge sent while the CLI's tool runs reaches the
// model in the same turn, signalled (engine.Arrivals) or polled.
func TestRealNudgeMidTool(t *testing.T) {
	for _, polled := range []bool{false, true} {
		t.Run(fmt.Sprintf("polled=%v", polled), func(t *testing.T) { testNudgeMidTool(t, polled) })
	}
}

func testNudgeMidTool(t *testing.T, polled bool) {
	x := newE2E(t)
	tk := x.task("wait task: wait for the flag")
	h := enginetest.NewHost(tk)
	var host engine.Host = h
	if polled {
		host = enginetest.Polling{Host: h}
	}
	done := x.run(context.Background(), tk, host)
	x.waitTool(h)
	id := h.Inject(inject.Nudge, "You seem stuck: nudge-7731", false)
	testkit.WaitFor(t, "the nudge's receipt", func() bool { return h.Delivered(id) })
	x.flag()
	o := outcome(t, done)
	if o.Status != engine.Completed {
		t.Fatalf("outcome = %+v", o)
	}
	seen := false
	for _, r := range x.srv.Requests() {
		for _, m := range r.Messages {
			seen = seen || m.Role == llm.RoleUser && strings.Contains(m.Text(), "nudge-7731")
		}
	}
	if !seen {
		t.Fatal("no model request carried the nudge")
	}
	if _, err := os.Stat(filepath.Join(x.dir, "ack.txt")); err != nil {
		t.Errorf("the model's reply to the nudge did not run: %v", err)
	}
}

func TestRealPauseAndResume(t *testing.T) {
	x := newE2E(t)
	tk := x.task("wait task: wait for the flag")
	h := enginetest.NewHost(tk)
	done := x.run(context.Background(), tk, h)
	pid := x.waitTool(h)
	id := h.Inject(inject.Pause, "stop for now", true)
	o := outcome(t, done)
	if o.Status != engine.Paused || !h.Delivered(id) {
		t.Fatalf("outcome = %+v, pause delivered %v; want paused", o, h.Delivered(id))
	}
	if alive(pid) {
		t.Errorf("the tool's shell %d outlived the paused run", pid)
	}
	before := len(x.srv.Requests())
	x.flag()
	o = outcome(t, x.run(context.Background(), tk, h))
	if o.Status != engine.Completed {
		t.Fatalf("resumed outcome = %+v", o)
	}
	reqs := x.srv.Requests()
	if len(reqs) <= before {
		t.Fatal("the resumed run made no model call")
	}
	if last := reqs[len(reqs)-1]; !strings.Contains(last.Messages[0].Text(), "wait task") {
		t.Errorf("the resumed session lost its conversation: first message %q", last.Messages[0].Text())
	}
}

func TestRealCancelKillsGroup(t *testing.T) {
	x := newE2E(t)
	tk := x.task("wait task: wait for the flag")
	h := enginetest.NewHost(tk)
	ctx, cancel := context.WithCancel(context.Background())
	done := x.run(ctx, tk, h)
	pid := x.waitTool(h)
	cancel()
	if o := outcome(t, done); o.Status != engine.Stopped {
		t.Fatalf("outcome = %+v, want stopped", o)
	}
	if alive(pid) {
		t.Fatalf("the tool's shell %d outlived the cancelled run", pid)
	}
	// A later run (a daemon started again) resumes the session.
	x.flag()
	if o := outcome(t, x.run(context.Background(), tk, h)); o.Status != engine.Completed {
		t.Fatalf("outcome after the restart = %+v", o)
	}
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// A zombie is gone for our purposes.
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z" && syscall.Kill(pid, 0) == nil
}

// TestRealDenialRecovered: a command the task's manifest does not allow is
// refused by Claude Code (permission_denials); the moderate strategy
// widens the manifest within the policy, the CLI starts again with the
// widened flags on the same session, and the agent does it.
func TestRealDenialRecovered(t *testing.T) {
	x := newE2E(t)
	x.eng.o.Recovery = &lifecycle.Recoverer{Policy: lifecycle.Policy{Tools: []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash"},
		Recovery: lifecycle.Moderate, MaxEscalations: 3}}
	tk := x.task("deny task: say it")
	tk.Manifest = &task.Manifest{Readable: []string{"."}, Writable: []string{"."}, Tools: []string{"Read", "Bash"}, Commands: []string{"git"}, Source: "default"}
	h := enginetest.NewHost(tk)
	o := outcome(t, x.run(context.Background(), tk, h))
	if o.Status != engine.Completed || o.Reason != "Listed the root." {
		t.Fatalf("outcome = %+v, want completed after the retry", o)
	}
	if !h.Has(event.KindToolResult, func(p event.Payload) bool {
		r := p.(event.ToolResult)
		return r.Name == "bash" && !r.Error && strings.Contains(r.Preview, "recovered-ok")
	}) {
		evs, _ := h.Snapshot()
		t.Fatalf("the retried command did not run: %+v", evs)
	}
	if !h.Has(event.KindPermissionDenied, func(p event.Payload) bool { return strings.HasPrefix(p.(event.PermissionDenied).Command, "node -e") }) {
		t.Error("the refusal was not observed")
	}
	m := h.Task().Manifest
	if m == nil || !slices.Contains(m.Commands, "node") || m.Escalations != 1 {
		t.Errorf("manifest after the recovery = %+v, want node allowed after one escalation", m)
	}
}
