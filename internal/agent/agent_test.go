package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/agent/tool"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/llm/retry"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// harness runs the native engine against the scripted model server over
// real HTTP, through the real Anthropic provider and retry decorator.
type harness struct {
	t    *testing.T
	srv  *llmtest.Server
	dir  string
	host *memHost
	opts Options
}

func newHarness(t *testing.T, script string) *harness {
	t.Helper()
	s, err := llmtest.ParseScript(t.Name()+".yaml", []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t, s)
	base, err := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Model: "claude-sonnet-4-5", IdleTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	client := retry.New(base, retry.Policy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
		retry.Options{Sleep: func(context.Context, time.Duration) error { return nil }})
	tk := task.Task{ID: "t-aaaaa", Description: "make the greeting friendlier", Status: task.Running}
	h := &harness{t: t, srv: srv, dir: t.TempDir(), host: newMemHost(tk)}
	h.opts = Options{Model: func(task.Task) (llm.Client, string, error) { return client, "claude-sonnet-4-5", nil }}
	return h
}

func (h *harness) run(ctx context.Context) engine.Outcome {
	return New(h.opts).Run(ctx, engine.Run{Task: h.host.task, Dir: h.dir, Host: h.host})
}

func (h *harness) file(name string) string {
	b, err := os.ReadFile(filepath.Join(h.dir, name))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func assistantTurns(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

func TestRunEditsFilesAndCompletes(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - text: "I'll write the greeting."
      tool_calls:
        - {name: write_file, input: {path: greet.txt, content: "hello\n"}}
    - tool_calls:
        - {name: edit_file, input: {path: greet.txt, old: hello, new: "hello, friend"}}
        - {name: record_learning, input: {summary: greetings live in greet.txt, tags: [greeting]}}
    - tool_calls:
        - {name: complete_task, input: {summary: made the greeting friendlier}}
`)
	out := h.run(context.Background())
	if out.Status != engine.Completed || out.Reason != "made the greeting friendlier" {
		t.Fatalf("outcome = %+v, want completed", out)
	}
	if got := h.file("greet.txt"); got != "hello, friend\n" {
		t.Errorf("greet.txt = %q", got)
	}
	msgs := h.host.conversation()
	if len(msgs) != 7 || assistantTurns(msgs) != 3 {
		t.Errorf("conversation has %d messages (%d assistant), want 7 (3)", len(msgs), assistantTurns(msgs))
	}
	if !strings.Contains(msgs[0].Text(), "make the greeting friendlier") {
		t.Errorf("first message %q does not hold the task", msgs[0].Text())
	}
	kinds := h.host.kinds()
	for _, k := range []event.Kind{event.KindTurnStarted, event.KindText, event.KindToolCall, event.KindToolResult,
		event.KindFileChanged, event.KindUsage, event.KindTurnEnded, event.KindCompleted} {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s observation; got %v", k, kinds)
		}
	}
	if len(h.host.learnings) != 1 || h.host.learnings[0].Summary != "greetings live in greet.txt" {
		t.Errorf("learnings = %+v", h.host.learnings)
	}
	if len(h.host.calls) != 3 {
		t.Errorf("charged %d calls, want 3", len(h.host.calls))
	}
	for _, c := range h.host.calls {
		if c.Duration <= 0 {
			t.Errorf("a charged call has no duration: %+v", c)
		}
	}
	// A turn ends after its tools: the last observations of a turn with
	// tool calls are its results, then its end.
	var order []event.Kind
	for _, p := range h.host.events {
		if tr, ok := p.(event.ToolResult); ok && tr.Turn == 2 {
			order = append(order, p.EventKind())
		}
		if te, ok := p.(event.TurnEnded); ok && te.Turn == 2 {
			order = append(order, p.EventKind())
		}
	}
	if want := []event.Kind{event.KindToolResult, event.KindToolResult, event.KindTurnEnded}; !slices.Equal(order, want) {
		t.Errorf("turn 2 observations %v, want %v", order, want)
	}
	var changed []string
	for _, p := range h.host.events {
		if fc, ok := p.(event.FileChanged); ok {
			changed = append(changed, fc.Op+" "+fc.Path+" by "+fc.Tool+" "+strings.SplitN(fc.Sum, ":", 2)[0])
		}
	}
	// Each change carries the size and hash of what the file held after it.
	want := []string{"created greet.txt by write_file 6", "modified greet.txt by edit_file 14"}
	if !slices.Equal(changed, want) {
		t.Errorf("file changes = %q, want %q", changed, want)
	}
}

func TestInjectionsDeliveredAtBoundaryOnce(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: glob, input: {pattern: "*"}}]
    - tool_calls: [{name: complete_task, input: {summary: done}}]
`)
	h.host.inject(inject.Injection{ID: 7, Kind: inject.Nudge, Source: "watcher", Attrs: map[string]string{"severity": "high"},
		Text: "you are looping", CreatedAt: time.Now()})
	h.host.onCommit = func(s engine.Step) {
		// A user message arrives while the first turn is stored.
		if s.Call != nil && h.host.delivered[8] == 0 && len(h.host.inbox) == 0 {
			h.host.inject(inject.Injection{ID: 8, Kind: inject.Message, Source: "user", Text: "also add a test", CreatedAt: time.Now()})
		}
	}
	if out := h.run(context.Background()); out.Status != engine.Completed {
		t.Fatalf("outcome = %+v", out)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	first := lastUserText(reqs[0].Messages)
	if !strings.Contains(first, `<system-nudge from="watcher" severity="high">`) || !strings.Contains(first, "you are looping") {
		t.Errorf("first request does not carry the nudge: %q", first)
	}
	second := lastUserText(reqs[1].Messages)
	if !strings.Contains(second, `<user-message from="user">`) || strings.Contains(second, "you are looping") {
		t.Errorf("second request's last user message = %q, want only the user's message", second)
	}
	if h.host.delivered[7] != 1 || h.host.delivered[8] != 1 {
		t.Errorf("deliveries = %v, want each once", h.host.delivered)
	}
	var receipts []event.Delivered
	for _, p := range h.host.events {
		if d, ok := p.(event.Delivered); ok {
			receipts = append(receipts, d)
		}
	}
	if len(receipts) != 2 || receipts[0].InjectionIDs[0] != 7 || receipts[1].InjectionIDs[0] != 8 {
		t.Errorf("receipts = %+v", receipts)
	}
}

func lastUserText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}

func TestUrgentInjectionInterruptsModelCall(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: glob, input: {pattern: "*"}}]
    - text: "thinking about it for a long time"
      fault: {kind: stall, times: 1}
    - tool_calls: [{name: complete_task, input: {summary: stopped as asked}}]
