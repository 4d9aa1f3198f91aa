package codex

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// fake is an engine whose CLI is the test binary replaying recordings of
// the real one (testdata/*.jsonl, written by the TestReal tests).
type fake struct {
	t     *testing.T
	eng   *Engine
	dir   string // the fake's log
	work  string
	state string
}

func newFake(t *testing.T) *fake {
	t.Helper()
	f := &fake{t: t, dir: t.TempDir(), work: t.TempDir(), state: t.TempDir()}
	t.Setenv("FAKE_CODEX_MODE", "replay")
	t.Setenv("FAKE_CODEX_DIR", f.dir)
	f.eng = f.engine()
	return f
}

func (f *fake) engine() *Engine {
	return New(Options{Command: os.Args[0], StateDir: f.state, EnvAllow: fakeEnv, BaseURL: "http://127.0.0.1:9/v1", APIKey: "sk-fake",
		Model: func(task.Task) string { return "gpt-llmtest" }})
}

// run runs t against fixture in the background.
func (f *fake) run(ctx context.Context, fixture string, t task.Task, h engine.Host) <-chan engine.Outcome {
	abs, err := filepath.Abs(filepath.Join("testdata", fixture))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Setenv("FAKE_CODEX_FIXTURE", abs)
	out := make(chan engine.Outcome, 1)
	eng := f.eng
	go func() { out <- eng.Run(ctx, engine.Run{Task: t, Dir: f.work, Host: h}) }()
	return out
}

