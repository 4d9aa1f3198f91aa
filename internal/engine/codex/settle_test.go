package codex

import (
	"context"
	"path/filepath"
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
	f := newFake(t)
	t.Setenv("FAKE_CODEX_OBJECT", "1")
	abs, err := filepath.Abs(filepath.Join("testdata", "completes-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_CODEX_FIXTURE", abs)
	tk := task.Task{ID: "t-settle1", Description: "make task: create made.txt"}
	or := enginetest.NewObjectsRun(t, tk.ID)
	tk.Repo = or.Repo
	f.eng.o.Launcher = or.Launcher
	h := &enginetest.ObjectWatch{Host: enginetest.NewHost(tk), Shared: or.Shared}
	if o := f.eng.Run(context.Background(), engine.Run{Task: tk, Dir: f.work, Branch: or.Branch, Host: h}); o.Status != engine.Completed {
		t.Fatalf("outcome = %+v", o)
	}
	h.Check(t, or)
}
