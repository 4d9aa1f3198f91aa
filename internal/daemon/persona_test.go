package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// modelDaemon is a daemon in this process whose every tier talks to a
// scripted model server, with a scratch repository to work on.
type modelDaemon struct {
	*running
	model *llmtest.Server
	repo  string
	home  string
	// cfg and getenv are what the daemon was started with (a restart).
	cfg    config.Config
	getenv func(string) string
}

// startModel starts a daemon on script with personas.yaml (when not "")
// and cfg changed by mut.
func startModel(tb testing.TB, script, personas string, mut func(*config.Config)) *modelDaemon {
	tb.Helper()
	return startModelEnv(tb, script, personas, nil, mut)
}

// startModelEnv is startModel with more variables in the daemon's
// environment.
func startModelEnv(tb testing.TB, script, personas string, extra map[string]string, mut func(*config.Config)) *modelDaemon {
	tb.Helper()
	sc, err := llmtest.ParseScript("test script", []byte(script))
	if err != nil {
		tb.Fatal(err)
	}
	srv := llmtest.NewServer(tb, sc)
	home := shortTemp(tb)
	env := map[string]string{"NEURAPHAGE_HOME": home, "TEST_API_KEY": "k"}
	maps.Copy(env, extra)
	getenv := func(k string) string { return env[k] }
	p, err := config.ResolvePaths(getenv)
	if err != nil {
		tb.Fatal(err)
	}
	if personas != "" {
		if err := os.MkdirAll(p.ConfigDir, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p.Personas, []byte(personas), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	cfg := config.Default()
	an := &cfg.LLM.Providers.Anthropic
	an.BaseURL, an.APIKeyEnv = srv.URL(), "TEST_API_KEY"
	for _, t := range []*string{&cfg.LLM.Tiers.Router.Provider, &cfg.LLM.Tiers.Worker.Provider, &cfg.LLM.Tiers.Expert.Provider} {
		*t = "anthropic"
	}
	cfg.LLM.Retry.BaseDelayMs, cfg.LLM.Retry.MaxDelayMs = 10, 50
	cfg.Merge.AuthorName, cfg.Merge.AuthorEmail = "Test", "test@neuraphage.invalid"
	cfg.Supervision.MainWatcher.Enabled = false
	if mut != nil {
		mut(&cfg)
	}
	repo := filepath.Join(home, "repo")
	makeRepo(tb, repo)

	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1), paths: p, client: client.New(p.Socket)}
	ready := make(chan struct{})
	go func() {
		r.done <- daemon.Run(ctx, daemon.Options{
			Paths: p, Config: cfg, Version: "test", Getenv: getenv,
			Logger: slog.New(slog.DiscardHandler), Ready: func() { close(ready) },
		})
	}()
	select {
	case <-ready:
	case err := <-r.done:
		cancel()
		tb.Fatalf("daemon did not start: %v", err)
	}
	tb.Cleanup(func() { r.stop(tb) })
	return &modelDaemon{running: r, model: srv, repo: repo, home: home, cfg: cfg, getenv: getenv}
}

func makeRepo(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "parser.go"), []byte("package parser\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	id := []string{"-c", "user.name=Test", "-c", "user.email=test@neuraphage.invalid", "-c", "commit.gpgsign=false"}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, append(id, "commit", "-q", "-m", "first")} {
		if _, err := git.Run(context.Background(), dir, args...); err != nil {
			tb.Fatal(err)
		}
	}
}

