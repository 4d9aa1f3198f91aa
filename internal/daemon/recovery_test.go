package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// The reproduction, end to end: a "stop: do not merge" sent while
// the task's final model call (the one that answers complete_task) is in
// flight is acknowledged, reaches the model before the task may end, and
// nothing is merged. Before, the task completed and landed on main and the
// message stayed queued on the completed task for good.
func TestStopSentDuringTheFinalTurnIsSeenBeforeTheMerge(t *testing.T) {
	t.Parallel()
	script := `
conversations:
  - name: final
    match: {user: "tidy the parser"}
    steps:
      - tool_calls: [{name: write_file, input: {path: parser.go, content: "package parser // tidy\n"}}]
      - tool_calls: [{name: complete_task, input: {summary: "tidied"}}]
      - tool_calls: [{name: ask_user, input: {question: "You said not to merge: keep the work on its branch?"}}]
`
	d := startModel(t, script, "", nil)
	release := d.model.Hold("final", 1)
	defer release()
	tk := d.create(t, api.CreateTaskRequest{Description: "tidy the parser", Persona: "mid"})
	testkit.WaitFor(t, "the final model call", func() bool { return len(d.requests("final")) == 2 })

	ctx := context.Background()
	m, err := d.client.SendMessage(ctx, string(tk.ID), api.SendRequest{Text: "stop: do not merge"})
	if err != nil {
		t.Fatalf("send during the final turn: %v", err)
	}
	release()
	got := d.wait(t, tk.ID, "stopped", func(t task.Task) bool {
		return t.Status == task.Waiting || t.Status == task.Merging || t.Status.Terminal()
	})
	if got.Status != task.Waiting {
		t.Fatalf("the task went on to %s (%s); want it waiting on the question its model asked after reading the message", got.Status, got.CloseReason)
	}
	reqs := d.requests("final")
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	var last string
	for _, msg := range reqs[2].Messages {
		if msg.Role == llm.RoleUser {
			last = msg.Text()
		}
	}
	if !strings.Contains(last, "stop: do not merge") || !strings.Contains(last, "You called complete_task") {
		t.Errorf("the model's last user message = %q; want the stop and the note that the task has not ended", last)
	}
	det, err := d.client.GetTask(ctx, string(tk.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(det.Pending) != 0 || len(det.Returned) != 0 {
		t.Errorf("message #%d: pending %+v, returned %+v; want it delivered", m.ID, det.Pending, det.Returned)
	}
	if evs := d.events(t, tk.ID, event.KindMergeQueued); len(evs) != 0 {
		t.Errorf("the task's work was queued for merge: %+v", evs)
	}
	gctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := git.Run(gctx, d.repo, "rev-list", "--count", "main")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.TrimSpace(out); n != "1" {
		t.Errorf("main has %s commits; want the first only", n)
	}
}
