package gemini

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/testkit/geminicli"
)

func TestFakeCompletes(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "complete.jsonl")
	eng.o.Model = func(task.Task) string { return "gemini-2.5-flash" }
	eng.o.APIKey, eng.o.BaseURL = "gm-key", "http://127.0.0.1:1"
	tk := task.Task{ID: "t-fake1", Description: "hello task: make a file"}
	h := enginetest.NewHost(tk)
	o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: h})
	if o.Status != engine.Completed || o.Reason != "Done: made.txt created." || o.Turn != 3 {
		t.Fatalf("outcome = %+v", o)
	}
	runs := readFakeLog(t, dir)
	if len(runs) != 1 {
		t.Fatalf("%d CLI processes, want 1", len(runs))
	}
	a := runs[0].Args
	for _, want := range [][]string{{"-o", "stream-json"}, {"--approval-mode", "yolo"}, {"--skip-trust"}, {"-m", "gemini-2.5-flash"},
		{"--session-id", SessionID(tk.ID)}} {
		if !hasArgs(a, want...) {
			t.Errorf("args %q lack %q", a, want)
		}
	}
	if !strings.Contains(runs[0].Prompt, "hello task: make a file") {
		t.Errorf("prompt = %q, want the task", runs[0].Prompt)
	}
	if runs[0].Home != eng.Home(tk.ID) || runs[0].Key != "gm-key" || runs[0].Base != "http://127.0.0.1:1" {
		t.Errorf("the CLI ran with HOME %q, key %q, base %q", runs[0].Home, runs[0].Key, runs[0].Base)
	}
	settings, err := os.ReadFile(filepath.Join(eng.Home(tk.ID), ".gemini", "settings.json"))
	if err != nil || !strings.Contains(string(settings), `"selectedType": "gemini-api-key"`) {
		t.Errorf("settings = %s (%v), want key authentication", settings, err)
	}
	var failedRead, wrote, calls bool
	var usage event.Usage
	starts := 0
	evs, steps := h.Snapshot()
	for _, e := range evs {
		switch p := e.(type) {
		case event.ToolResult:
			failedRead = failedRead || p.Error && p.Name == "read_file" && strings.Contains(p.Preview, "File not found")
		case event.FileChanged:
			wrote = wrote || p.Path == "made.txt" && p.Tool == "write_file"
		case event.ToolCall:
			calls = calls || p.Name == "write_file" && string(p.Args) == `{"content":"made\n","path":"made.txt"}`
		case event.Usage:
			usage = p
		case event.TurnStarted:
			starts++
		}
	}
	if !failedRead || !wrote || !calls {
		t.Errorf("observed: failed read %v, file changed %v, write call in our vocabulary %v", failedRead, wrote, calls)
	}
	if starts != 3 {
		t.Errorf("%d turns started, want the fixture's 3 model calls", starts)
	}
	if usage.InputTokens != 35593 || usage.OutputTokens != 35 || usage.CostUSD == 0 || usage.Model != "gemini-2.5-flash" {
		t.Errorf("usage = %+v", usage)
	}
	var call *engine.Call
	for _, s := range steps {
		if s.Call != nil {
			call = s.Call
		}
	}
	if call == nil || call.Provider != Provider || call.Usage.InputTokens != 35593 || call.Duration.Milliseconds() != 450 {
		t.Errorf("call = %+v", call)
	}
	if last := steps[len(steps)-1]; last.Events[0].EventKind() != event.KindCompleted {
		t.Errorf("the last step is not the completion: %+v", last)
	}
}

// notifyHost calls on the first tool call it stores.
type notifyHost struct {
	*enginetest.Host
	on   func()
	done bool
}

func (n *notifyHost) Commit(ctx context.Context, s engine.Step) (task.Task, error) {
	t, err := n.Host.Commit(ctx, s)
	for _, e := range s.Events {
		if e.EventKind() == event.KindToolCall && !n.done {
			n.done = true
			n.on()
		}
	}
	return t, err
}