func (d *modelDaemon) create(tb testing.TB, req api.CreateTaskRequest) task.Task {
	tb.Helper()
	req.Repo = d.repo
	t, err := d.client.CreateTask(context.Background(), req)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// wait polls until the task satisfies ok.
func (d *modelDaemon) wait(tb testing.TB, id task.ID, what string, ok func(task.Task) bool) task.Task {
	tb.Helper()
	// Every change of the task is an event on its watch stream: check the
	// task again after each one, so a slow machine only makes the wait
	// longer. The limit is a backstop for a task that never gets there.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// From the log's last event on, so nothing that happens from here is missed.
	st, err := d.client.Status(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := d.client.Watch(ctx, event.Query{Filter: event.Filter{TaskID: id}, AfterID: st.LastEventID})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	for {
		det, err := d.client.GetTask(context.Background(), string(id))
		if err != nil {
			tb.Fatal(err)
		}
		if ok(det.Task) {
			return det.Task
		}
		if _, err := s.Next(); err != nil {
			tb.Fatalf("task %s never %s: %s (%s); the watch ended: %v", id, what, det.Task.Status, det.Task.CloseReason, err)
		}
	}
}

func (d *modelDaemon) waitStatus(tb testing.TB, id task.ID, st task.Status) task.Task {
	tb.Helper()
	return d.wait(tb, id, "became "+string(st), func(t task.Task) bool { return t.Status == st })
}

// events returns the task's events of kind.
func (d *modelDaemon) events(tb testing.TB, id task.ID, kind event.Kind) []event.Event {
	tb.Helper()
	evs, err := d.client.Events(context.Background(), event.Query{Filter: event.Filter{TaskID: id, Kinds: []string{string(kind)}}})
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

// requests returns the model requests of one scripted conversation.
func (d *modelDaemon) requests(conv string) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range d.model.Requests() {
		if r.Conversation == conv {
			out = append(out, r)
		}
	}
	return out
}

const routingScript = `
conversations:
  - name: route-refactor
    match: {system: "task router", user: "refactor the parser"}
    steps:
      - text: '{"category": "refactoring", "complexity": "high", "suggested-persona": "senior", "tags": ["Parser", "parser", "bad tag", "perf"]}'
  - name: route-garbage
    match: {system: "task router", user: "write the docs"}
    steps:
      - text: "A junior could do this, I think."
  - name: route-unknown
    match: {system: "task router", user: "poke the cache"}
    steps:
      - text: '{"category": "cache-poking", "suggested-persona": "wizard"}'
  - name: refactor
    match: {user: "refactor the parser"}
    steps:
      - tool_calls: [{name: complete_task, input: {summary: "refactored"}}]
  - name: docs
    match: {user: "write the docs"}
    steps:
      - tool_calls: [{name: complete_task, input: {summary: "documented"}}]
  - name: cache
    match: {user: "poke the cache"}
    steps:
      - tool_calls: [{name: complete_task, input: {summary: "poked"}}]
`

// A task that names no persona is classified by the router: a usable
// answer picks the persona (whose prompt and tier's model the task then
// runs with) and adds the router's tags; an answer that is not JSON, or
// names no persona a task can be given, falls back to the default persona
// with the reason recorded.
func TestRouterSelectsPersonaOrFallsBack(t *testing.T) {
	t.Parallel()
	d := startModel(t, routingScript, "", func(c *config.Config) { c.Merge.Auto = false })
	refactor := d.create(t, api.CreateTaskRequest{Description: "refactor the parser", Tags: []string{"go"}})
	docs := d.create(t, api.CreateTaskRequest{Description: "write the docs"})
	cache := d.create(t, api.CreateTaskRequest{Description: "poke the cache"})

	got := d.waitStatus(t, refactor.ID, task.Completed)
	if got.Persona != "senior" || got.PersonaVia != "router" {
		t.Errorf("refactor runs as %q via %q, want senior via router", got.Persona, got.PersonaVia)
	}
	if want := []string{"go", "parser", "perf"}; !slices.Equal(got.Tags, want) {
		t.Errorf("tags = %v, want %v (the router's, normalized, the unusable one dropped)", got.Tags, want)
	}
	reqs := d.requests("refactor")
	if len(reqs) == 0 {
		t.Fatal("the refactor task never called the model")
	}
	if !strings.Contains(reqs[0].System, "senior software engineer") || reqs[0].Model != "claude-opus-4-5" {
		t.Errorf("refactor called %q with a system prompt starting %q; want the senior persona on the expert tier's model", reqs[0].Model, words.Clip(reqs[0].System, 80))
	}
	if !strings.Contains(reqs[0].System, "complete_task") {
		t.Errorf("the persona's prompt replaced the base prompt instead of going before it: %q", words.Clip(reqs[0].System, 80))
	}
	router := d.requests("route-refactor")
	if len(router) != 1 || router[0].Model != "claude-haiku-4-5" {
		t.Fatalf("router requests: %+v", router)
	}
	if u := router[0].Messages[0].Text(); !strings.Contains(u, "- senior:") || strings.Contains(u, "- watcher:") {
		t.Errorf("the router was not offered exactly the assignable personas:\n%s", u)
	}
	sel := d.events(t, refactor.ID, event.KindPersonaSelected)
	if len(sel) != 1 {
		t.Fatalf("%d persona.selected events", len(sel))
	}
	ps := sel[0].Payload.(event.PersonaSelected)
	if ps.Category != "refactoring" || ps.Complexity != "high" || ps.Model != "claude-opus-4-5" {
		t.Errorf("persona.selected = %+v", ps)
	}
	if got.Usage.CostUSD <= 0 {
		t.Errorf("the router's call was not charged to the task: usage %+v", got.Usage)
	}

	for _, c := range []struct {
		id   task.ID
		conv string
		why  string
	}{
		{docs.ID, "docs", "not a JSON object"},
		{cache.ID, "cache", "no assignable persona takes"},
	} {
		got := d.waitStatus(t, c.id, task.Completed)
		if got.Persona != "mid" || got.PersonaVia != "fallback" {
			t.Errorf("%s runs as %q via %q, want mid via fallback", c.conv, got.Persona, got.PersonaVia)
		}
		sel := d.events(t, c.id, event.KindPersonaSelected)
		if len(sel) != 1 || !strings.Contains(sel[0].Payload.(event.PersonaSelected).Reason, c.why) {
			t.Errorf("%s: persona.selected %+v, want a reason saying %q", c.conv, sel, c.why)
		}
		if r := d.requests(c.conv); len(r) == 0 || !strings.Contains(r[0].System, "mid-level software engineer") || r[0].Model != "claude-sonnet-4-5" {
			t.Errorf("%s did not run as mid on the worker tier", c.conv)
		}
	}
}

// A PersonaSelected hook changes the persona chosen (it sees the
// decision as JSON on stdin), and the change is recorded; a hook that
// names a persona that cannot be given is ignored and reported.
func TestPersonaSelectedHookOverrides(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hook := filepath.Join(dir, "pick.sh")
	seen := filepath.Join(dir, "seen.json")
	script := "#!/bin/sh\ncat > " + seen + "\n" +
		`case "$(cat ` + seen + `)" in *"refactor the parser"*) echo '{"decision": {"persona": "reviewer"}, "reason": "house rule"}';; *) echo '{"decision": {"persona": "router"}}';; esac` + "\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := startModel(t, routingScript, "", func(c *config.Config) {
		c.Merge.Auto = false
		c.Hooks = []config.Hook{{On: "PersonaSelected", Command: hook, TimeoutSecs: 10}}
	})
	tk := d.create(t, api.CreateTaskRequest{Description: "refactor the parser"})
	got := d.waitStatus(t, tk.ID, task.Completed)
	if got.Persona != "reviewer" || got.PersonaVia != "hook" {
		t.Errorf("runs as %q via %q, want reviewer via hook", got.Persona, got.PersonaVia)
	}
	var in struct {
		Hook     string          `json:"hook"`
		TaskID   string          `json:"task_id"`
		Decision json.RawMessage `json:"decision"`
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &in); err != nil || in.Hook != "PersonaSelected" || !strings.Contains(string(in.Decision), `"persona":"senior"`) {
		t.Errorf("the hook read %s", b)
	}
	if acted := d.events(t, tk.ID, event.KindHookActed); len(acted) != 1 {
		t.Errorf("hook.acted events: %+v", acted)
	}

	other := d.create(t, api.CreateTaskRequest{Description: "write the docs"})
	got = d.waitStatus(t, other.ID, task.Completed)
	if got.Persona != "mid" {
		t.Errorf("a hook naming an internal persona moved the task to %q", got.Persona)
	}
	failed := d.events(t, other.ID, event.KindHookFailed)
	if len(failed) != 1 || !strings.Contains(failed[0].Payload.(event.HookFailed).Error, "internal") {
		t.Errorf("hook.failed events: %+v", failed)
	}
}

