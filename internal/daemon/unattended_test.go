package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// unattendedSteps is how many distinct numbered steps the healthy task runs.
const unattendedSteps = 40

// unattendedScript: a healthy task runs distinct numbered steps (echo
// step-N, each output different) and finishes; a looping task reruns the
// same failing check, byte for byte, until something tells it why it
// fails. The watcher persona is the harshest there is: whatever tier 1
// found, it says stuck and asks for a nudge, so a false finding of tier 1
// on the healthy task would become a nudge. Asked for a look with no
// finding (the healthy task's steps pass the read-without-change budget,
// a signal only tier 2 may act on), it judges, as a model would, that a
// task printing its next step each time is progressing.
func unattendedScript() string {
	var b strings.Builder
	b.WriteString(`
conversations:
  - name: watcher-look
    match: {system: "task watcher", user: "found nothing"}
    steps:
      - text: '{"status": "healthy", "confidence": 0.9, "diagnosis": "each step prints the next step number", "recommendation": "continue"}'
  - name: watcher
    match: {system: "task watcher"}
    steps:
      - text: '{"status": "stuck", "confidence": 0.9, "diagnosis": "check.sh fails on a missing VERSION", "recommendation": "nudge", "nudge-message": "check.sh reads VERSION, which does not exist. Create VERSION, then run the check once more."}'
  - name: recovered
    match: {user: "release check", after: "Create VERSION"}
    steps:
      - tool_calls: [{name: write_file, input: {path: VERSION, content: "0.2.0\n"}}]
      - tool_calls: [{name: bash, input: {command: "sh check.sh"}}]
      - tool_calls: [{name: complete_task, input: {summary: "VERSION added"}}]
  - name: loop
    match: {user: "release check"}
    steps:
`)
	for range 12 {
		b.WriteString("      - text: \"Running the check again.\"\n        latency_ms: 50\n        tool_calls: [{name: bash, input: {command: \"sh check.sh\"}}]\n")
	}
	b.WriteString(`  - name: steps
    match: {user: "numbered steps"}
    steps:
`)
	for n := 1; n <= unattendedSteps; n++ {
		fmt.Fprintf(&b, "      - text: \"Step %d.\"\n        latency_ms: 50\n        tool_calls: [{name: bash, input: {command: \"echo step-%d\"}}]\n", n, n)
	}
	b.WriteString("      - tool_calls: [{name: complete_task, input: {summary: \"all steps done\"}}]\n")
	return b.String()
}

// Unattended supervision, end to end with a small Watcher interval: a
// task looping on the same failing command is nudged by its fourth run of
// it and recovers.
func TestUnattendedLoopNudgedByFourthRepeat(t *testing.T) {
	t.Parallel()
	d, loop, _ := startUnattended(t)
	done := d.wait(t, loop.ID, "finished", func(t task.Task) bool { return t.Status.Terminal() })
	if done.Status != task.Completed {
		t.Fatalf("the looping task is %s (%s), want completed after a nudge", done.Status, done.CloseReason)
	}
	nudges := d.events(t, loop.ID, event.KindWatcherNudge)
	if len(nudges) == 0 {
		t.Fatal("the looping task was never nudged")
	}
	runs := 0
	for _, c := range d.events(t, loop.ID, event.KindToolCall) {
		if c.ID < nudges[0].ID {
			runs++
		}
	}
	t.Logf("nudged after %d runs of the failing check: %+v", runs, nudges[0].Payload)
	if runs > 4 {
		t.Errorf("nudged after %d runs of the failing check, want by the 4th", runs)
	}
	if n := len(d.events(t, loop.ID, event.KindWatcherPause)); n != 0 {
		t.Errorf("the looping task was paused %d times although it recovered", n)
	}
}

// ... while a healthy task running distinct numbered steps, beside it, is
// never nudged, escalated or paused.
func TestUnattendedNumberedStepsNotNudged(t *testing.T) {
	// Before calls kept their numbers, tier 1 masked them and the task was
	// nudged three times, escalated and paused by step 18.
	t.Parallel()
	d, _, steps := startUnattended(t)
	// A pause by the watcher stops it too: it waits for its user then.
	done := d.wait(t, steps.ID, "stopped", func(t task.Task) bool {
		return t.Status.Terminal() || t.Status == task.Paused || t.Status == task.Waiting
	})
	var actions []string
	for _, k := range []event.Kind{event.KindWatcherNudge, event.KindWatcherEscalate, event.KindWatcherPause, event.KindWatcherAbort} {
		for _, e := range d.events(t, steps.ID, k) {
			actions = append(actions, fmt.Sprintf("%s %+v", k, e.Payload))
		}
	}
	if len(actions) > 0 {
		t.Fatalf("the healthy task was acted on: %s", strings.Join(actions, "; "))
	}
	if done.Status != task.Completed {
		t.Fatalf("the healthy task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	if n := len(d.events(t, steps.ID, event.KindToolCall)); n < unattendedSteps {
		t.Errorf("the healthy task made %d calls, want its %d steps", n, unattendedSteps)
	}
}

// startUnattended starts a daemon whose Watcher looks every second, with
// the check in its repository, and the two tasks.
func startUnattended(t *testing.T) (d *modelDaemon, loop, steps task.Task) {
	t.Helper()
	d = startModel(t, unattendedScript(), "", func(c *config.Config) {
		c.Supervision.Watcher.Enabled = true
		c.Supervision.Watcher.IntervalSecs = 1
		c.Merge.Auto = false
	})
	check := "#!/bin/sh\nv=$(cat VERSION) || { echo \"FAIL: no version\"; exit 1; }\necho \"ok: $v\"\n"
	if err := os.WriteFile(filepath.Join(d.repo, "check.sh"), []byte(check), 0o755); err != nil {
		t.Fatal(err)
	}
	gitCommit(t, d.repo, "check.sh")
	loop = d.create(t, api.CreateTaskRequest{Description: "make the release check pass", Persona: "junior"})
	steps = d.create(t, api.CreateTaskRequest{Description: "run the numbered steps of the migration", Persona: "junior"})
	return d, loop, steps
}
