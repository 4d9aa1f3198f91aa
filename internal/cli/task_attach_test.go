package cli

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestAttachStop(t *testing.T) {
	const id task.ID = "t-aaaaa"
	ev := func(eid int64, to task.Status) event.Event {
		return event.Event{ID: eid, TaskID: id, Payload: event.TaskStatus{To: to}}
	}
	for _, c := range []struct {
		name        string
		e           event.Event
		interactive bool
		want        bool
	}{
		{"past pause is replayed", ev(5, task.Paused), false, false},
		{"past question is replayed", ev(5, task.Waiting), false, false},
		{"past end ends it", ev(5, task.Completed), false, true},
		{"live pause", ev(11, task.Paused), false, true},
		{"live merging", ev(11, task.Merging), false, true},
		{"live failure", ev(11, task.Failed), true, true},
		{"live question, piped stdin", ev(11, task.Waiting), false, true},
		{"live question, terminal takes the answer", ev(11, task.Waiting), true, false},
		{"live running", ev(11, task.Running), false, false},
		{"another task", event.Event{ID: 11, TaskID: "t-bbbbb", Payload: event.TaskStatus{To: task.Paused}}, false, false},
	} {
		if got := attachStop(id, 10, c.interactive)(c.e); got != c.want {
			t.Errorf("%s: stop = %v, want %v", c.name, got, c.want)
		}
	}
}