// Escalating a running task changes its persona at its next turn
// boundary: the next model call has the new persona's system prompt and
// its tier's model, the conversation so far is intact, and the model is
// told; escalating past the top of the chain is refused.
func TestEscalationMidTask(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "go")
	script := `
conversations:
  - name: long
    match: {user: "long job"}
    steps:
      - text: "Waiting for the build."
        tool_calls: [{name: bash, input: {command: "while [ ! -e ` + gate + ` ]; do sleep 0.02; done; echo built"}}]
      - tool_calls: [{name: complete_task, input: {summary: "finished as senior"}}]
`
	d := startModel(t, script, "", func(c *config.Config) { c.Merge.Auto = false })
	tk := d.create(t, api.CreateTaskRequest{Description: "long job", Persona: "mid"})
	d.wait(t, tk.ID, "called the model", func(task.Task) bool { return len(d.requests("long")) > 0 })

	e, err := d.client.Escalate(context.Background(), string(tk.ID), "", "stuck on the build")
	if err != nil {
		t.Fatal(err)
	}
	if e.From != "mid" || e.To != "senior" || e.Applied {
		t.Errorf("escalation = %+v, want mid → senior at the boundary", e)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := d.waitStatus(t, tk.ID, task.Completed)
	if got.Persona != "senior" || got.PersonaVia != "escalated" {
		t.Errorf("task runs as %q via %q", got.Persona, got.PersonaVia)
	}
	// One request per step (a retried attempt under load repeats one).
	var first, second *llmtest.Request
	for _, r := range d.requests("long") {
		switch r.Step {
		case 0:
			first = &r
		case 1:
			second = &r
		}
	}
	if first == nil || second == nil {
		t.Fatalf("model calls: %+v", d.requests("long"))
	}
	if !strings.Contains(first.System, "mid-level") || first.Model != "claude-sonnet-4-5" {
		t.Errorf("first call: %s with %q", first.Model, words.Clip(first.System, 80))
	}
	if !strings.Contains(second.System, "senior software engineer") || second.Model != "claude-opus-4-5" {
		t.Errorf("second call: %s with %q; want the senior prompt on the expert model", second.Model, words.Clip(second.System, 80))
	}
	if len(second.Messages) < 3 || second.Messages[0].Text() != first.Messages[0].Text() {
		t.Fatalf("the conversation was not kept: %d messages", len(second.Messages))
	}
	var sawResult, sawNote bool
	for _, m := range second.Messages {
		for _, p := range m.Parts {
			if p.ToolResult != nil && strings.Contains(p.ToolResult.Content, "built") {
				sawResult = true
			}
		}
		if m.Role == llm.RoleUser && strings.Contains(m.Text(), "<persona-change") && strings.Contains(m.Text(), "stuck on the build") {
			sawNote = true
		}
	}
	if !sawResult || !sawNote {
		t.Errorf("second call lacks the first turn's tool result (%v) or the persona-change note (%v)", sawResult, sawNote)
	}
	esc := d.events(t, tk.ID, event.KindPersonaEscalated)
	if len(esc) != 1 {
		t.Fatalf("%d persona.escalated events", len(esc))
	}
	if p := esc[0].Payload.(event.PersonaEscalated); p.From != "mid" || p.To != "senior" || p.ToModel != "claude-opus-4-5" || p.By != "user" || p.Reason != "stuck on the build" {
		t.Errorf("persona.escalated = %+v", p)
	}

	// The top of the chain: a held task is escalated at once, up to
	// architect, and no further.
	held := d.create(t, api.CreateTaskRequest{Description: "held job", Persona: "senior", NoStart: true})
	if e, err := d.client.Escalate(context.Background(), string(held.ID), "", ""); err != nil || !e.Applied || e.To != "architect" {
		t.Fatalf("escalating a held senior: %+v, %v", e, err)
	}
	_, err = d.client.Escalate(context.Background(), string(held.ID), "", "")
	var ae *api.Error
	if !asAPIError(err, &ae) || ae.Code != api.CodeInvalid || !strings.Contains(ae.Message, "top of the escalation chain") {
		t.Fatalf("escalating past the top: %v", err)
	}
	if refused := d.events(t, held.ID, event.KindEscalationRefused); len(refused) != 1 {
		t.Errorf("escalation_refused events: %+v", refused)
	}
	if _, err := d.client.Escalate(context.Background(), string(held.ID), "router", ""); !asAPIError(err, &ae) || ae.Code != api.CodeInvalid {
		t.Errorf("escalating to an internal persona: %v", err)
	}
}