`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		// Wait until the stalled call is in flight, then interrupt it.
		if h.srv.WaitRequests(ctx, 2) == nil {
			h.host.inject(inject.Injection{ID: 1, Kind: inject.Message, Source: "user", Text: "stop and wrap up", Urgent: true, CreatedAt: time.Now()})
		}
	}()
	out := h.run(ctx)
	if out.Status != engine.Completed {
		for _, r := range h.srv.Requests() {
			t.Logf("request step %d attempt %d fault %s", r.Step, r.Attempt, r.Fault)
		}
		t.Logf("events %v", h.host.kinds())
		t.Fatalf("outcome = %+v", out)
	}
	if !slices.Contains(h.host.kinds(), event.KindInterrupted) {
		t.Errorf("no interruption recorded: %v", h.host.kinds())
	}
	reqs := h.srv.Requests()
	if n := len(reqs); n < 2 || !strings.Contains(lastUserText(reqs[n-2].Messages), "stop and wrap up") {
		t.Errorf("the call after the interruption does not carry the urgent message")
	}
	if got := assistantTurns(h.host.conversation()); got != 3 {
		t.Errorf("%d assistant turns stored, want 3 (the interrupted reply is dropped)", got)
	}
}

func TestPauseInjectionStopsAtBoundary(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: complete_task, input: {summary: done}}]
`)
	h.host.inject(inject.Injection{ID: 3, Kind: inject.Message, Source: "user", Text: "later", CreatedAt: time.Now()})
	h.host.inject(inject.Injection{ID: 4, Kind: inject.Pause, Source: "user", Text: "lunch", CreatedAt: time.Now()})
	out := h.run(context.Background())
	if out.Status != engine.Paused || out.Reason != "lunch" {
		t.Fatalf("outcome = %+v, want paused: lunch", out)
	}
	if len(h.srv.Requests()) != 0 {
		t.Error("a paused task called the model")
	}
	if h.host.delivered[4] != 1 || h.host.delivered[3] != 0 {
		t.Errorf("deliveries = %v: the pause is consumed, the message waits", h.host.delivered)
	}
	// Resuming continues from the stored conversation with the message.
	if out := h.run(context.Background()); out.Status != engine.Completed {
		t.Fatalf("after resume: %+v", out)
	}
	if h.host.delivered[3] != 1 {
		t.Errorf("the waiting message was not delivered on resume")
	}
}

