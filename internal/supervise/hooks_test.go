package supervise

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// These tests run real hook processes, so they run on the real clock and
// poll for what they expect.

// nudgeHook writes a WatcherNudge hook that saves its input next to itself
// and prints reply; it returns the runner and the input's path.
func nudgeHook(t *testing.T, reply string) (*hooks.Runner, string, *hookReports) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "nudge-hook.sh")
	in := filepath.Join(dir, "input.json")
	body := "#!/bin/sh\ncat >'" + in + "'\nprintf '%s\\n' '" + reply + "'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	rep := &hookReports{}
	r := hooks.New(hooks.Options{Hooks: []hooks.Hook{{Point: hooks.WatcherNudge, Command: "sh '" + script + "'"}}, Report: rep.add})
	t.Cleanup(r.Close)
	return r, in, rep
}

// hookReports collects what the runner reports.
type hookReports struct {
	mu  sync.Mutex
	got []event.Payload // guarded by mu
}

func (r *hookReports) add(_ task.ID, p event.Payload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, p)
}

func (r *hookReports) all() []event.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Payload(nil), r.got...)
}

// hookInput reads the decision the hook saw.
func hookInput(t *testing.T, path string) NudgeDecision {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	var in hooks.Input
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatalf("hook input %q: %v", b, err)
	}
	var d NudgeDecision
	if err := json.Unmarshal(in.Decision, &d); err != nil {
		t.Fatalf("hook decision %q: %v", in.Decision, err)
	}
	if in.Hook != hooks.WatcherNudge || !in.CanBlock || !in.CanModify || in.TaskID == "" {
		t.Errorf("hook input = %+v", in)
	}
	return d
}

func TestNudgeHookBlocks(t *testing.T) {
	t.Parallel()
	r, in, rep := nudgeHook(t, `{"block":true,"reason":"x"}`)
	h := start(t, false, baseConfig(), func(o *Options) { o.Hooks = r })
	a := h.task("t-blocked", nil)
	a.status(task.Running)
	a.failN(3)
	testkit.WaitFor(t, "the hook to block the nudge", func() bool { return h.w.Stats().HookBlocks == 1 })

	if got := h.act.Of(a.id, inject.Nudge); len(got) != 0 {
		t.Errorf("a blocked nudge was sent: %+v", got)
	}
	if got := recordedOf[event.WatcherNudge](h.st, a.id); len(got) != 0 {
		t.Errorf("a blocked nudge was recorded: %+v", got)
	}
	if s := h.w.Stats(); s.Nudges != 0 {
		t.Errorf("stats = %+v", s)
	}
	d := hookInput(t, in)
	if d.Severity != "hint" || d.Check != "failing" || d.Tier != 1 || len(d.Evidence) != 3 || !strings.HasPrefix(d.Message, "A note from the watcher") {
		t.Errorf("the hook saw %+v", d)
	}
	got := rep.all()
	if len(got) != 1 {
		t.Fatalf("hook reports = %+v, want one", got)
	}
	if acted, ok := got[0].(event.HookActed); !ok || acted.Action != "blocked" || acted.Reason != "x" {
		t.Errorf("hook report = %+v, want the block and its reason", got[0])
	}
}

func TestNudgeHookModifies(t *testing.T) {
	t.Parallel()
	r, _, _ := nudgeHook(t, `{"decision":{"message":"From the hook: create VERSION, then run check.sh once."}}`)
	h := start(t, false, baseConfig(), func(o *Options) { o.Hooks = r })
	a := h.task("t-modified", nil)
	a.status(task.Running)
	a.failN(3)
	testkit.WaitFor(t, "the nudge", func() bool { return len(recordedOf[event.WatcherNudge](h.st, a.id)) == 1 })

	const want = "From the hook: create VERSION, then run check.sh once."
	if got := a.lastNudge(); got.Text != want || got.Attrs["severity"] != "hint" {
		t.Errorf("nudge = %+v, want the hook's text", got)
	}
	if got := recordedOf[event.WatcherNudge](h.st, a.id)[0]; got.Message != want {
		t.Errorf("recorded message = %q", got.Message)
	}
	if s := h.w.Stats(); s.HookBlocks != 0 || s.Nudges != 1 {
		t.Errorf("stats = %+v", s)
	}
}

func TestNudgeHookCannotBreakTheNudge(t *testing.T) {
	t.Parallel()
	r, _, rep := nudgeHook(t, `{"decision":{"severity":"apocalyptic","message":"x"}}`)
	h := start(t, false, baseConfig(), func(o *Options) { o.Hooks = r })
	a := h.task("t-refused", nil)
	a.status(task.Running)
	a.failN(3)
	testkit.WaitFor(t, "the nudge", func() bool { return len(recordedOf[event.WatcherNudge](h.st, a.id)) == 1 })

	n := recordedOf[event.WatcherNudge](h.st, a.id)[0]
	if got := a.lastNudge(); got.Text != Message(findingOf(n), hint) || got.Attrs["severity"] != "hint" {
		t.Errorf("nudge = %+v, want tier 1's hint unchanged", got)
	}
	reps := rep.all()
	if len(reps) != 1 {
		t.Fatalf("hook reports = %+v", reps)
	}
	if f, ok := reps[0].(event.HookFailed); !ok || !strings.Contains(f.Error, "apocalyptic") {
		t.Errorf("hook report = %+v, want the refused change", reps[0])
	}
}