func asAPIError(err error, target **api.Error) bool {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return false
	}
	*target = &ce.Body
	return true
}

// A two-phase workflow end to end: the implement phase (mid) changes a
// file on the workflow's branch, the review phase (reviewer) gets its
// summary and reports structured findings, and the workflow task then
// completes with its branch merged.
func TestTwoPhaseWorkflow(t *testing.T) {
	t.Parallel()
	script := `
conversations:
  - name: implement
    match: {system: "mid-level", user: "implement: add a version"}
    steps:
      - tool_calls: [{name: write_file, input: {path: VERSION, content: "1.0\n"}}]
      - tool_calls: [{name: complete_task, input: {summary: "VERSION file added"}}]
  - name: review
    match: {system: "code review", user: "review: add a version"}
    steps:
      - tool_calls: [{name: bash, input: {command: "cat VERSION"}}]
      - tool_calls:
          - name: complete_task
            input:
              summary: '{"verdict": "changes", "findings": [{"severity": "important", "file": "VERSION", "line": 1, "message": "use semver: 1.0.0"}]}'
`
	personas := `
workflows:
  build-and-review:
    - phase: implement
      persona: mid
    - phase: review
      persona: reviewer
`
	d := startModel(t, script, personas, nil)
	wf := d.create(t, api.CreateTaskRequest{Description: "add a version", Workflow: []task.Phase{
		{Name: "implement", Personas: []string{"mid"}},
		{Name: "review", Personas: []string{"reviewer"}, Review: true},
	}})
	if wf.Engine != "workflow" || len(wf.Workflow) != 2 {
		t.Fatalf("workflow task = %+v", wf)
	}
	done := d.waitStatus(t, wf.ID, task.Completed)
	if !strings.Contains(done.CloseReason, "workflow done") {
		t.Errorf("workflow closed with %q", done.CloseReason)
	}
	kids, err := d.client.ListTasks(context.Background(), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var phases []task.Task
	for _, k := range kids {
		if k.ParentID == wf.ID {
			dt, err := d.client.GetTask(context.Background(), string(k.ID))
			if err != nil {
				t.Fatal(err)
			}
			phases = append(phases, dt.Task)
		}
	}
	if len(phases) != 2 {
		t.Fatalf("%d phase tasks", len(phases))
	}
	for _, k := range phases {
		if k.Status != task.Completed || k.Phase == nil || k.Worktree != "" {
			t.Errorf("phase task %+v", k)
		}
	}
	review := d.requests("review")
	if len(review) == 0 {
		t.Fatal("the review phase never called the model")
	}
	var handed bool
	for _, m := range review[0].Messages {
		if strings.Contains(m.Text(), "VERSION file added") {
			handed = true
		}
	}
	if !handed {
		t.Error("the review phase did not get the implement phase's summary in its first context")
	}
	fin := d.events(t, wf.ID, event.KindPhaseFinished)
	if len(fin) != 2 {
		t.Fatalf("%d phase_finished events", len(fin))
	}
	rev := fin[1].Payload.(event.PhaseFinished)
	if rev.Verdict != "changes" || len(rev.Findings) != 1 || rev.Findings[0].File != "VERSION" || rev.Findings[0].Line != 1 {
		t.Errorf("review outcome = %+v", rev)
	}
	out, err := git.Run(context.Background(), d.repo, "show", "main:VERSION")
	if err != nil || strings.TrimSpace(out) != "1.0" {
		t.Errorf("main has VERSION %q (%v); the workflow's branch did not land", out, err)
	}
}

// Cancelling a workflow task cancels its unfinished phase tasks.
func TestCancelWorkflowCancelsPhases(t *testing.T) {
	t.Parallel()
	d := startModel(t, "conversations: []\n", "", nil)
	wf := d.create(t, api.CreateTaskRequest{Description: "held work", NoStart: true, Workflow: []task.Phase{
		{Name: "implement", Personas: []string{"mid"}},
		{Name: "review", Personas: []string{"reviewer", "senior"}, Review: true},
	}})
	if _, err := d.client.Act(context.Background(), string(wf.ID), client.Cancel, "changed my mind"); err != nil {
		t.Fatal(err)
	}
	all, err := d.client.ListTasks(context.Background(), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, k := range all {
		if k.ParentID == wf.ID {
			n++
			if k.Status != task.Cancelled {
				t.Errorf("phase task %s is %s", k.ID, k.Status)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d phase tasks, want 3", n)
	}
}
