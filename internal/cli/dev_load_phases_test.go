package cli

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The phases come from the events' times: two tasks with known timelines,
// and one that never landed (left out).
func TestPhasesOf(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ev := func(id task.ID, s float64, p event.Payload) event.Event { return event.New(at(s), id, p) }
	status := func(to task.Status) event.Payload { return event.TaskStatus{From: task.Paused, To: to} }
	evs := []event.Event{
		ev("t-a", 0, status(task.Queued)), ev("t-b", 0, status(task.Queued)), ev("t-c", 0, status(task.Queued)),
		ev("t-a", 0.5, status(task.Running)),
		ev("t-a", 0.8, event.PersonaSelected{}), // before its worktree
		ev("t-a", 1, event.WorktreeCreated{}), ev("t-a", 1, event.TurnStarted{Turn: 1}),
		ev("t-a", 1.5, event.TurnStarted{Turn: 2}),
		ev("t-b", 1.2, event.WorktreeCreated{}), ev("t-b", 1.3, event.PersonaSelected{}), // after it
		ev("t-b", 1.5, event.TurnStarted{Turn: 1}),
		ev("t-c", 1.2, event.WorktreeCreated{}), ev("t-c", 1.5, event.TurnStarted{Turn: 1}),
		ev("t-a", 2, event.Completed{}), ev("t-a", 3, status(task.Completed)),
		ev("t-b", 4, event.Completed{}), ev("t-b", 5, status(task.Completed)),
		ev("t-c", 4, event.Completed{}),
	}
	ph := phasesOf(evs, 100*time.Millisecond)
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	if ph.Tasks != 2 {
		t.Fatalf("%d tasks measured, want 2 (t-c never landed)", ph.Tasks)
	}
	near("worktree wait p50", ph.WorktreeWait.P50, 1)
	near("worktree wait p90", ph.WorktreeWait.P90, 1.3) // t-b's persona came after its worktree
	near("worktree wait max", ph.WorktreeWait.Max, 1.3)
	near("worktree wait mean", ph.WorktreeWait.Mean, 1.15)
	near("agent work p50", ph.AgentWork.P50, 1)
	near("agent work max", ph.AgentWork.Max, 2.7)
	near("land wait p99", ph.LandWait.P99, 1)
	near("total max", ph.Total.Max, 5)
	// t-a: 1 s of agent work for 2 calls of 100 ms; t-b: 2.7 s for 1.
	near("overhead p50", ph.OverheadPerCall.P50, 400)
	near("overhead max", ph.OverheadPerCall.Max, 2600)
	// In the loop: t-a over [1, 2], t-b over [1.5, 4]; the run spans [0, 5].
	if ph.InLoopPeak != 2 {
		t.Errorf("peak in the loop %d, want 2", ph.InLoopPeak)
	}
	near("mean in the loop", ph.InLoopMean, (1+2.5)/5.0)

	var buf bytes.Buffer
	writeLoadPhases(&buf, &ph, 2)
	for _, want := range []string{"worktree and persona", "agent work", "waiting to land", "overhead per model call", "2 at most, 0.7 on average"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("phases report lacks %q:\n%s", want, buf.String())
		}
	}
}

// A task leaving the loop at the moment another enters is not two at once.
func TestConcurrencyLeavingFirst(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	s := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	peak, mean := concurrency([]loopEdge{{s(1), 1}, {s(2), -1}, {s(2), 1}, {s(3), -1}}, s(0), s(4))
	if peak != 1 || mean != 0.5 {
		t.Errorf("peak %d, mean %v; want 1 and 0.5", peak, mean)
	}
}
