package claude

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	"github.com/neuraphage/neuraphage-go/internal/testkit/claudecli"
)

func TestFakeCompletes(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "complete.jsonl", "")
	tk := task.Task{ID: "t-fake1", Description: "hello task: make a file"}
	h := enginetest.NewHost(tk)
	o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: h})
	if o.Status != engine.Completed || o.Reason != "Done: made.txt created." {
		t.Fatalf("outcome = %+v", o)
	}
	runs := readFakeLog(t, dir)
	if len(runs) != 1 {
		t.Fatalf("%d CLI processes, want 1", len(runs))
	}
	a := runs[0].Args
	for _, want := range [][]string{{"-p"}, {"--input-format", "stream-json"}, {"--output-format", "stream-json"}, {"--verbose"},
		{"--permission-mode", "acceptEdits"}, {"--session-id", SessionID(tk.ID)}} {
		if !hasArgs(a, want...) {
			t.Errorf("args %q lack %q", a, want)
		}
	}
	if len(runs[0].Stdin) != 1 || !strings.Contains(runs[0].Stdin[0], "hello task: make a file") {
		t.Errorf("stdin = %q, want the task as one user line", runs[0].Stdin)
	}
	var failedResult bool
	var cost float64
	evs, steps := h.Snapshot()
	for _, e := range evs {
		switch p := e.(type) {
		case event.ToolResult:
			failedResult = failedResult || p.Error && strings.Contains(p.Preview, "No such file")
		case event.Usage:
			cost += p.CostUSD
		}
	}
	if !failedResult {
		t.Error("the failed ls was not observed as a tool result with its error flag")
	}
	if cost < 0.145 || cost > 0.146 {
		t.Errorf("cost observed %v, want the result's total_cost_usd 0.1456", cost)
	}
	if n := len(steps); n == 0 || steps[len(steps)-1].Events[0].EventKind() != event.KindCompleted {
		t.Errorf("the last step is not the completion: %+v", steps[len(steps)-1])
	}
}

func TestFakeUrgentInterruptsThenDelivers(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "interrupt.jsonl", "")
	tk := task.Task{ID: "t-fake2", Description: "slow task: run it"}
	h := enginetest.NewHost(tk)
	done := make(chan engine.Outcome, 1)
	go func() { done <- eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: h}) }()
	testkit.WaitFor(t, "the slow tool call", func() bool { return h.Has(event.KindToolCall, nil) })
	id := h.Inject(inject.Message, "stop that and say ok", true)
	o := outcome(t, done)
	if o.Status != engine.Completed || o.Reason != "Finished." {
		t.Fatalf("outcome = %+v", o)
	}
	if !h.Delivered(id) || !h.Has(event.KindInterrupted, nil) {
		t.Fatalf("delivered %v, interrupted observed %v", h.Delivered(id), h.Has(event.KindInterrupted, nil))
	}
	in := readFakeLog(t, dir)[0].Stdin
	if len(in) != 3 || !strings.Contains(in[1], `"subtype":"interrupt"`) || !strings.Contains(in[2], "stop that and say ok") {
		t.Fatalf("stdin = %q, want the task, an interrupt, then the message", in)
	}
}

func TestFakeCrashPausesWithStderr(t *testing.T) {
	t.Parallel()
	eng, _ := fakeEngine(t, "complete.jsonl", "crash")
	tk := task.Task{ID: "t-fake3", Description: "hello task"}
	o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: enginetest.NewHost(tk)})
	if o.Status != engine.Paused || !strings.Contains(o.Reason, "status 3") || !strings.Contains(o.Reason, "broke on purpose") {
		t.Fatalf("outcome = %+v, want paused with the exit status and stderr", o)
	}
}

func TestFakeMalformedLinesSkipped(t *testing.T) {
	t.Parallel()
	eng, _ := fakeEngine(t, "complete.jsonl", "malformed")
	tk := task.Task{ID: "t-fake4", Description: "hello task"}
	if o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: t.TempDir(), Host: enginetest.NewHost(tk)}); o.Status != engine.Completed {
		t.Fatalf("outcome = %+v", o)
	}
}

// failDelivery is a host whose commits of a receipt fail, as if the
// daemon died right after writing the line; before failing it waits until
// the CLI stored the line in its session (took reports whether it did).
type failDelivery struct {
	*enginetest.Host
	tb   testing.TB
	took func() bool
}

func (f failDelivery) Commit(ctx context.Context, s engine.Step) (task.Task, error) {
	if len(s.Delivered) > 0 {
		if f.took != nil {
			testkit.WaitFor(f.tb, "the CLI to store the line", f.took)
		}
		return task.Task{}, errors.New("the daemon died")
	}
	return f.Host.Commit(ctx, s)
}