// sent is what the engine sent the fake, by method.
func (f *fake) sent(method string) []msg {
	var out []msg
	for _, m := range readLogQuiet(f.dir) {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

func readLogQuiet(dir string) []msg {
	b, _ := os.ReadFile(filepath.Join(dir, "log.jsonl"))
	var out []msg
	for _, line := range splitLines(b) {
		var m msg
		if json.Unmarshal(line, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func params(t *testing.T, m msg) map[string]any {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFakeCompletes(t *testing.T) {
	f := newFake(t)
	tk := task.Task{ID: "t-1", Description: "make task: create made.txt"}
	h := enginetest.NewHost(tk)
	o := outcome(t, f.run(context.Background(), "completes-1.jsonl", tk, h))
	if o.Status != engine.Completed || o.Reason != "Done: made.txt created." {
		t.Fatalf("outcome = %+v", o)
	}
	starts := f.sent("thread/start")
	if len(starts) != 1 || params(t, starts[0])["cwd"] != f.work || params(t, starts[0])["model"] != "gpt-llmtest" {
		t.Fatalf("thread/start sent %v", starts)
	}
	if f.eng.Thread(tk.ID) == "" {
		t.Error("no thread id stored")
	}
	turns := f.sent("turn/start")
	if len(turns) != 1 || !strings.Contains(string(turns[0].Params), "make task: create made.txt") {
		t.Fatalf("turn/start sent %v", turns)
	}
	var call, result, usage, text, completed bool
	evs, steps := h.Snapshot()
	for _, e := range evs {
		switch p := e.(type) {
		case event.ToolCall:
			call = call || p.Name == "bash" && strings.Contains(string(p.Args), "echo hi \\u003e made.txt")
		case event.ToolResult:
			result = result || p.Name == "bash" && !p.Error
		case event.Usage:
			usage = usage || p.InputTokens > 0 && p.OutputTokens > 0
		case event.Text:
			text = text || p.Text == "I'll create the file."
		case event.Completed:
			completed = true
		}
	}
	if !call || !result || !usage || !text || !completed {
		t.Errorf("observations: call %v result %v usage %v text %v completed %v: %v", call, result, usage, text, completed, evs)
	}
	var calls, asst int
	for _, s := range steps {
		if s.Call != nil {
			calls++
		}
		for _, m := range s.Messages {
			if m.Role == "assistant" {
				asst++
			}
		}
	}
	if calls != 1 || asst != 2 {
		t.Errorf("%d usage calls and %d assistant messages stored, want 1 and 2 (two model calls)", calls, asst)
	}
}

// TestFakeSteer: a message arriving mid-turn goes in turn/steer with the
// running turn's id; no second turn/start is sent (the trap); the receipt
// is committed.
func TestFakeSteer(t *testing.T) {
	f := newFake(t)
	tk := task.Task{ID: "t-2", Description: "hold task: wait for a nudge"}
	h := enginetest.NewHost(tk)
	out := f.run(context.Background(), "steer-1.jsonl", tk, h)
	testkit.WaitFor(t, "the turn started", func() bool { return len(f.sent("turn/start")) == 1 })
	id := h.Inject(inject.Nudge, "nudge-7731: also say you saw this", false)
	o := outcome(t, out)
	if o.Status != engine.Completed || !strings.Contains(o.Reason, "Saw nudge-7731") {
		t.Fatalf("outcome = %+v", o)
	}
	if !h.Delivered(id) {
		t.Error("the nudge's receipt was not committed")
	}
	steers := f.sent("turn/steer")
	if len(steers) != 1 {
		t.Fatalf("%d steers sent, want 1", len(steers))
	}
	p := params(t, steers[0])
	if p["expectedTurnId"] == "" || p["expectedTurnId"] == nil || !strings.Contains(string(steers[0].Params), "nudge-7731") {
		t.Errorf("turn/steer params %v", p)
	}
	if n := len(f.sent("turn/start")); n != 1 {
		t.Errorf("turn/start sent %d times, want once: never mid-turn", n)
	}
}

// TestFakePauseResume: an urgent pause interrupts the turn; the next run
// resumes the stored thread (thread/resume), not a new one.
func TestFakePauseResume(t *testing.T) {
	f := newFake(t)
	tk := task.Task{ID: "t-3", Description: "hold task: be paused"}
	h := enginetest.NewHost(tk)
	out := f.run(context.Background(), "pauseresume-1.jsonl", tk, h)
	testkit.WaitFor(t, "the turn started", func() bool { return len(f.sent("turn/start")) == 1 })
	h.Inject(inject.Pause, "stop for now", true)
	o := outcome(t, out)
	if o.Status != engine.Paused || o.Reason != "stop for now" {
		t.Fatalf("outcome = %+v, want paused", o)
	}
	if len(f.sent("turn/interrupt")) != 1 || !h.Has(event.KindInterrupted, nil) {
		t.Fatal("the turn was not interrupted")
	}
	thread := f.eng.Thread(tk.ID)
	f.eng = f.engine() // a restarted daemon
	o = outcome(t, f.run(context.Background(), "pauseresume-2.jsonl", tk, h))
	if o.Status != engine.Completed {
		t.Fatalf("resumed outcome = %+v", o)
	}
	res := f.sent("thread/resume")
	if len(res) != 1 || params(t, res[0])["threadId"] != thread {
		t.Fatalf("thread/resume sent %v, want the stored thread %s", res, thread)
	}
	turns := f.sent("turn/start")
	if !strings.Contains(string(turns[len(turns)-1].Params), "session was stopped") {
		t.Errorf("the resumed turn did not say the session continues: %s", turns[len(turns)-1].Params)
	}
	if !h.Has(event.KindTurnStarted, func(p event.Payload) bool { return p.(event.TurnStarted).Resumed }) {
		t.Error("no turn started as resumed")
	}
}

// TestFakeCrash: the CLI dying pauses the task with its stderr's tail.
func TestFakeCrash(t *testing.T) {
	f := newFake(t)
	t.Setenv("FAKE_CODEX_MODE", "crash")
	tk := task.Task{ID: "t-4", Description: "anything"}
	o := outcome(t, f.run(context.Background(), "completes-1.jsonl", tk, enginetest.NewHost(tk)))
	if o.Status != engine.Paused || !strings.Contains(o.Reason, "fake crash for the test") || !strings.Contains(o.Reason, "status 101") {
		t.Fatalf("outcome = %+v, want paused quoting the crash", o)
	}
}

// TestFakeStopped: a run whose context ends mid-turn (a daemon stopping)
// stops, the thread kept.
func TestFakeStopped(t *testing.T) {
	f := newFake(t)
	tk := task.Task{ID: "t-5", Description: "hold task"}
	ctx, cancel := context.WithCancel(context.Background())
	out := f.run(ctx, "restart-1.jsonl", tk, enginetest.NewHost(tk))
	testkit.WaitFor(t, "the turn started", func() bool { return len(f.sent("turn/start")) == 1 })
	cancel()
	if o := outcome(t, out); o.Status != engine.Stopped {
		t.Fatalf("outcome = %+v, want stopped", o)
	}
}

func TestReady(t *testing.T) {
	e := New(Options{Command: "no-such-codex-cli"})
	err := e.Ready()
	if !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), InstallHint) {
		t.Fatalf("Ready = %v, want unavailable with the install hint", err)
	}
	t.Setenv("FAKE_CODEX_MODE", "replay")
	t.Setenv("FAKE_CODEX_VERSION", "0.100.0")
	e = New(Options{Command: os.Args[0]})
	if err := e.Ready(); !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), "older than "+MinVersion) {
		t.Fatalf("Ready = %v, want too old", err)
	}
	t.Setenv("FAKE_CODEX_VERSION", "")
	e = New(Options{Command: os.Args[0]})
	if err := e.Ready(); err != nil || e.Version() != MinVersion {
		t.Fatalf("Ready = %v, version %q", err, e.Version())
	}
}

func TestArgs(t *testing.T) {
	e := New(Options{BaseURL: "http://h/v1", APIKey: "k", Args: []string{"-c", "x=1"}})
	m := &task.Manifest{Tools: []string{"Bash"}, Writable: []string{"/w"}}
	a := strings.Join(e.args("codex", task.Task{ID: "t", Manifest: m}), " ")
	for _, want := range []string{"codex app-server --disable plugins -c analytics.enabled=false",
		`model_providers.neuraphage={name="neuraphage", base_url="http://h/v1", wire_api="responses", env_key="NEURAPHAGE_CODEX_API_KEY"}`,
		`sandbox_mode="workspace-write"`, `writable_roots=["/w"]`, "-c x=1"} {
		if !strings.Contains(a, want) {
			t.Errorf("args %q lack %q", a, want)
		}
	}
	env := strings.Join(e.env(task.Task{ID: "t"}, "/w", nil), "\n")
	if !strings.Contains(env, "NEURAPHAGE_CODEX_API_KEY=k") || !strings.Contains(env, "CODEX_HOME=") {
		t.Errorf("env lacks the key or CODEX_HOME: %s", env)
	}
	// Without Neuraphage settings the CLI keeps its own login.
	a = strings.Join(New(Options{}).args("codex", task.Task{ID: "t"}), " ")
	if strings.Contains(a, "model_provider") {
		t.Errorf("args %q configure a provider without settings", a)
	}
}

func TestUnwrapShell(t *testing.T) {
	for in, want := range map[string]string{
		"/bin/bash -lc 'echo hi > made.txt'": "echo hi > made.txt",
		`bash -lc 'echo '\''it'\'''`:         "echo 'it'",
		"/bin/bash -lc echo":                 "/bin/bash -lc echo",
		"/bin/bash -lc 'unterminated":        "/bin/bash -lc 'unterminated",
		"git status":                         "git status",
	} {
		if got := unwrapShell(in); got != want {
			t.Errorf("unwrapShell(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFakeDeclined: a command Codex declines is a permission denial; the
// lifecycle's moderate recovery widens the manifest within the policy,
// stores it, and the next turn runs under it, saying so. The manifest
// names its commands, so each turn asks for approvals (approvalPolicy
// "untrusted"): the engine declines the command the first time and
// accepts it once the manifest allows it. (Recorded from the real CLI by
// TestRealDeclined: testdata/declined-1.jsonl.)
func TestFakeDeclined(t *testing.T) {
	f := newFake(t)
	rec := &lifecycle.Recoverer{Policy: lifecycle.Policy{Tools: []string{"Read", "Bash"}, MaxEscalations: 3, Recovery: lifecycle.Moderate}}
	f.eng = New(Options{Command: os.Args[0], StateDir: f.state, EnvAllow: fakeEnv, Recovery: rec,
		Model: func(task.Task) string { return "gpt-llmtest" }})
	tk := task.Task{ID: "t-6", Description: "make task: create made.txt",
		Manifest: &task.Manifest{Tools: []string{"Read", "Bash"}, Commands: []string{"git"}, Writable: []string{"."}}}
	h := enginetest.NewHost(tk)
	o := outcome(t, f.run(context.Background(), "declined-1.jsonl", tk, h))
	if o.Status != engine.Completed {
		t.Fatalf("outcome = %+v", o)
	}
	if !h.Has(event.KindPermissionDenied, func(p event.Payload) bool { return p.(event.PermissionDenied).Command == "echo hi > made.txt" }) {
		t.Error("no permission denial for the declined command")
	}
	if !h.Has(event.KindRecoveryAttempt, func(p event.Payload) bool { return p.(event.RecoveryAttempt).Action == string(lifecycle.Retry) }) {
		t.Error("no recovery attempt")
	}
	if m := h.Manifest(); m == nil || !slices.Contains(m.Commands, "echo") || m.Escalations != 1 {
		t.Errorf("stored manifest %+v, want echo allowed after one escalation", m)
	}
	turns := f.sent("turn/start")
	if len(turns) != 2 || !strings.Contains(string(turns[1].Params), "try it again") {
		t.Fatalf("turn/start sent %d times, the second %s", len(turns), turns[len(turns)-1].Params)
	}
	if sp, _ := params(t, turns[1])["sandboxPolicy"].(map[string]any); sp["type"] != "workspaceWrite" {
		t.Errorf("the retry's sandboxPolicy = %v", sp)
	}
	for i, turn := range turns {
		if ap := params(t, turn)["approvalPolicy"]; ap != "untrusted" {
			t.Errorf("turn %d's approvalPolicy = %v, want untrusted", i+1, ap)
		}
	}
	var decisions []string
	for _, m := range readLogQuiet(f.dir) {
		if m.Method == "" && m.ID != nil {
			var r struct {
				Decision string `json:"decision"`
			}
			_ = json.Unmarshal(m.Result, &r)
			decisions = append(decisions, r.Decision)
		}
	}
	if !slices.Equal(decisions, []string{"decline", "accept"}) {
		t.Errorf("approvals answered %q, want decline then accept", decisions)
	}
}

// TestFakeAskAndAnswer: under the interactive strategy a declined command
// asks the user and the run waits (agent.needs_input); the user's "allow"
// widens the manifest before the next run's first turn.
func TestFakeAskAndAnswer(t *testing.T) {
	f := newFake(t)
	rec := &lifecycle.Recoverer{Policy: lifecycle.Policy{Tools: []string{"Read", "Bash"}, Recovery: lifecycle.Interactive}}
	f.eng = New(Options{Command: os.Args[0], StateDir: f.state, EnvAllow: fakeEnv, Recovery: rec,
		Model: func(task.Task) string { return "gpt-llmtest" }})
	tk := task.Task{ID: "t-7", Description: "make task: create made.txt",
		Manifest: &task.Manifest{Tools: []string{"Read", "Bash"}, Commands: []string{"git"}, Writable: []string{"."}}}
	h := enginetest.NewHost(tk)
	o := outcome(t, f.run(context.Background(), "declined-1.jsonl", tk, h))
	if o.Status != engine.Waiting || !strings.Contains(o.Reason, "allow") {
		t.Fatalf("outcome = %+v, want waiting with the question", o)
	}
	if !h.Has(event.KindNeedsInput, nil) {
		t.Error("no needs-input observation")
	}
	if m := h.Manifest(); m == nil || m.Pending == nil || slices.Contains(m.Commands, "echo") {
		t.Fatalf("manifest %+v, want the widening pending, not made", m)
	}
	h.Inject(inject.Message, "allow", false)
	got, _, stop := f.eng.answerPending(context.Background(), engine.Run{Task: h.Task(), Host: h}, 1)
	if stop || got.Manifest == nil || got.Manifest.Pending != nil || !slices.Contains(got.Manifest.Commands, "echo") {
		t.Fatalf("after the answer: manifest %+v (stop %v), want echo allowed", got.Manifest, stop)
	}
}

// TestFakeResumeTakenOnce: after a crash, a message whose delivery marker
// is in the thread's rollout (the CLI took it; its receipt was lost) is
// receipted, not sent again.
func TestFakeResumeTakenOnce(t *testing.T) {
	f := newFake(t)
	tk := task.Task{ID: "t-8", Description: "hold task"}
	thread := recordedThread(t, "pauseresume-2.jsonl")
	if err := os.MkdirAll(filepath.Join(f.eng.Home(tk.ID), "sessions", "2026"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := f.eng.storeThread(tk.ID, thread); err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(f.eng.Home(tk.ID), "sessions", "2026", "rollout-x-"+thread+".jsonl")
	if err := os.WriteFile(rollout, []byte(`{"payload":{"text":"note-4242\n\n[neuraphage-delivery:1]"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := enginetest.NewHost(tk)
	id := h.Inject(inject.Message, "note-4242", false)
	o := outcome(t, f.run(context.Background(), "pauseresume-2.jsonl", tk, h))
	if o.Status != engine.Completed {
		t.Fatalf("outcome = %+v", o)
	}
	if !h.Delivered(id) {
		t.Error("the message the CLI took was not receipted")
	}
	for _, m := range f.sent("turn/start") {
		if strings.Contains(string(m.Params), "note-4242") {
			t.Errorf("the message was sent again: %s", m.Params)
		}
	}
	if res := f.sent("thread/resume"); len(res) != 1 || params(t, res[0])["threadId"] != thread {
		t.Errorf("thread/resume sent %v", res)
	}
}

// recordedThread is the thread id a recording's thread/resume answered.
func recordedThread(t *testing.T, fixture string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range splitLines(b) {
		var r recorded
		var m msg
		var res threadResult
		if json.Unmarshal(line, &r) == nil && r.Dir == "recv" && json.Unmarshal(r.Msg, &m) == nil &&
			m.Method == "" && json.Unmarshal(m.Result, &res) == nil && res.Thread.ID != "" {
			return res.Thread.ID
		}
	}
	t.Fatalf("%s answers no thread", fixture)
	return ""
}
