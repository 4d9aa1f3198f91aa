package store

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Transition is the mutation that moves a task to status to and records
// task.status. Everything that changes a status uses it.
func Transition(to task.Status, reason string, now time.Time) Mutation {
	return func(t *task.Task) ([]event.Event, error) {
		from := t.Status
		if err := t.Transition(to, reason, now); err != nil {
			return nil, err
		}
		return []event.Event{event.New(now, t.ID, event.TaskStatus{From: from, To: to, Reason: reason})}, nil
	}
}