func TestFakeNextTurnDeliversMessage(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "complete.jsonl,next.jsonl")
	tk := task.Task{ID: "t-fake2", Description: "hello task"}
	h := enginetest.NewHost(tk)
	var id int64
	nh := &notifyHost{Host: h, on: func() { id = h.Inject(inject.Message, "also say hi", false) }}
	o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: nh})
	if o.Status != engine.Completed || o.Reason != "Second turn answered." {
		t.Fatalf("outcome = %+v", o)
	}
	runs := readFakeLog(t, dir)
	if len(runs) != 2 {
		t.Fatalf("%d CLI processes, want one per turn", len(runs))
	}
	if !hasArgs(runs[1].Args, "--resume", SessionID(tk.ID)) || !strings.Contains(runs[1].Prompt, "also say hi") ||
		!strings.Contains(runs[1].Prompt, extproc.Marker([]inject.Injection{{ID: id}})) {
		t.Fatalf("second turn: args %q, prompt %q", runs[1].Args, runs[1].Prompt)
	}
	if !h.Delivered(id) || h.Has(event.KindInterrupted, nil) {
		t.Fatalf("delivered %v; a non-urgent message interrupted the turn", h.Delivered(id))
	}
}

func TestFakeUrgentEndsTurnThenDelivers(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "complete.jsonl,next.jsonl", "FAKE_GEMINI_MODE=hang", "FAKE_GEMINI_HANG_TURN=0")
	tk := task.Task{ID: "t-fake3", Description: "slow task"}
	h := enginetest.NewHost(tk)
	done := make(chan engine.Outcome, 1)
	go func() { done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: h}) }()
	testkit.WaitFor(t, "the hanging tool call", func() bool { return h.Has(event.KindToolCall, nil) })
	id := h.Inject(inject.Message, "stop that and say ok", true)
	o := outcome(t, done)
	if o.Status != engine.Completed || o.Reason != "Second turn answered." {
		t.Fatalf("outcome = %+v", o)
	}
	if !h.Delivered(id) || !h.Has(event.KindInterrupted, nil) {
		t.Fatalf("delivered %v, interrupted observed %v", h.Delivered(id), h.Has(event.KindInterrupted, nil))
	}
	runs := readFakeLog(t, dir)
	if len(runs) != 2 || !strings.Contains(runs[1].Prompt, "stop that and say ok") {
		t.Fatalf("runs = %+v", runs)
	}
	if err := syscall.Kill(runs[0].PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the interrupted turn's process %d is still there (%v)", runs[0].PID, err)
	}
}

func TestFakePauseThenResume(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "complete.jsonl,next.jsonl", "FAKE_GEMINI_MODE=hang", "FAKE_GEMINI_HANG_TURN=0")
	tk := task.Task{ID: "t-fake4", Description: "slow task"}
	h := enginetest.NewHost(tk)
	wd := t.TempDir()
	done := make(chan engine.Outcome, 1)
	go func() { done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: h}) }()
	testkit.WaitFor(t, "the hanging tool call", func() bool { return h.Has(event.KindToolCall, nil) })
	h.Inject(inject.Pause, "for the weekend", true)
	if o := outcome(t, done); o.Status != engine.Paused || o.Reason != "for the weekend" {
		t.Fatalf("outcome = %+v, want paused", o)
	}
	// A later run (a resume, or a new daemon) continues the session.
	o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: h})
	if o.Status != engine.Completed {
		t.Fatalf("resumed outcome = %+v", o)
	}
	runs := readFakeLog(t, dir)
	if len(runs) != 2 || !hasArgs(runs[1].Args, "--resume", SessionID(tk.ID)) || !strings.Contains(runs[1].Prompt, "now continues") {
		t.Fatalf("runs = %+v", runs)
	}
	if !h.Has(event.KindTurnStarted, func(p event.Payload) bool { return p.(event.TurnStarted).Resumed }) {
		t.Error("no resumed turn observed")
	}
}

func TestFakeStoppedByContext(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "complete.jsonl", "FAKE_GEMINI_MODE=hang")
	tk := task.Task{ID: "t-fake5", Description: "slow task"}
	h := enginetest.NewHost(tk)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan engine.Outcome, 1)
	go func() { done <- eng.Run(ctx, engine.Run{Task: tk, Dir: t.TempDir(), Host: h}) }()
	testkit.WaitFor(t, "the hanging tool call", func() bool { return h.Has(event.KindToolCall, nil) })
	cancel() // the executor's idle or total timer, or a shutdown
	if o := outcome(t, done); o.Status != engine.Stopped {
		t.Fatalf("outcome = %+v, want stopped", o)
	}
	if err := syscall.Kill(readFakeLog(t, dir)[0].PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the turn's process is still there (%v)", err)
	}
}

