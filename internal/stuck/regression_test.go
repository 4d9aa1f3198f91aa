package stuck

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The tests here pin down defects found while building the scenario corpus.
// Each states the behaviour the package documents; one whose fix lies
// outside this package skips with a BUG note until it is fixed.

// regressed fails a test whose defect, once fixed, came back.
func regressed(t *testing.T, why string) {
	t.Helper()
	t.Fatal("regression: " + why)
}

// The native agent stores an empty reply as "(no reply)" but emits no text
// for it (internal/agent/loop.go storeReply; it used to emit the
// placeholder, so the detector saw a monologue, never an empty reply).
func TestNativeEmptyReplies(t *testing.T) {
	t.Parallel()
	s := newStream("t-empty")
	s.prelude()
	for range 3 {
		s.emptyTurn() // turn.started, usage, turn.ended: no text, no call
		s.mark(event.KindTurnEnded)
	}
	hs := run(s, Config{}, true)
	h, ok := first(hs, EmptyReplies)
	if !ok || h.occ > 3 {
		t.Fatalf("empty replies not found at the 3rd (found: %v, at %d):%s", ok, h.occ, describe(t, s.items, hs))
	}
	if _, ok := first(hs, Monologue); ok {
		t.Errorf("empty replies reported as a monologue:%s", describe(t, s.items, hs))
	}
}

// A call the agent does not run because an urgent message arrived gets no
// agent.tool.result: runTools reports it only in agent.interrupted. It
// must not count as running once its turn ended (it used to, for ever,
// which silenced no-progress for the rest of the run).
func TestInterruptedCallIsNotRunning(t *testing.T) {
	t.Parallel()
	s := newStream("t-interrupt")
	s.prelude()
	s.turns++
	s.emit(event.TurnStarted{Turn: s.turns, Engine: "native"})
	s.emit(event.ToolCall{Turn: s.turns, CallID: "toolu_a", Name: "bash", Args: args("command", "go vet ./...")})
	s.emit(event.ToolCall{Turn: s.turns, CallID: "toolu_b", Name: "read_file", Args: args("path", "internal/pay/pay.go")})
	s.usage()
	s.emit(event.ToolResult{Turn: s.turns, CallID: "toolu_a", Name: "bash", Preview: "", Hash: event.ContentHash("")})
	s.emit(event.Interrupted{Turn: s.turns, Dropped: []string{"read_file"}})
	s.emit(event.TurnEnded{Turn: s.turns, StopReason: "tool_use"})
	// The agent then talks for half an hour without doing anything.
	for i := range 6 {
		s.now = s.now.Add(5 * time.Minute)
		s.turn(fmt.Sprintf("Considering option %c for the ledger limit before acting.", 'A'+i))
		s.tick()
	}
	d := New(Config{}, testRoot, t0)
	hs := feed(d, s.items, true)
	if d.Running() {
		t.Errorf("a call dropped by an interruption is still running after its turn ended")
	}
	if _, ok := first(hs, NoProgress); !ok {
		t.Fatalf("no no-progress finding after 30 idle minutes:%s", describe(t, s.items, hs))
	}
}

// The time a tool was running is not idle time: a 30-minute test run that
// fails must not be reported as "no progress for 30m" the moment it ends.
func TestSlowFailingToolIsNotIdle(t *testing.T) {
	t.Parallel()
	s := newStream("t-slow")
	s.prelude()
	s.turn("Running the integration suite; it is slow.", bash("go test -tags integration ./...",
		"--- FAIL: TestLedgerIntegration (1794.20s)\n    ledger_test.go:212: balance drifted by 1 cent\nFAIL").failed().taking(30*time.Minute))
	end := s.now
	// Ticks while it runs would see it running; the first tick after it
	// ended comes a minute later.
	s.now = end.Add(time.Minute)
	s.tick()
	hs := run(s, Config{}, true)
	if _, ok := first(hs, NoProgress); ok {
		t.Errorf("the time a tool ran was counted as idle:%s", describe(t, s.items, hs))
	}
}

// The package doc: "A file change between two equal calls makes them
// different steps: re-running the tests after an edit is progress, not a
// loop." Alternation must compare epochs too, or test-driven work that adds
// one case at a time (an edit of the same shape, then the same passing
// tests) is reported as A-B-A-B.
func TestAlternationAcrossFileChanges(t *testing.T) {
	t.Parallel()
	s := newStream("t-tdd")
	s.prelude()
	for i := range 8 {
		s.turn("Adding the next case.", edit("internal/pay/pay_test.go", "}\n// cases end",
			fmt.Sprintf("}\n\nfunc TestChargeCase%d(t *testing.T) { check(t, %d) }\n// cases end", i, i*10)))
		s.turn("", bash("go test ./...", fmt.Sprintf("ok  \tgithub.com/acme/shop/internal/pay\t0.%03ds", 100+i)))
	}
	hs := run(s, Config{}, true)
	if bad := actionable(hs); len(bad) > 0 {
		t.Errorf("test-driven work was flagged:%s", describe(t, s.items, bad))
	}
}

