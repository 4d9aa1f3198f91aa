package syncer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// These tests run real hook processes, so they run on the real clock and
// poll for what they expect.

// relayHook writes a SyncerRelay hook that saves its input next to itself
// and prints reply; it returns the runner, the input's path and what the
// runner reported.
func relayHook(t *testing.T, reply string) (*hooks.Runner, string, *hookReports) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "relay-hook.sh")
	in := filepath.Join(dir, "input.json")
	body := "#!/bin/sh\ncat >'" + in + "'\nprintf '%s\\n' '" + reply + "'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	rep := &hookReports{}
	r := hooks.New(hooks.Options{Hooks: []hooks.Hook{{Point: hooks.SyncerRelay, Command: "sh '" + script + "'"}}, Report: rep.add})
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

func (r *hookReports) actions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.got {
		switch p := p.(type) {
		case event.HookActed:
			out = append(out, p.Action)
		case event.HookFailed:
			out = append(out, "failed: "+p.Error)
		}
	}
	return out
}

// relayInput reads the last decision the hook saw.
func relayInput(t *testing.T, path string) RelayDecision {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	var in hooks.Input
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatalf("hook input %q: %v", b, err)
	}
	if in.Hook != hooks.SyncerRelay || !in.CanBlock || !in.CanModify {
		t.Errorf("hook input = %+v", in)
	}
	var d RelayDecision
	if err := json.Unmarshal(in.Decision, &d); err != nil {
		t.Fatalf("hook decision %q: %v", in.Decision, err)
	}
	return d
}

func TestRelayHookBlocks(t *testing.T) {
	t.Parallel()
	r, in, rep := relayHook(t, `{"block":true,"reason":"quiet hours"}`)
	h := newHarness(t, false)
	tm := newTeam(h)
	s := h.start(baseConfig(), func(o *Options) { o.Hooks = r })
	l := tm.api.learn(jwtSummary, "", "auth", "jwt")
	testkit.WaitFor(t, "both messages blocked", func() bool {
		return states(h.messages(store.SyncQuery{LearningID: l.ID}))[store.SyncBlocked] == 2
	})

	if got := h.act.Count(); got != 0 {
		t.Errorf("%d injections of blocked messages", got)
	}
	for _, m := range h.messages(store.SyncQuery{LearningID: l.ID}) {
		if m.Note != "quiet hours" || m.InjectionID != 0 || m.QueuedAt != nil {
			t.Errorf("blocked message = %+v", m)
		}
	}
	var to []string
	for _, ig := range eventsOf[event.SyncIgnored](h, tm.api.id) {
		if ig.Reason != "hook-blocked" || ig.LearningID != l.ID || ig.MessageID == 0 || ig.Detail != "quiet hours" {
			t.Errorf("SyncIgnored = %+v", ig)
		}
		to = append(to, ig.To)
	}
	if len(to) != 2 {
		t.Errorf("SyncIgnored events to %v, want the UI and test tasks", to)
	}
	// The loop counts a blocked message after storing it: wait for the
	// second count rather than read it at once.
	testkit.WaitFor(t, "both blocks counted", func() bool { return s.Stats().Ignored["hook-blocked"] == 2 })
	if st := s.Stats(); st.Ignored["hook-blocked"] != 2 || st.Sent != 0 {
		t.Errorf("stats = %+v", st)
	}
	d := relayInput(t, in)
	if d.LearningID != l.ID || d.From != tm.api.id || (d.To != tm.ui.id && d.To != tm.tests.id) || d.Urgency != Helpful ||
		!strings.Contains(d.Message, jwtSummary) || !strings.Contains(d.Reason, "shared-tags") {
		t.Errorf("the hook saw %+v", d)
	}
	if got := rep.actions(); len(got) != 2 || got[0] != "blocked" || got[1] != "blocked" {
		t.Errorf("hook reports = %v", got)
	}
}

func TestRelayHookModifies(t *testing.T) {
	t.Parallel()
	const text = "From the hook: issue every token with iat set."
	r, _, rep := relayHook(t, `{"decision":{"message":"`+text+`","urgency":"blocking"}}`)
	h := newHarness(t, false)
	tm := newTeam(h)
	h.start(baseConfig(), func(o *Options) { o.Hooks = r })
	l := tm.api.learn(jwtSummary, "", "auth", "jwt")
	h.waitQueued(2)

	for _, a := range []*agent{tm.ui, tm.tests} {
		got := a.syncs()
		if len(got) != 1 || got[0].Text != text || string(got[0].Urgency) != Blocking || !got[0].Urgent {
			t.Errorf("%s got %+v, want the hook's message", a.id, got)
		}
	}
	for _, m := range h.messages(store.SyncQuery{LearningID: l.ID}) {
		if m.Message != text || m.DecidedBy != "hook" {
			t.Errorf("sync message = %+v", m)
		}
	}
	if got := rep.actions(); len(got) != 2 || got[0] != "modified" {
		t.Errorf("hook reports = %v", got)
	}
}

// A hook's change that breaks the message is refused; the message goes as
// it was.
func TestRelayHookCannotBreakTheMessage(t *testing.T) {
	t.Parallel()
	r, _, rep := relayHook(t, `{"decision":{"urgency":"apocalyptic","message":"   "}}`)
	h := newHarness(t, false)
	tm := newTeam(h)
	h.start(baseConfig(), func(o *Options) { o.Hooks = r })
	l := tm.api.learn(jwtSummary, "", "auth", "jwt")
	h.waitQueued(2)

	for _, m := range h.messages(store.SyncQuery{LearningID: l.ID}) {
		if m.Urgency != Helpful || m.DecidedBy != "rules" || !strings.Contains(m.Message, jwtSummary) {
			t.Errorf("sync message = %+v, want the rules' unchanged", m)
		}
	}
	got := rep.actions()
	if len(got) != 2 || !strings.Contains(got[0], "apocalyptic") {
		t.Errorf("hook reports = %v, want the refused changes", got)
	}
}