// TestFakeDeliveryExactlyOnceAcrossCrash: a message whose line the CLI
// stored, but whose receipt a crash lost, is receipted by the next run and
// not sent again; one the CLI never stored is sent again. Either way the
// session holds it once.
func TestFakeDeliveryExactlyOnceAcrossCrash(t *testing.T) {
	t.Parallel()
	for _, stored := range []bool{true, false} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) {
			t.Parallel()
			eng, dir := fakeEngine(t, "complete.jsonl", "")
			tk := task.Task{ID: task.ID(fmt.Sprintf("t-fake5%v", stored)), Description: "hello task"}
			h := enginetest.NewHost(tk)
			id := h.Inject(inject.Message, "use the fixture in testdata", false)
			session := func() string { return readFile(eng.transcript(tk.ID)) }
			var took func() bool
			if stored {
				took = func() bool { return strings.Contains(session(), "use the fixture in testdata") }
			}
			wd := t.TempDir()
			if o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: failDelivery{h, t, took}}); o.Status != engine.Paused {
				t.Fatalf("first run = %+v, want paused by the failed commit", o)
			}
			if h.Delivered(id) {
				t.Fatal("the receipt was committed")
			}
			if o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: h}); o.Status != engine.Completed {
				t.Fatalf("second run = %+v", o)
			}
			if !h.Delivered(id) {
				t.Fatal("the message was never receipted")
			}
			if n := strings.Count(session(), "use the fixture in testdata"); n != 1 {
				t.Fatalf("the session holds the message %d times, want once", n)
			}
			runs := readFakeLog(t, dir)
			if last := runs[len(runs)-1]; stored && !hasArgs(last.Args, "--resume", SessionID(tk.ID)) {
				t.Fatalf("the second run did not resume the session: %q", last.Args)
			}
		})
	}
}

func TestReadyRefusesOldOrMissing(t *testing.T) {
	t.Parallel()
	missing := New(Options{Command: "no-such-claude-binary-xyz"})
	if err := missing.Ready(); !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), InstallHint) {
		t.Fatalf("Ready = %v, want unavailable with the install hint", err)
	}
	exe, _ := os.Executable()
	if err := New(Options{Command: exe}).Ready(); err != nil {
		t.Fatalf("Ready of the fake at %s = %v", MinVersion, err)
	}
	if claudecli.PinnedVersion != MinVersion {
		t.Errorf("the tests pin Claude Code %s, the engine wants %s", claudecli.PinnedVersion, MinVersion)
	}
	if !Older("2.1.197", MinVersion) || Older(MinVersion, MinVersion) || Older("2.2.0", MinVersion) {
		t.Error("Older compares versions wrongly")
	}
}

func TestObservedCallsInOurVocabulary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, wantName, wantArgs string }{
		{"Bash", `{"description":"list","command":"ls -la"}`, "bash", `{"command":"ls -la"}`},
		{"Read", `{"file_path":"/w/a.go","limit":20}`, "read_file", `{"limit":20,"path":"/w/a.go"}`},
		{"Edit", `{"file_path":"a.go","old_string":"x","new_string":"y","replace_all":false}`, "edit_file", `{"new":"y","old":"x","path":"a.go"}`},
		{"Write", `{"file_path":"b.go","content":"package b"}`, "write_file", `{"content":"package b","path":"b.go"}`},
		{"WebFetch", `{"url":"https://example.com", "prompt":"p"}`, "webfetch", `{"prompt":"p","url":"https://example.com"}`},
	} {
		name, args := observedCall(c.name, []byte(c.in))
		if name != c.wantName || string(args) != c.wantArgs {
			t.Errorf("%s %s = %s %s, want %s %s", c.name, c.in, name, args, c.wantName, c.wantArgs)
		}
	}
}

// TestFakeDenialAsksThenAnswer: under the interactive strategy a refusal
// ends the run waiting with the question, the fix pending in the manifest;
// the user's "allow", at the next start, widens the manifest before the
// CLI starts, so its flags allow the command.
func TestFakeDenialAsksThenAnswer(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "denied.jsonl", "")
	eng.o.Recovery = &lifecycle.Recoverer{Policy: lifecycle.Policy{Tools: []string{"Read", "Bash"}, Recovery: lifecycle.Interactive}}
	tk := task.Task{ID: "t-fake7", Description: "hello task",
		Manifest: &task.Manifest{Writable: []string{"."}, Tools: []string{"Read", "Bash"}, Commands: []string{"git"}, Source: "default"}}
	h := enginetest.NewHost(tk)
	wd := t.TempDir()
	o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: h})
	if o.Status != engine.Waiting || !strings.Contains(o.Reason, "node -e 1") {
		t.Fatalf("outcome = %+v, want waiting with the question", o)
	}
	if m := h.Manifest(); m.Pending == nil || slices.Contains(m.Commands, "node") {
		t.Fatalf("manifest = %+v, want the fix pending, not made", m)
	}
	h.Inject(inject.Message, "allow", false)
	eng.Run(context.Background(), engine.Run{Task: h.Task(), Dir: wd, Host: h})
	runs := readFakeLog(t, dir)
	if len(runs) != 2 || !slices.ContainsFunc(runs[1].Args, func(a string) bool { return strings.Contains(a, "Bash(node:*)") }) {
		t.Fatalf("second start's args %q do not allow the command", runs[len(runs)-1].Args)
	}
	if !h.Has(event.KindRecoveryAttempt, func(p event.Payload) bool { return p.(event.RecoveryAttempt).Action == "retry" }) {
		t.Error("the answer was not recorded")
	}
}