func TestFakeWithoutResultIsNotSuccess(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]string{"noresult": "without a result (exit status 0)", "crash": "broke on purpose"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			eng, _ := fakeEngine(t, "complete.jsonl", "FAKE_GEMINI_MODE="+mode)
			tk := task.Task{ID: task.ID("t-fake6" + mode), Description: "hello task"}
			o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: enginetest.NewHost(tk)})
			if o.Status != engine.Paused || !strings.Contains(o.Reason, want) {
				t.Fatalf("outcome = %+v, want paused saying %q", o, want)
			}
		})
	}
}

func TestFakeDenialRecovered(t *testing.T) {
	t.Parallel()
	for _, fixture := range []string{"policy.jsonl", "unregistered.jsonl"} {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			eng, dir := fakeEngine(t, fixture+",next.jsonl")
			eng.o.Recover = &lifecycle.Recoverer{Policy: lifecycle.Policy{Tools: []string{"Read", "Write", "Edit", "Bash"}, Recovery: lifecycle.Moderate, MaxEscalations: 3}}
			m := task.Manifest{Tools: []string{"Read"}, Writable: []string{"."}}
			tk := task.Task{ID: task.ID("t-fake7" + fixture[:3]), Description: "denied task", Manifest: &m}
			h := enginetest.NewHost(tk)
			o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: h})
			if o.Status != engine.Completed {
				t.Fatalf("outcome = %+v", o)
			}
			if !h.Has(event.KindPermissionDenied, func(p event.Payload) bool { return p.(event.PermissionDenied).Tool == "Bash" }) {
				t.Fatal("no permission denial of Bash observed")
			}
			got := h.Task().Manifest
			if got == nil || !slices.Contains(got.Tools, "Bash") || got.Escalations != 1 {
				t.Fatalf("manifest = %+v, want Bash added", got)
			}
			runs := readFakeLog(t, dir)
			if len(runs) != 2 || !strings.Contains(runs[1].Prompt, "widened") || !hasArgs(runs[0].Args, "--policy", eng.policyFile(tk.ID)) {
				t.Fatalf("runs = %+v", runs)
			}
			policy, _ := os.ReadFile(eng.policyFile(tk.ID))
			if strings.Contains(string(policy), "run_shell_command") {
				t.Errorf("the policy still denies the shell:\n%s", policy)
			}
		})
	}
}

func TestFakeUserLogin(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "next.jsonl")
	user := filepath.Join(eng.o.UserHome, ".gemini")
	if err := os.MkdirAll(user, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(user, "oauth_creds.json"), []byte(`{"token":"x"}`), 0o600)
	os.WriteFile(filepath.Join(user, "settings.json"), []byte(`{"security":{"auth":{"selectedType":"oauth-personal"}}}`), 0o600)
	tk := task.Task{ID: "t-fake8", Description: "hello"}
	if o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: enginetest.NewHost(tk)}); o.Status != engine.Completed {
		t.Fatalf("outcome = %+v", o)
	}
	if r := readFakeLog(t, dir)[0]; r.Key != "" {
		t.Errorf("the CLI got a key %q without one configured", r.Key)
	}
	if dst, err := os.Readlink(filepath.Join(eng.Home(tk.ID), ".gemini", "oauth_creds.json")); err != nil || dst != filepath.Join(user, "oauth_creds.json") {
		t.Errorf("login link = %q, %v", dst, err)
	}
	settings, _ := os.ReadFile(filepath.Join(eng.Home(tk.ID), ".gemini", "settings.json"))
	if !strings.Contains(string(settings), "oauth-personal") {
		t.Errorf("settings = %s, want the user's login method", settings)
	}
}

func TestReadyRefusesOldOrMissing(t *testing.T) {
	t.Parallel()
	missing := New(Options{Command: "no-such-gemini-binary-xyz"})
	if err := missing.Ready(); !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), InstallHint) {
		t.Fatalf("Ready = %v, want unavailable with the install hint", err)
	}
	exe, _ := os.Executable()
	if err := New(Options{Command: exe}).Ready(); err != nil {
		t.Fatalf("Ready of the fake at %s = %v", MinVersion, err)
	}
	if geminicli.PinnedVersion != MinVersion {
		t.Errorf("the tests pin Gemini CLI %s, the engine wants %s", geminicli.PinnedVersion, MinVersion)
	}
}

