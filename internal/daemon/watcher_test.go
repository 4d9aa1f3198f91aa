package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// loopScript: a task reruns a failing check (spelled differently each
// time) until something tells it why it fails; the watcher persona
// judges with a specific hint; after the hint the task fixes it.
func loopScript(loops int) string {
	var b strings.Builder
	b.WriteString(`
conversations:
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
	spellings := []string{"sh check.sh", "sh  check.sh", "sh ./check.sh", "sh 'check.sh'"}
	for i := range loops {
		fmt.Fprintf(&b, "      - text: \"Running the check again.\"\n        latency_ms: 100\n        tool_calls: [{name: bash, input: {command: %q}}]\n", spellings[i%len(spellings)])
	}
	return b.String()
}

// startLoop starts a daemon on the loop script with the check in its
// repository, and a task that loops.
func startLoop(t *testing.T, supervised bool) (*modelDaemon, task.Task) {
	t.Helper()
	d := startModel(t, loopScript(12), "", func(c *config.Config) {
		c.Supervision.Watcher.Enabled = supervised
		c.Merge.Auto = false
	})
	check := "#!/bin/sh\nv=$(cat VERSION) || { echo \"FAIL $(date +%T) pid $$: no version\"; exit 1; }\necho \"ok: $v\"\n"
	if err := os.WriteFile(filepath.Join(d.repo, "check.sh"), []byte(check), 0o755); err != nil {
		t.Fatal(err)
	}
	gitCommit(t, d.repo, "check.sh")
	return d, d.create(t, api.CreateTaskRequest{Description: "make the release check pass", Persona: "junior"})
}

// A task looping on a failing command is found at the third failure,
// nudged with the watcher persona's specific hint, recovers, and spends
// fewer tokens than the same task unsupervised, which loops until its own
// drift limit pauses it.
func TestWatcherNudgesALoopingTask(t *testing.T) {
	t.Parallel()
	d, tk := startLoop(t, true)
	done := d.wait(t, tk.ID, "completed", func(t task.Task) bool { return t.Status == task.Completed || t.Status.Terminal() })
	if done.Status != task.Completed {
		t.Fatalf("status %s (%s), want completed", done.Status, done.CloseReason)
	}
	nudges := d.events(t, tk.ID, event.KindWatcherNudge)
	if len(nudges) != 1 {
		t.Fatalf("%d nudges, want 1", len(nudges))
	}
	n := nudges[0].Payload.(event.WatcherNudge)
	if n.Severity != "hint" || n.Tier != 2 || !strings.Contains(n.Message, "Create VERSION") || n.Check != "failing" {
		t.Errorf("nudge = %+v, want a tier-2 hint for the failing check", n)
	}
	if len(n.Evidence) != 3 {
		t.Errorf("evidence = %+v, want the three failing results", n.Evidence)
	}
	health := d.events(t, tk.ID, event.KindHealthCheck)
	if len(health) == 0 || health[len(health)-1].Payload.(event.HealthCheck).Status != "healthy" {
		t.Errorf("health events = %v, want the last one healthy after progress", health)
	}
	if len(d.events(t, tk.ID, event.KindWatcherPause)) != 0 {
		t.Error("a task that recovered after a nudge was paused")
	}
	hs, err := d.client.SupervisionHealth(context.Background(), string(tk.ID))
	if err != nil || len(hs) != 1 {
		t.Fatalf("Health = %v, %v", hs, err)
	}
	stats, err := d.client.SupervisionStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Nudges != 1 || stats.Tier2Calls < 1 || stats.Tier1["failing"] < 1 || !stats.Running {
		t.Errorf("stats = %+v", stats)
	}
	diags, err := d.client.Diagnoses(context.Background(), string(tk.ID), 10)
	if err != nil || len(diags) < 2 {
		t.Errorf("Diagnoses = %d events, %v; want the health changes and the nudge", len(diags), err)
	}

	off, offTask := startLoop(t, false)
	stopped := off.wait(t, offTask.ID, "stopped looping", func(t task.Task) bool { return t.Status != task.Running && t.Status != task.Queued })
	if stopped.Status == task.Completed {
		t.Fatalf("the unsupervised task completed; the script has no way out without the nudge")
	}
	on, offTokens := done.Usage.InputTokens+done.Usage.OutputTokens, stopped.Usage.InputTokens+stopped.Usage.OutputTokens
	t.Logf("tokens: supervised %d (completed after %d calls), unsupervised %d (%s after %d calls: %s); saved %d (%.0f%%)",
		on, done.Usage.Iterations, offTokens, stopped.Status, stopped.Usage.Iterations, stopped.CloseReason,
		offTokens-on, 100*float64(offTokens-on)/float64(offTokens))
	if on >= offTokens {
		t.Errorf("supervised %d tokens, unsupervised %d: supervision saved nothing", on, offTokens)
	}
}

// The manual nudge goes through the same door: it reaches the task as a
// nudge injection from the user.
func TestManualNudge(t *testing.T) {
	t.Parallel()
	d, tk := startLoop(t, false)
	d.wait(t, tk.ID, "ran the check", func(t task.Task) bool { return t.Usage.Iterations >= 1 })
	inj, err := d.client.Nudge(context.Background(), string(tk.ID), "Create VERSION first.")
	if err != nil {
		t.Fatal(err)
	}
	if inj.Kind != "nudge" || inj.Source != "user" {
		t.Errorf("injection = %+v, want a nudge from the user", inj)
	}
	done := d.wait(t, tk.ID, "completed", func(t task.Task) bool { return t.Status == task.Completed || t.Status.Terminal() })
	if done.Status != task.Completed {
		t.Fatalf("status %s (%s), want completed after the user's nudge", done.Status, done.CloseReason)
	}
}

// gitCommit commits files in the repository's checkout.
func gitCommit(tb testing.TB, dir string, files ...string) {
	tb.Helper()
	id := []string{"-c", "user.name=Test", "-c", "user.email=test@neuraphage.invalid", "-c", "commit.gpgsign=false"}
	for _, args := range [][]string{append([]string{"add"}, files...), append(id, "commit", "-q", "-m", "add "+strings.Join(files, ", "))} {
		if _, err := git.Run(context.Background(), dir, args...); err != nil {
			tb.Fatal(err)
		}
	}
}
