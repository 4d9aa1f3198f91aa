package claude

import (
	"context"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TestFakeTurnEndSettlesObjects: the objects a turn's commands wrote (in
// the task's object directory) are in the repository's shared store when
// the turn's end is stored, while the CLI still runs, not only once it
// stops.
func TestFakeTurnEndSettlesObjects(t *testing.T) {
	t.Parallel()
	eng, _ := fakeEngine(t, "complete.jsonl", "object")
	tk := task.Task{ID: "t-settle1", Description: "hello task"}
	or := enginetest.NewObjectsRun(t, tk.ID)
	tk.Repo = or.Repo
	eng.o.Launcher = or.Launcher
	h := &enginetest.ObjectWatch{Host: enginetest.NewHost(tk), Shared: or.Shared}
	if o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: or.Repo, Branch: or.Branch, Host: h}); o.Status != engine.Completed {
		t.Fatalf("outcome = %+v", o)
	}
	h.Check(t, or)
}
