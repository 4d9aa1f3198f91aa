package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// watchScript: a task writes a login query; a security watcher interjects
// when the query concatenates user input and notes nothing otherwise. The
// task's second model call is held long (a turn in flight) so that only
// an interruption lets it go on early; the interjection's words lead it
// to the fix.
const watchScript = `
conversations:
  - name: sec-interject
    match: {system: "You are a watcher session", user: "WHERE name = '.*\\+ name"}
    steps:
      - text: "The query is built from user input.\n[INTERJECT]\nurgent: true\ncontent: Stop: auth.go builds SQL by concatenating the user's name (SQL injection). Use a parameterized query.\n[/INTERJECT]"
        usage: {input_tokens: 900, output_tokens: 40}
  - name: peer-suggest
    match: {system: "You are a watcher session", user: "suggest a usage example"}
    steps:
      - text: "[INTERJECT]\nurgent: false\ncontent: Consider adding a usage example to the README.\n[/INTERJECT]"
  - name: sec-continue
    match: {system: "You are a watcher session"}
    steps:
      - text: "[CONTINUE]\nNothing of concern: no queries, no secrets.\n[/CONTINUE]"
  - name: fixed
    match: {user: "login handler", after: "parameterized query"}
    steps:
      - tool_calls: [{name: write_file, input: {path: auth.go, content: "package auth\n\nconst query = \"SELECT * FROM users WHERE name = ?\"\n"}}]
      - tool_calls: [{name: complete_task, input: {summary: "login query parameterized"}}]
  - name: login
    match: {user: "login handler"}
    steps:
      - tool_calls: [{name: write_file, input: {path: auth.go, content: "package auth\n\nfunc find(name string) string {\n\treturn \"SELECT * FROM users WHERE name = '\" + name + \"'\"\n}\n"}}]
      - text: "Now the handler."
        latency_ms: 120000
        tool_calls: [{name: complete_task, input: {summary: "done without the watcher"}}]
  - name: readme-suggested
    match: {user: "README line", after: "usage example"}
    steps:
      - tool_calls: [{name: complete_task, input: {summary: "README updated, example noted"}}]
  - name: readme
    match: {user: "README line"}
    steps:
      - tool_calls: [{name: write_file, input: {path: README.md, content: "# parser\n\nParses things.\n"}}]
      - text: "Let me check the file."
        tool_calls: [{name: read_file, input: {path: README.md}}]
      - text: "Checked."
        tool_calls: [{name: list_files, input: {path: "."}}]
      - tool_calls: [{name: complete_task, input: {summary: "README line added"}}]
`

func startWatch(t *testing.T) *modelDaemon {
	t.Helper()
	return startModel(t, watchScript, "", func(c *config.Config) {
		c.Supervision.Watcher.Enabled = false
		c.Supervision.Syncer.Enabled = false
		c.Merge.Auto = false
		c.Supervision.Sessions.MinIntervalSecs = 0
	})
}