// A long result is seen through its preview (200 bytes) and tail. When a
// masked part earlier in the output changes width (9s → 10s), the cut
// points move and split other words; those must not count, or a poll
// whose output differs only in a counter is no longer the same result.
func TestLongPollWithGrowingCounter(t *testing.T) {
	t.Parallel()
	s := newStream("t-poll")
	s.prelude()
	for i := range 8 {
		out := fmt.Sprintf("✓ lint in 41s\n✓ build in 62s\n* test in %ds\n  ✓ Set up job\n  ✓ Run actions/checkout@v4\n  ✓ Set up Go\n  * Run go test -race ./...\n  * Post Set up Go\n  * Complete job\n\nView this run on GitHub: https://github.com/acme/shop/actions/runs/4242", 7+30*i)
		s.turn("Still running; checking again.", bash("sleep 30 && gh run view 4242", out))
		s.mark(event.KindToolResult)
	}
	hs := run(s, Config{}, true)
	if h, ok := first(hs, Repeat); !ok || h.occ > 4 {
		t.Errorf("the poll was found at its %d. result (found: %v), want at or before the 4th:%s", h.occ, ok, describe(t, s.items, hs))
	}
}

// Flags moved across a positional argument are not movable by
// CanonicalCommand (the flag might take that word), so sameCall falls back to
// word similarity; the JSON quotes and braces of the key must not stick to
// the command's first and last words, or two words differ out of a handful.
func TestFlagMovedAcrossPath(t *testing.T) {
	t.Parallel()
	s := newStream("t-flags")
	s.prelude()
	out := "--- FAIL: TestCharge (0.00s)\n    pay_test.go:88: Charge(100) = <nil>, want ErrLimit\nFAIL"
	for _, cmd := range []string{"go test -race ./internal/pay/...", "go test ./internal/pay/... -race", "go test -race ./internal/pay/..."} {
		s.turn("Running the pay tests.", bash(cmd, out).failed())
		s.mark(event.KindToolResult)
	}
	hs := run(s, Config{}, true)
	if _, ok := first(hs, Failing); !ok {
		t.Errorf("the same command with a flag moved was not the same call:%s", describe(t, s.items, hs))
	}
}

// Evidence for apologies names every apology counted, also those late in a
// long message (past the 160 bytes of Step.What).
func TestApologyEvidenceInLongTexts(t *testing.T) {
	t.Parallel()
	s := newStream("t-sorry")
	s.prelude()
	long := strings.Repeat("I looked at the ledger, the handler and the tests again to understand the failure. ", 3)
	for i, w := range []string{"Sorry about that.", "My mistake, again.", "I apologize."} {
		s.turn(long+w, bash(fmt.Sprintf("go run ./cmd/try%d", i), "exit status 2").failed())
		s.mark(event.KindText)
	}
	hs := run(s, Config{}, true)
	h, ok := first(hs, Apologies)
	if !ok {
		t.Fatalf("no apologies finding:%s", describe(t, s.items, hs))
	}
	marked := markedSteps(s.items)
	if len(h.f.Evidence) != 3 {
		t.Errorf("apologies evidence names %d steps, want 3:%s", len(h.f.Evidence), describe(t, s.items, []hit{h}))
	}
	for _, e := range h.f.Evidence {
		if !marked[e.Step] {
			t.Errorf("evidence names step %d, not an apology", e.Step)
		}
	}
}

