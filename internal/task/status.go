package task

import (
	"fmt"
	"strings"
	"time"
)

// Status is where a task is in its life.
type Status string

// The statuses. Completed, Failed and Cancelled are terminal.
const (
	Queued    Status = "queued"    // waiting for a slot (and for its blockers)
	Running   Status = "running"   // an engine is driving it
	Waiting   Status = "waiting"   // the agent asked the user something and waits for the answer
	Paused    Status = "paused"    // stopped at a boundary, conversation kept; resume continues it
	Merging   Status = "merging"   // the agent finished; its work is committed and waits in the merge queue
	Completed Status = "completed" // finished successfully
	Failed    Status = "failed"    // finished unsuccessfully
	Cancelled Status = "cancelled" // stopped by the user
)

// AllStatuses lists every status in life order.
func AllStatuses() []Status {
	return []Status{Queued, Running, Waiting, Paused, Merging, Completed, Failed, Cancelled}
}

// ParseStatus returns the status named s, or an error listing the valid names.
func ParseStatus(s string) (Status, error) {
	for _, st := range AllStatuses() {
		if string(st) == strings.ToLower(strings.TrimSpace(s)) {
			return st, nil
		}
	}
	names := make([]string, 0, 8)
	for _, st := range AllStatuses() {
		names = append(names, string(st))
	}
	return "", &InvalidError{Field: "status", Msg: fmt.Sprintf("%q is not a status; want one of %s", s, strings.Join(names, ", "))}
}

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Active reports whether a task in s is in flight (it holds or may soon hold an engine).
func (s Status) Active() bool { return s == Running || s == Waiting }

// transitions is the one table of legal moves. Anything not listed is refused.
var transitions = map[Status][]Status{
	Queued:  {Running, Paused, Cancelled, Failed},
	Running: {Waiting, Paused, Merging, Completed, Failed, Cancelled, Queued},
	Waiting: {Running, Queued, Paused, Completed, Failed, Cancelled},
	// A paused task's work may be put in the merge queue (merge enqueue).
	Paused: {Queued, Merging, Cancelled, Failed},
	// A merging task lands (completed), is sent back to its agent with a
	// conflict or a failed gate (queued), or is parked for its user (paused).
	Merging: {Completed, Queued, Paused, Cancelled, Failed},
}

// CanTransition reports whether from → to is legal.
func CanTransition(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// TransitionError reports an illegal change of status.
type TransitionError struct {
	ID       ID
	From, To Status
}

func (e *TransitionError) Error() string {
	if e.From.Terminal() {
		return fmt.Sprintf("task %s is %s; it cannot become %s", e.ID, e.From, e.To)
	}
	return fmt.Sprintf("task %s cannot go from %s to %s", e.ID, e.From, e.To)
}

// Transition moves t to status to at time now, recording reason, or returns a
// *TransitionError and leaves t unchanged. It keeps the timestamps consistent:
// StartedAt is set on the first move to Running, FinishedAt on reaching a terminal
// status, and a move back to Queued clears nothing but the close reason.
func (t *Task) Transition(to Status, reason string, now time.Time) error {
	if !CanTransition(t.Status, to) {
		return &TransitionError{ID: t.ID, From: t.Status, To: to}
	}
	now = now.UTC()
	t.Status = to
	t.UpdatedAt = now
	t.CloseReason = reason
	t.Closing = false
	switch {
	case to == Running:
		if t.StartedAt == nil {
			t.StartedAt = &now
		}
		t.ResumePending = false
	case to.Terminal():
		t.FinishedAt = &now
		t.ResumePending = false
	}
	return nil
}

// FinishedError refuses an operation on a task that has finished, or whose
// run has ended with a result being recorded (Closing).
type FinishedError struct {
	ID      ID
	Status  Status
	Closing bool
}

func (e *FinishedError) Error() string {
	if e.Closing {
		return fmt.Sprintf("task %s has finished its work (its result is being recorded) and takes no more messages", e.ID)
	}
	return fmt.Sprintf("task %s is %s and takes no more messages", e.ID, e.Status)
}