func TestResumeRepairsInterruptedToolCalls(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: bash, input: {command: "echo once >> log.txt"}}]
    - tool_calls: [{name: complete_task, input: {summary: done}}]
`)
	// A run that stored the model's call but died before running it.
	call := llm.ToolCall{ID: "toolu_1", Name: "bash", Input: []byte(`{"command":"echo once >> log.txt"}`)}
	h.host.msgs = []llm.Message{
		llm.UserText(taskPrompt(h.host.task)),
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(call)}},
	}
	out := h.run(context.Background())
	if out.Status != engine.Completed {
		t.Fatalf("outcome = %+v", out)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "log.txt")); err == nil {
		t.Error("the interrupted tool call ran again on resume")
	}
	msgs := h.host.conversation()
	res := msgs[2].Parts[0].ToolResult
	if res == nil || !res.IsError || !strings.Contains(res.Content, "Not known whether this call ran") {
		t.Errorf("the dangling call got %+v, want an error result explaining the restart", msgs[2])
	}
	started := false
	for _, p := range h.host.events {
		if ts, ok := p.(event.TurnStarted); ok && ts.Resumed {
			started = true
		}
	}
	if !started {
		t.Error("the first turn after the restart is not marked resumed")
	}
}

func TestModelFaultsRetriedWithoutDuplicates(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: bash, input: {command: "echo run >> count.txt"}}]
      fault: {kind: reset, times: 2}
    - text: "almost there"
      fault: {kind: overloaded, times: 1}
      tool_calls: [{name: bash, input: {command: "echo run >> count.txt"}}]
    - tool_calls: [{name: complete_task, input: {summary: done}}]
      fault: {kind: server_error, times: 1}
`)
	if out := h.run(context.Background()); out.Status != engine.Completed {
		t.Fatalf("outcome = %+v", out)
	}
	if got := h.file("count.txt"); got != "run\nrun\n" {
		t.Errorf("count.txt = %q: each tool call must run exactly once", got)
	}
	msgs := h.host.conversation()
	if assistantTurns(msgs) != 3 || len(msgs) != 7 {
		t.Errorf("conversation: %d messages, %d assistant turns; want 7 and 3", len(msgs), assistantTurns(msgs))
	}
	if n := len(h.srv.Requests()); n != 7 {
		t.Errorf("%d requests, want 7 (3 turns + 4 faults)", n)
	}
}

// Each retry of a model call is an observation: which attempt comes next,
// of how many, and why the last one failed.
func TestModelRetriesObserved(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: complete_task, input: {summary: done}}]
      fault: {kind: server_error, times: 2}
