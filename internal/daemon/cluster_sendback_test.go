package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// sendBackScript: the task writes shared.txt and waits for the gate; sent
// back by the merge queue, it does as the message says (git merge main,
// keep both sides, commit) and completes again.
func sendBackScript(gate string) string {
	first := fmt.Sprintf("printf 'by the task\\n' > shared.txt; while [ ! -e %s ]; do sleep 0.05; done", gate)
	resolve := "git merge main >/dev/null 2>&1; printf 'by main\\nby the task\\n' > shared.txt; git add shared.txt && " +
		"git -c user.name=Agent -c user.email=agent@neuraphage.invalid -c commit.gpgsign=false commit -q -m 'merge main, keep both'"
	return fmt.Sprintf(`conversations:
  - name: resolve
    match: {user: "shared task", after: "could not land"}
    steps:
      - tool_calls: [{name: bash, input: {command: %q}}]
      - tool_calls: [{name: complete_task, input: {summary: "conflict resolved"}}]
  - name: first
    match: {user: "shared task"}
    steps:
      - tool_calls: [{name: bash, input: {command: %q}}]
      - tool_calls: [{name: complete_task, input: {summary: "shared.txt written"}}]
`, resolve, first)
}

// A remote task whose branch conflicts with main when it lands is sent
// back by the merge queue; it runs again on a worker with the send-back
// message in its conversation, resolves the conflict as told, and lands
// with both sides.
func TestClusterConflictSentBackToRemoteTask(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(shortTemp(t), "gate")
	d := startCluster(t, sendBackScript(gate), nil)
	w := d.worker(t, 1)
	id := d.create(t, api.CreateTaskRequest{Description: "shared task"}).ID
	d.waitEvent(t, id, event.KindToolCall, gated)
	if err := os.WriteFile(filepath.Join(d.repo, "shared.txt"), []byte("by main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCommit(t, d.repo, "shared.txt")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d.waitEvent(t, id, event.KindMergeConflicted, func(e event.Event) bool { return e.Payload.(event.MergeConflicted).SentBack })
	done := d.finish(t, id)
	if done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	as := d.assignments(t, id)
	if len(as) < 2 || as[len(as)-1].Worker != w {
		t.Errorf("assignments %+v: want the task run again on %s after the send-back", as, w)
	}
	resolve := d.requests("resolve")
	if len(resolve) == 0 {
		t.Fatal("the task never ran with the send-back message in its conversation")
	}
	seen := false
	for _, m := range resolve[0].Messages {
		seen = seen || strings.Contains(m.Text(), "could not land") && strings.Contains(m.Text(), "shared.txt")
	}
	if !seen {
		t.Error("the send-back message does not name the conflicting file")
	}
	if got, want := d.onMain(t, "shared.txt"), "by main\nby the task\n"; got != want {
		t.Errorf("shared.txt on main = %q, want %q", got, want)
	}
	if n := len(d.events(t, id, event.KindMergeConflicted)); n != 1 {
		t.Errorf("%d merge conflicts, want the one send-back", n)
	}
}
