package cli

import (
	"context"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// doingNow says, per task of a listed page, what it is doing now: for a
// running task the Watcher's activity ("waiting on model 12 s"), else
// "working"; for a paused or waiting task the reason of its last change of
// status ("budget of $2.00 spent", the question). Two requests for the page,
// whatever its size; what cannot be learned is left out, never an error.
func doingNow(ctx context.Context, c *client.Client, ts []task.Summary) map[task.ID]string {
	out := map[task.ID]string{}
	var since time.Time
	running := false
	for _, t := range ts {
		switch t.Status {
		case task.Running:
			running = true
			out[t.ID] = "working"
		case task.Paused, task.Waiting:
			// The change to this status is the task's last update but for
			// its own clock's rounding: a second's margin.
			if u := t.UpdatedAt.Add(-time.Second); since.IsZero() || u.Before(since) {
				since = u
			}
		}
	}
	if running {
		if hs, err := c.SupervisionHealth(ctx, ""); err == nil {
			for _, h := range hs {
				if _, ok := out[h.TaskID]; ok && h.State == string(task.Running) && h.Activity != "" {
					out[h.TaskID] = h.Activity
				}
			}
		}
	}
	if since.IsZero() {
		return out
	}
	evs, err := c.Events(ctx, event.Query{Filter: event.Filter{Kinds: []string{string(event.KindTaskStatus)}}, Since: since, Limit: 100_000})
	if err != nil {
		return out
	}
	want := map[task.ID]task.Status{}
	for _, t := range ts {
		if t.Status == task.Paused || t.Status == task.Waiting {
			want[t.ID] = t.Status
		}
	}
	for _, e := range evs { // oldest first: the last match wins
		p, ok := e.Payload.(event.TaskStatus)
		if st, listed := want[e.TaskID]; ok && listed && p.To == st && p.Reason != "" {
			out[e.TaskID] = p.Reason
		}
	}
	return out
}