`)
	if out := h.run(context.Background()); out.Status != engine.Completed {
		t.Fatalf("outcome = %+v", out)
	}
	var got []event.ModelRetry
	h.host.mu.Lock()
	for _, p := range h.host.events {
		if r, ok := p.(event.ModelRetry); ok {
			r.Message, r.WaitMs = "", 0
			got = append(got, r)
		}
	}
	h.host.mu.Unlock()
	want := []event.ModelRetry{{Turn: 1, Attempt: 2, MaxAttempts: 4, Class: "server", Status: 500}, {Turn: 1, Attempt: 3, MaxAttempts: 4, Class: "server", Status: 500}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("retries (-want +got):\n%s", diff)
	}
}

func TestMaxTokensContinuesTheTurn(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - {text: "Here is the first half of a long", stop: max_tokens}
    - tool_calls: [{name: complete_task, input: {summary: done}}]
`)
	if out := h.run(context.Background()); out.Status != engine.Completed {
		t.Fatalf("outcome = %+v", out)
	}
	reqs := h.srv.Requests()
	if !strings.Contains(lastUserText(reqs[1].Messages), "cut off at the output limit") {
		t.Errorf("the second call does not ask to continue: %q", lastUserText(reqs[1].Messages))
	}
}

func TestAskUserWaits(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: ask_user, input: {question: "Which greeting?"}}]
`)
	out := h.run(context.Background())
	if out.Status != engine.Waiting || out.Reason != "Which greeting?" {
		t.Fatalf("outcome = %+v, want waiting with the question", out)
	}
	if !slices.Contains(h.host.kinds(), event.KindNeedsInput) {
		t.Error("no needs_input observation")
	}
}

func TestIdleRepliesEndInWaiting(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - text: "I think we should use a map."
    - text: "Shall I use a map or a slice?"
`)
	out := h.run(context.Background())
	if out.Status != engine.Waiting || out.Reason != "Shall I use a map or a slice?" {
		t.Fatalf("outcome = %+v", out)
	}
	if n := len(h.srv.Requests()); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

func TestToolFailuresPauseAsDrift(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: read_file, input: {path: missing.txt}}]
    - tool_calls: [{name: read_file, input: {path: missing.txt}}]
    - tool_calls: [{name: read_file, input: {path: missing.txt}}]
    - tool_calls: [{name: complete_task, input: {summary: never}}]
`)
	h.opts.Limits.MaxToolFailures = 3
	out := h.run(context.Background())
	if out.Status != engine.Paused || !strings.Contains(out.Reason, "3 tool calls failed in a row") {
		t.Fatalf("outcome = %+v", out)
	}
}

func TestNoProgressPausesAsDrift(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: read_file, input: {path: missing.txt}}]
    - tool_calls: [{name: complete_task, input: {summary: never}}]
`)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	h.host.now = func() time.Time { now = now.Add(10 * time.Minute); return now }
	h.opts.Limits.NoProgress = 15 * time.Minute
	out := h.run(context.Background())
	if out.Status != engine.Paused || !strings.Contains(out.Reason, "no successful tool call") {
		t.Fatalf("outcome = %+v", out)
	}
}

func TestBudgetStopFromHost(t *testing.T) {
	h := newHarness(t, "default: {steps: [{text: hi}]}\n")
	h.host.stop = &engine.Stop{Status: engine.Paused, Reason: "budget: spent"}
	if out := h.run(context.Background()); out.Status != engine.Paused || out.Reason != "budget: spent" {
		t.Fatalf("outcome = %+v", out)
	}
	if len(h.srv.Requests()) != 0 {
		t.Error("called the model over budget")
	}
}

