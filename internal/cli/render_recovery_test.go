package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// retryRun is a model call retried twice, then answered.
func retryRun() []event.Event {
	return []event.Event{
		{ID: 40, Time: at(1), Kind: event.KindTurnStarted, TaskID: "t-4k2x9", Payload: event.TurnStarted{Turn: 2, Model: "claude-sonnet-4-5"}},
		{ID: 41, Time: at(2), Kind: event.KindModelRetry, TaskID: "t-4k2x9", Payload: event.ModelRetry{Turn: 2, Attempt: 2, MaxAttempts: 5,
			Class: "overloaded", Status: 529, Message: "anthropic: 529 Overloaded", WaitMs: 4000}},
		{ID: 42, Time: at(6), Kind: event.KindModelRetry, TaskID: "t-4k2x9", Payload: event.ModelRetry{Turn: 2, Attempt: 3, MaxAttempts: 5,
			Class: "timeout", Message: "stream idle for 30s", WaitMs: 1500}},
	}
}

// The timeline (`events`, `events -f`) shows each retry as it happens, as
// one readable line.
func TestModelRetryInTheTimeline(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := newLiveWriter(&b, time.UTC, false)
	for _, e := range retryRun() {
		w.Print(e)
	}
	want := `40     09:00:01.000  t-4k2x9  agent.turn.started turn 2 started (claude-sonnet-4-5)
41     09:00:02.000  t-4k2x9  agent.model_retry  turn 2: model call failed (529 overloaded); retry 2 of 5 in 4s
42     09:00:06.000  t-4k2x9  agent.model_retry  turn 2: model call failed (timeout); retry 3 of 5 in 1.5s
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}

// `task attach` shows each retry in the run, with the failure's message.
func TestModelRetryInTheTranscript(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := newLiveWriter(&b, time.UTC, true)
	for _, e := range retryRun() {
		w.Print(e)
	}
	want := `── turn 2 · claude-sonnet-4-5 · 09:00:01 ──
⟳ model call failed (529 overloaded); retry 2 of 5 in 4s
    anthropic: 529 Overloaded
⟳ model call failed (timeout); retry 3 of 5 in 1.5s
    stream idle for 30s
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

// Messages a task never saw and a full disk read as sentences.
func TestDescribeRecoveryEvents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    event.Payload
		want string
	}{
		{event.TaskReturned{Status: task.Completed, InjectionIDs: []int64{3, 4}, Kinds: []string{"message", "nudge"}, Texts: []string{"stop: do not merge", "x"}},
			"2 message(s) returned undelivered (#3, #4): the task completed first: stop: do not merge"},
		{event.DiskFull{Err: "database or disk is full (13)", Tasks: []task.ID{"t-4k2x9"}},
			"the data disk is full: the run waits in memory and retries its write until space returns (database or disk is full (13))"},
		{event.DiskFull{Recovered: true, Tasks: []task.ID{"t-4k2x9", "t-5m3y0"}, WaitedMs: 95_000},
			"space returned after 1m35s: 2 task(s) that waited went on"},
	} {
		if got := describeEvent(event.Event{Payload: tc.p}); got != tc.want {
			t.Errorf("describeEvent(%T) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
