package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// syncerTasks are the seed's three auth tasks (E, F, G) and the one that
// starts after the learning (H).
var syncerTasks = []demoTask{
	{"Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, 2},
	{"Build login form with token refresh", []string{"auth", "ui", "jwt"}, 2},
	{"Write integration tests for auth flow", []string{"auth", "tests", "jwt"}, 2},
}

var syncerLate = demoTask{"Add a logout button that drops the JWT", []string{"auth", "ui", "jwt"}, 2}

// demoSyncer runs the three auth tasks of seed 004: E finds out the hard
// way that the project's JWT library rejects tokens without an iat claim;
// the Syncer extracts that from E's failing and then passing check, the
// syncer persona relays it to F and G (blocking: it interrupts them), and
// they write their tokens right the first time. H, started after, gets it
// in its first context. It returns the tasks' IDs.
func demoSyncer(ctx context.Context, c *client.Client, repo string, out io.Writer) ([]task.ID, error) {
	stream, err := c.Watch(ctx, event.Query{AfterID: -1})
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	fmt.Fprintf(out, "\nThe Syncer: what one task learns reaches the others while they run\n")
	names := map[task.ID]string{}
	var ids []task.ID
	create := func(dt demoTask, name string) error {
		prio := dt.prio
		t, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: dt.desc, Tags: dt.tags, Persona: "junior", Priority: &prio, Repo: repo})
		if err != nil {
			return err
		}
		names[t.ID] = name
		ids = append(ids, t.ID)
		fmt.Fprintf(out, "• created %s (%s) %q [%s]\n", t.ID, name, t.Description, strings.Join(dt.tags, ", "))
		return nil
	}
	for i, dt := range syncerTasks {
		if err := create(dt, string(rune('E'+i))); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	line := func(id task.ID, s string) {
		fmt.Fprintf(out, "  %5.2fs  %s %s  %s\n", time.Since(start).Seconds(), id, names[id], s)
	}
	failed := map[task.ID]int{}
	landed := map[task.ID]bool{}
	late := false
	for len(landed) < len(ids) {
		e, err := stream.Next()
		if err != nil {
			return nil, fmt.Errorf("watching the demo: %w", err)
		}
		if names[e.TaskID] == "" {
			continue
		}
		switch p := e.Payload.(type) {
		case event.ToolCall:
			line(e.TaskID, fmt.Sprintf("→ %s %s", p.Name, truncate(string(p.Args), 70)))
		case event.ToolResult:
			if p.Error {
				failed[e.TaskID]++
			}
			line(e.TaskID, describeEvent(e))
		case event.TaskStatus:
			line(e.TaskID, describeEvent(e))
			if p.To.Terminal() && p.To != task.Completed {
				return nil, fmt.Errorf("task %s ended %s: %s", names[e.TaskID], p.To, p.Reason)
			}
		case event.SyncMessageSent:
			line(e.TaskID, describeEvent(e))
			if !late && names[e.TaskID] == "F" {
				// The learning is known now: a task created from here on
				// starts informed.
				late = true
				if err := create(syncerLate, "H"); err != nil {
					return nil, err
				}
			}
		case event.WorktreeRemoved:
			line(e.TaskID, describeEvent(e))
			landed[e.TaskID] = true
		case event.LearningExtracted, event.SyncDelivered, event.SyncIgnored, event.Learning, event.Interrupted,
			event.Delivered, event.FileChanged, event.MergeLanded, event.MergeConflicted:
			line(e.TaskID, describeEvent(e))
		}
	}
	for _, id := range ids[1:] {
		if n := failed[id]; n > 0 {
			fmt.Fprintf(out, "  %s %s hit %d failing call(s) before the learning reached it\n", id, names[id], n)
		} else {
			fmt.Fprintf(out, "  %s %s never ran into the missing iat claim: no failing call\n", id, names[id])
		}
	}
	ms, err := c.SyncMessages(ctx, "", 20)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "\nWhat the Syncer relayed (neuraphage sync messages):\n")
	for _, m := range ms {
		after := "not delivered"
		if m.DeliveredAt != nil {
			after = "delivered after " + m.DeliveredAt.Sub(m.CreatedAt).Round(time.Millisecond).String()
		}
		fmt.Fprintf(out, "  #%d  %s → %s  %-8s  %-9s  %s  %s\n", m.LearningID, m.From, m.To, m.Urgency, m.DecidedBy, after, truncate(m.Message, 60))
	}
	return ids, nil
}