func TestCompactionKeepsConversationInWindow(t *testing.T) {
	tk := task.Task{ID: "t-aaaaa", Description: "make the greeting friendlier"}
	msgs := []llm.Message{llm.UserText(taskPrompt(tk))}
	for i := range 12 {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart(strings.Repeat("t", 2000)), llm.ToolCallPart(llm.ToolCall{ID: id, Name: "bash", Input: []byte(`{"command":"x"}`)})}},
			llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.ToolResultPart(llm.ToolResult{CallID: id, Content: strings.Repeat("a", 3000)})}})
	}
	host := newMemHost(tk)
	host.msgs = slices.Clone(msgs)
	e := New(Options{ContextWindow: func(string) int { return 20_000 }})
	l := &loop{e: e, h: host, model: "m", msgs: slices.Clone(msgs), env: &tool.Env{}, latest: tk}
	if err := l.fitContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := host.conversation()
	if n := l.tokens(got); n > 10_000 {
		t.Errorf("after compaction about %d tokens; want at most half the 20k window", n)
	}
	if !strings.Contains(got[0].Text(), "make the greeting friendlier") {
		t.Error("compaction dropped the task")
	}
	if !strings.Contains(got[1].Text(), "earlier messages were removed") {
		t.Errorf("no note about dropped messages: %q", got[1].Text())
	}
	// Every tool result still follows its call.
	calls := map[string]bool{}
	for _, m := range merge(got) {
		for _, p := range m.Parts {
			if p.ToolCall != nil {
				calls[p.ToolCall.ID] = true
			}
			if p.ToolResult != nil && !calls[p.ToolResult.CallID] {
				t.Errorf("result of %s left without its call", p.ToolResult.CallID)
			}
		}
	}
	last := got[len(got)-1].Parts[0].ToolResult
	if last == nil || len(last.Content) != 3000 {
		t.Error("the most recent tool result was elided")
	}
	if !slices.EqualFunc(got[len(got)-keepRecent:], msgs[len(msgs)-keepRecent:], func(a, b llm.Message) bool { return a.Text() == b.Text() && len(a.Parts) == len(b.Parts) }) {
		t.Error("recent messages changed")
	}
}

func TestNoModelPauses(t *testing.T) {
	h := newHarness(t, "default: {steps: [{text: hi}]}\n")
	h.opts.Model = func(task.Task) (llm.Client, string, error) {
		return nil, "", engine.ErrNoModel
	}
	if out := h.run(context.Background()); out.Status != engine.Paused {
		t.Fatalf("outcome = %+v", out)
	}
}

func TestCancelStopsRunningTool(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: bash, input: {command: "echo started > ready; sleep 300", timeout: 600}}]
`)
	// The command writes to a pipe before it sleeps: reading it returns
	// once the tool is running, and then the run is cancelled.
	if err := syscall.Mkfifo(filepath.Join(h.dir, "ready"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if _, err := os.ReadFile(filepath.Join(h.dir, "ready")); err == nil {
			cancel()
		}
	}()
	done := make(chan engine.Outcome, 1)
	go func() { done <- h.run(ctx) }()
	select {
	case out := <-done:
		if out.Status != engine.Stopped {
			t.Fatalf("outcome = %+v", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancel did not stop the run")
	}
	msgs := h.host.conversation()
	if last := msgs[len(msgs)-1]; last.Role != llm.RoleUser || last.Parts[0].ToolResult == nil {
		t.Errorf("the stopped call has no stored result: %+v", last)
	}
}

// A model server that stops answering mid-stream: each stalled attempt
// ends at the stream's idle timeout and is retried; every retry is an
// observation, after the turn's start and before its reply.
func TestStalledModelCallRetriesObserved(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: complete_task, input: {summary: done}}]
      fault: {kind: stall, times: 2}
`)
	// The stalled replies never send a byte; the good one streams at once.
	// The idle timeout is long enough that a loaded machine never makes
	// the good reply look stalled too (at 20 ms it did, adding a retry).
	base, err := anthropic.New(anthropic.Options{BaseURL: h.srv.URL(), APIKey: "test", Model: "claude-sonnet-4-5", IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	client := retry.New(base, retry.Policy{MaxAttempts: 5, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
		retry.Options{Sleep: func(context.Context, time.Duration) error { return nil }})
	h.opts.Model = func(task.Task) (llm.Client, string, error) { return client, "claude-sonnet-4-5", nil }
	if out := h.run(context.Background()); out.Status != engine.Completed {
		t.Fatalf("outcome = %+v", out)
	}
	var order []string
	h.host.mu.Lock()
	for _, p := range h.host.events {
		switch p := p.(type) {
		case event.TurnStarted:
			order = append(order, "started")
		case event.ModelRetry:
			order = append(order, fmt.Sprintf("retry %d of %d (%s)", p.Attempt, p.MaxAttempts, p.Class))
		case event.Usage:
			order = append(order, "reply")
		}
	}
	h.host.mu.Unlock()
	want := []string{"started", "retry 2 of 5 (timeout)", "retry 3 of 5 (timeout)", "reply"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}