// finish waits for the task to finish, showing the log when it does not.
func (d *modelDaemon) finish(t *testing.T, id task.ID) task.Task {
	t.Helper()
	deadline := time.Now().Add(150 * time.Second)
	for {
		det, err := d.client.GetTask(context.Background(), string(id))
		if err != nil {
			t.Fatal(err)
		}
		if det.Task.Status.Terminal() {
			return det.Task
		}
		if time.Now().After(deadline) {
			d.dump(t)
			t.Fatalf("task %s never finished: %s (%s)", id, det.Task.Status, det.Task.CloseReason)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dump logs the event log, for a failure's diagnosis.
func (d *modelDaemon) dump(t *testing.T) {
	evs, _ := d.client.Events(context.Background(), event.Query{})
	for _, e := range evs {
		if e.Kind != event.KindTextDelta {
			b, _ := e.MarshalJSON()
			t.Logf("%s", words.Clip(string(b), 400))
		}
	}
	for _, r := range d.model.Requests() {
		t.Logf("request: %s step %d", r.Conversation, r.Step)
	}
}

// waitEvent waits for an event of kind about the task that passes ok.
func (d *modelDaemon) waitEvent(t *testing.T, id task.ID, kind event.Kind, ok func(event.Event) bool) event.Event {
	t.Helper()
	deadline := time.Now().Add(testkit.WaitLimit)
	for {
		for _, e := range d.events(t, id, kind) {
			if ok == nil || ok(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			d.dump(t)
			t.Fatalf("timed out waiting for %s of %s", kind, id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// holdVerdictUntilTurnInFlight holds the security watcher's verdict; the
// function it returns waits until the task's second model call (the turn
// the interjection is to cut) is in flight, then lets the verdict go.
func (d *modelDaemon) holdVerdictUntilTurnInFlight(t *testing.T) func() {
	t.Helper()
	release := d.model.Hold("sec-interject", 0)
	t.Cleanup(release)
	return func() {
		t.Helper()
		testkit.WaitFor(t, "the task's second model call", func() bool { return len(d.requests("login")) >= 2 })
		release()
	}
}

// A security watcher sees a task write SQL concatenated from user input and
// interjects urgently: the task's turn in flight is cut, its next request
// carries the interjection with the session's name and authority, the
// receipt is recorded, the evaluation is charged to the session, and the
// session ends cleanly when the task finishes.
func TestWatcherInterjectsUrgentlyOnSQLInjection(t *testing.T) {
	t.Parallel()
	d := startWatch(t)
	ctx := context.Background()
	release := d.holdVerdictUntilTurnInFlight(t)
	tk := d.create(t, api.CreateTaskRequest{Description: "write the login handler", Persona: "junior", Watch: []string{"security"}})
	release()
	done := d.finish(t, tk.ID)
	if done.Status != task.Completed {
		t.Fatalf("status %s (%s), want completed", done.Status, done.CloseReason)
	}
	if got := len(d.requests("fixed")); got != 2 {
		t.Fatalf("%d requests after the interjection, want 2 (the fix, the completion)", got)
	}
	first := d.requests("fixed")[0]
	var carried string
	for _, m := range first.Messages {
		if strings.Contains(m.Text(), "<interjection") {
			carried = m.Text()
		}
	}
	for _, want := range []string{`authority="supervisor"`, `from="Security Reviewer"`, `urgent="true"`, "Use a parameterized query."} {
		if !strings.Contains(carried, want) {
			t.Errorf("the request after the interjection carries %q, want %q in it", carried, want)
		}
	}
	if n := len(d.events(t, tk.ID, event.KindInterrupted)); n == 0 {
		t.Error("the task's turn was not interrupted")
	}
	ij := d.waitEvent(t, tk.ID, event.KindWatchInterjected, nil).Payload.(event.WatchInterjected)
	if !ij.Urgent || ij.InjectionID == 0 || ij.Name != "security" || ij.Authority != "supervisor" {
		t.Errorf("interjection event %+v", ij)
	}
	d.waitEvent(t, tk.ID, event.KindWatchDelivered, func(e event.Event) bool {
		return e.Payload.(event.WatchDelivered).InjectionID == ij.InjectionID
	})
	ended := d.waitEvent(t, tk.ID, event.KindWatchSession, func(e event.Event) bool { return e.Payload.(event.WatchSession).Action == "ended" })
	if p := ended.Payload.(event.WatchSession); p.Status != "ended" || !strings.Contains(p.Reason, "completed") {
		t.Errorf("session event %+v, want ended as the task completed", p)
	}
	ws, err := d.client.Watcher(ctx, "security")
	if err != nil {
		t.Fatal(err)
	}
	if ws.Status != "ended" || ws.Interjections != 1 || ws.Evaluations < 1 || ws.SpentUSD <= 0 {
		t.Errorf("session %+v, want ended with its one interjection charged", ws)
	}
	log, err := d.client.WatcherLog(ctx, ws.ID, 0, 0)
	if err != nil || len(log.Evaluations) == 0 || log.Evaluations[0].Decision != "interject" || !log.Evaluations[0].Urgent {
		t.Fatalf("log = %+v, %v", log, err)
	}
	rep, err := d.client.Costs(ctx, api.CostQuery{By: api.CostByWatcher})
	if err != nil || len(rep.Rows) != 1 || rep.Rows[0].Key != ws.ID || rep.Rows[0].Calls != ws.Evaluations {
		t.Errorf("cost by watcher = %+v, %v; want the session's evaluations", rep, err)
	}
}

// A benign change gives [CONTINUE]: nothing reaches the task. A peer's
// suggestion (not urgent) arrives at the task's next boundary, without
// interrupting anything.
func TestWatcherContinuesOnBenignChangeAndPeerWaitsForBoundary(t *testing.T) {
	t.Parallel()
	d := startWatch(t)
	ctx := context.Background()
	tk := d.create(t, api.CreateTaskRequest{Description: "add a README line", Persona: "junior", NoStart: true})
	sec, err := d.client.AddWatcher(ctx, api.WatchAddRequest{Task: string(tk.ID), Role: "security"})
	if err != nil {
		t.Fatal(err)
	}
	peer, err := d.client.AddWatcher(ctx, api.WatchAddRequest{Task: string(tk.ID), Brief: "Watch the README: suggest a usage example if it lacks one."})
	if err != nil {
		t.Fatal(err)
	}
	if peer.Authority != "peer" || peer.Name != "watcher" || sec.Name != "security" {
		t.Fatalf("sessions %+v, %+v", sec, peer)
	}
	// The task's third model call is held until the peer has spoken: its
	// suggestion then waits for the boundary after that call's tool.
	release := d.model.Hold("readme", 2)
	defer release()
	if _, err := d.client.Act(ctx, string(tk.ID), client.Resume, ""); err != nil {
		t.Fatal(err)
	}
	d.waitEvent(t, tk.ID, event.KindWatchInterjected, func(e event.Event) bool {
		p := e.Payload.(event.WatchInterjected)
		return p.Session == peer.ID && p.InjectionID != 0 && !p.Urgent
	})
	release()
	done := d.finish(t, tk.ID)
	if done.Status != task.Completed {
		t.Fatalf("status %s (%s)", done.Status, done.CloseReason)
	}
	if len(d.requests("readme-suggested")) == 0 {
		t.Fatal("the peer's suggestion never reached the task")
	}
	if n := len(d.events(t, tk.ID, event.KindInterrupted)); n != 0 {
		t.Errorf("%d interruptions: a peer's suggestion must wait for the boundary", n)
	}
	var delivered bool
	for _, e := range d.events(t, tk.ID, event.KindDelivered) {
		if strings.Contains(strings.Join(e.Payload.(event.Delivered).Kinds, ","), "interjection") {
			delivered = true
		}
	}
	if !delivered {
		t.Error("no delivery of the interjection at a boundary")
	}
	secLog, err := d.client.WatcherLog(ctx, sec.ID, 0, 0)
	if err != nil || len(secLog.Evaluations) == 0 {
		t.Fatalf("security log %+v, %v", secLog, err)
	}
	for _, e := range secLog.Evaluations {
		if e.Decision != "continue" || e.InjectionID != 0 || !strings.Contains(e.Note, "Nothing of concern") {
			t.Errorf("security evaluation %+v, want a continue note and nothing sent", e)
		}
	}
	for _, e := range d.events(t, tk.ID, event.KindTaskMessage) {
		if p := e.Payload.(event.TaskMessage); p.Kind == "interjection" && strings.Contains(p.Source, sec.ID) {
			t.Errorf("the security session sent %q", p.Text)
		}
	}
}

// A session on --tags picks up a task created after it; removing it ends
// it.
func TestWatcherOnTagsPicksUpLaterTask(t *testing.T) {
	t.Parallel()
	d := startWatch(t)
	ctx := context.Background()
	ws, err := d.client.AddWatcher(ctx, api.WatchAddRequest{Tags: []string{"auth"}, Role: "security"})
	if err != nil {
		t.Fatal(err)
	}
	release := d.holdVerdictUntilTurnInFlight(t)
	tk := d.create(t, api.CreateTaskRequest{Description: "write the login handler", Persona: "junior", Tags: []string{"auth"}})
	release()
	ij := d.waitEvent(t, tk.ID, event.KindWatchInterjected, nil).Payload.(event.WatchInterjected)
	if ij.Session != ws.ID || !ij.Urgent {
		t.Errorf("interjection %+v, want the tag session's, urgent", ij)
	}
	d.finish(t, tk.ID)
	got, err := d.client.Watcher(ctx, ws.ID)
	if err != nil || got.Status != "active" {
		t.Errorf("a tag session after its task finished: %+v, %v; want still active", got, err)
	}
	rm, err := d.client.RemoveWatcher(ctx, "security")
	if err != nil || rm.Status != "ended" {
		t.Errorf("remove = %+v, %v", rm, err)
	}
}