// A resume keeps the window: a loop that spans a pause is one loop (the
// issue's evaluation missed loops broken by resumes and answers, each of
// which used to start a fresh window). The first repeat after the resume is
// flagged, with evidence from both sides; the grace period of the clock
// checks starts again, and an edit after it is progress as before.
func TestResumeKeepsTheLoop(t *testing.T) {
	t.Parallel()
	s := newStream("t-resume")
	s.prelude()
	for range 4 {
		s.turn("Building again.", bash("go build ./...", buildErr).failed())
	}
	before := len(s.items)
	s.status(task.Running, task.Paused)
	s.now = s.now.Add(2 * time.Hour)
	s.status(task.Paused, task.Running)
	s.tick()
	s.turn("Building once more to see.", bash("go build ./...", buildErr).failed())
	after := len(s.items)
	s.tick()
	s.turn("Adding the import.", edit("internal/pay/handler.go", "import (\n", "import (\n\t\"github.com/acme/shop/internal/ledger\"\n"))
	d := New(Config{}, testRoot, t0)
	hs := feed(d, s.items, false) // explicit ticks only: see TestWaitingIsNotIdle for a tick at the resume
	var pre, post []hit
	for _, h := range hs {
		if h.at < before {
			pre = append(pre, h)
		} else {
			post = append(post, h)
		}
	}
	if _, ok := first(pre, Failing); !ok {
		t.Errorf("the loop before the pause was not found:%s", describe(t, s.items, pre))
	}
	h, ok := first(post, Failing)
	if !ok || h.at >= after {
		t.Fatalf("the loop's first repeat after the resume was not found:%s", describe(t, s.items, post))
	}
	if ev := h.f.Evidence; len(ev) != 3 || ev[0].Step >= ev[2].Step {
		t.Errorf("evidence = %+v, want the last 3 failures, oldest first", ev)
	}
	for _, x := range post {
		if x.f.Check == NoProgress {
			t.Errorf("the two hours paused counted as idle:%s", describe(t, s.items, post))
		}
	}
	if c := d.Counters(); c.Calls != 8 || c.Errors != 5 {
		t.Errorf("counters after the resume = %+v, want 8 calls and 5 errors since the start", c)
	}
}

// A task waiting for its user (or paused) is not idle: the detector sees
// the move away from running, and must not report no-progress for the time
// it waited, neither on a Tick while it waits nor on one at its resume.
func TestWaitingIsNotIdle(t *testing.T) {
	t.Parallel()
	s := newStream("t-wait")
	s.prelude()
	s.turn("I need to know which currency to use.")
	s.emit(event.NeedsInput{Turn: s.turns, Question: "EUR or USD?"})
	s.status(task.Running, task.Waiting)
	s.wait(time.Hour, 10*time.Minute)
	s.status(task.Waiting, task.Running)
	hs := run(s, Config{}, true)
	if _, ok := first(hs, NoProgress); ok {
		t.Errorf("a waiting task was reported idle:%s", describe(t, s.items, hs))
	}
}

// Progress in the middle of a turn restarts the idle clock; tool time from
// before it must not be subtracted from the idle time after it.
func TestIdleAfterProgressMidTurn(t *testing.T) {
	t.Parallel()
	s := newStream("t-midturn")
	s.prelude()
	diff := " internal/pay/pay.go | 2 +-"
	s.turn("", bash("git diff --stat", diff))
	// One reply, two calls run in order: a slow test run that passes (new:
	// progress), then the same diff as before (not new).
	s.turns++
	s.emit(event.TurnStarted{Turn: s.turns, Engine: "native"})
	s.emit(event.ToolCall{Turn: s.turns, CallID: "toolu_a", Name: "bash", Args: args("command", "go test ./...")})
	s.emit(event.ToolCall{Turn: s.turns, CallID: "toolu_b", Name: "bash", Args: args("command", "git diff --stat")})
	s.usage()
	s.now = s.now.Add(30 * time.Minute)
	ok := "ok  \tgithub.com/acme/shop/internal/pay\t1790.1s"
	s.emit(event.ToolResult{Turn: s.turns, CallID: "toolu_a", Name: "bash", Preview: ok, Hash: event.ContentHash(ok)})
	s.emit(event.ToolResult{Turn: s.turns, CallID: "toolu_b", Name: "bash", Preview: diff, Hash: event.ContentHash(diff)})
	s.emit(event.TurnEnded{Turn: s.turns, StopReason: "tool_use"})
	s.wait(12*time.Minute, time.Minute)
	hs := run(s, Config{}, true)
	if _, found := first(hs, NoProgress); !found {
		regressed(t, "after progress in the middle of a turn, the time the turn's earlier tools ran before that progress is still subtracted as busy: toolsDone adds now - toolStart, and toolStart predates the progress, so no-progress comes 30 minutes late here; in progress(), restart the interval: if d.running > 0 { d.toolStart = now }")
	}
}

// A short result that itself ends in "…" was not cut: its last word counts.
func TestShortResultEndingInEllipsis(t *testing.T) {
	t.Parallel()
	s := newStream("t-ellipsis")
	s.prelude()
	for _, out := range []string{"Deploy 4242: queued…", "Deploy 4242: building…", "Deploy 4242: pushing…", "Deploy 4242: verifying…"} {
		s.turn("Checking the deploy.", bash("deployctl status 4242", out))
	}
	hs := run(s, Config{}, true)
	if h, found := first(hs, Repeat); found {
		regressed(t, "wholeWords drops the last word of every Preview ending in \"…\", also of a short result that was not cut (the agent cuts only results over 200 bytes, and then always sends a Tail), so four different statuses are one repeated result ("+h.f.Diagnosis+"); strip the preview's last word only when tail != \"\"")
	}
}