func TestObservedCallsInOurVocabulary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, wantName, wantArgs string }{
		{"run_shell_command", `{"description":"list","command":"ls -la"}`, "bash", `{"command":"ls -la"}`},
		{"read_file", `{"file_path":"a.go","limit":20}`, "read_file", `{"limit":20,"path":"a.go"}`},
		{"replace", `{"file_path":"a.go","old_string":"x","new_string":"y"}`, "edit_file", `{"new":"y","old":"x","path":"a.go"}`},
		{"grep_search", `{"pattern":"x","dir_path":"."}`, "grep", `{"path":".","pattern":"x"}`},
		{"web_fetch", `{"prompt":"p"}`, "web_fetch", `{"prompt":"p"}`},
	} {
		name, args := observedCall(c.name, []byte(c.in))
		if name != c.wantName || string(args) != c.wantArgs {
			t.Errorf("%s %s = %s %s, want %s %s", c.name, c.in, name, args, c.wantName, c.wantArgs)
		}
	}
}

func TestFakeDenialAskedThenAllowed(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "policy.jsonl,next.jsonl")
	eng.o.Recover = &lifecycle.Recoverer{Policy: lifecycle.Policy{Tools: []string{"Read", "Bash"}, Recovery: lifecycle.Interactive}}
	m := task.Manifest{Tools: []string{"Read"}, Writable: []string{"."}}
	tk := task.Task{ID: "t-fake9", Description: "denied task", Manifest: &m}
	h := enginetest.NewHost(tk)
	wd := t.TempDir()
	o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: h})
	if o.Status != engine.Waiting || !strings.Contains(o.Reason, "allow") {
		t.Fatalf("outcome = %+v, want waiting with the question", o)
	}
	pending := h.Task().Manifest.Pending
	if pending == nil {
		t.Fatal("no widening pending in the stored manifest")
	}
	h.Inject(inject.Message, "allow", false)
	stored := h.Task() // the executor starts a run with the task as stored
	if o := eng.Run(context.Background(), engine.Run{Task: stored, Dir: wd, Host: h}); o.Status != engine.Completed {
		t.Fatalf("after the answer: %+v", o)
	}
	got := *h.Task().Manifest
	if !slices.Contains(got.Tools, "Bash") || got.Pending != nil {
		t.Fatalf("manifest = %+v, want Bash allowed and nothing pending", got)
	}
	runs := readFakeLog(t, dir)
	if len(runs) != 2 || !strings.Contains(runs[1].Prompt, "allow") {
		t.Fatalf("runs = %+v", runs)
	}
	if policy, _ := os.ReadFile(eng.policyFile(tk.ID)); strings.Contains(string(policy), "run_shell_command") {
		t.Errorf("the policy still denies the shell:\n%s", policy)
	}
}

// TestFakeLostSessionStartsAnew: a session the CLI cannot resume (its
// worktree's project differs) is replaced by a new one that gets the task
// and what the failed prompt carried.
func TestFakeLostSessionStartsAnew(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "next.jsonl")
	tk := task.Task{ID: "t-fake10", Description: "hello task"}
	h := enginetest.NewHost(tk)
	wd := t.TempDir()
	if o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: h}); o.Status != engine.Completed {
		t.Fatalf("first run = %+v", o)
	}
	old := eng.sessionFile(tk.ID)
	moved := filepath.Join(eng.Home(tk.ID), ".gemini", "tmp", "elsewhere", "chats", filepath.Base(old))
	if err := os.MkdirAll(filepath.Dir(moved), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}
	id := h.Inject(inject.Message, "carry this along", false)
	if o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: h}); o.Status != engine.Completed {
		t.Fatalf("second run = %+v", o)
	}
	runs := readFakeLog(t, dir)
	if len(runs) != 3 || !hasArgs(runs[1].Args, "--resume", SessionID(tk.ID)) || !hasArgs(runs[2].Args, "--session-id", SessionID(tk.ID)) {
		t.Fatalf("runs = %+v", runs)
	}
	if p := runs[2].Prompt; !strings.Contains(p, "hello task") || !strings.Contains(p, "carry this along") {
		t.Fatalf("the new session's prompt = %q", p)
	}
	if !h.Delivered(id) {
		t.Fatal("the message was not receipted")
	}
}
