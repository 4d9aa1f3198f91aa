package daemon_test

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// A session attached as its task is created, on a daemon that has only
// just started (an empty log, the sessions' loop perhaps not yet
// subscribed while the task runs), misses none of the task's activity.
// Before the loop followed the log from its start, it saw nothing and the
// task ran on unwatched.
func TestWatcherOnAFreshDaemonMissesNothing(t *testing.T) {
	t.Parallel()
	d := startWatch(t)
	tk := d.create(t, api.CreateTaskRequest{Description: "write the login handler", Persona: "junior", Watch: []string{"security"}})
	if done := d.finish(t, tk.ID); done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("status %s (%s)", done.Status, done.CloseReason)
	}
	if len(d.events(t, tk.ID, event.KindWatchInterjected)) == 0 {
		t.Error("no interjection")
	}
}
