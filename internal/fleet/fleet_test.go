package fleet

import (
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestAttention(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status           task.Status
		reason           string
		watcher          bool
		parked, conflict string
		want             string
	}{
		{task.Running, "", false, "", "", ""},
		{task.Waiting, "", false, "", "", "waiting for an answer"},
		{task.Waiting, "which colour?\nblue or red", false, "", "", "asks: which colour? blue or red"},
		{task.Paused, "stuck", true, "", "", "paused by the Watcher: stuck"},
		{task.Paused, "daily budget reached", false, "", "", "paused by budget: daily budget reached"},
		{task.Failed, "\x1b[31mboom", false, "", "", `failed: \x1b[31mboom`},
		{task.Running, "", false, "the gate failed", "a.go", "merge parked: the gate failed"},
		{task.Running, "", false, "", "a.go", "rebase conflict: a.go"},
	} {
		if got := Attention(c.status, c.reason, c.watcher, c.parked, c.conflict); got != c.want {
			t.Errorf("Attention(%s, %q) = %q, want %q", c.status, c.reason, got, c.want)
		}
	}
}

// TestOrderAndApply: the tasks that need the user come first; an event of
// an unknown task is reported; a change bumps the row's Rev.
func TestOrderAndApply(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	f := New()
	f.Load([]task.Summary{
		{ID: "t-a", Status: task.Running, Priority: 1, CreatedAt: t0},
		{ID: "t-b", Status: task.Running, Priority: 2, CreatedAt: t0},
		{ID: "t-c", Status: task.Queued, Priority: 2, CreatedAt: t0.Add(time.Second)},
	}, nil, api.RebaseStatus{}, nil)
	order := func() (ids []task.ID) {
		for _, r := range f.Visible(false, "", t0) {
			ids = append(ids, r.Sum.ID)
		}
		return ids
	}
	if got := order(); len(got) != 3 || got[0] != "t-a" || got[1] != "t-b" || got[2] != "t-c" {
		t.Fatalf("order %v, want by priority then age", got)
	}
	rev := f.Rows["t-c"].Rev
	unknown, changed := f.Apply(event.New(t0, "t-c", event.TaskStatus{From: task.Queued, To: task.Waiting, Reason: "which file?"}))
	if unknown || !changed || f.Rows["t-c"].Rev == rev {
		t.Errorf("Apply: unknown %v changed %v rev %d→%d", unknown, changed, rev, f.Rows["t-c"].Rev)
	}
	if got := order(); got[0] != "t-c" {
		t.Errorf("order %v: the waiting task should come first", got)
	}
	if unknown, _ := f.Apply(event.New(t0, "t-new", event.TaskCreated{})); !unknown {
		t.Error("an event of a task the fleet does not know is not reported")
	}
	if _, changed := f.Apply(event.New(t0, "t-a", event.Text{Text: "hello"})); changed {
		t.Error("a text delta changed the row")
	}
}
