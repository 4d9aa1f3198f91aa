package daemon_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// overlapScript: two tasks write the same new file with different
// contents. Each task's second model call is held until both were told,
// so the notice is delivered at the boundary right after it: the task's
// third call is the "-told" conversation when it heard, and completes
// with "never told" when it did not.
const overlapScript = `
conversations:
  - name: alpha-told
    match: {user: "alpha task", after: "is changing files you changed too"}
    steps:
      - tool_calls: [{name: complete_task, input: {summary: "told of the overlap"}}]
  - name: alpha
    match: {user: "alpha task"}
    steps:
      - tool_calls: [{name: write_file, input: {path: shared.txt, content: "alpha\n"}}]
      - tool_calls: [{name: read_file, input: {path: shared.txt}}]
      - tool_calls: [{name: complete_task, input: {summary: "never told"}}]
  - name: beta-told
    match: {user: "beta task", after: "is changing files you changed too"}
    steps:
      - tool_calls: [{name: complete_task, input: {summary: "told of the overlap"}}]
  - name: beta
    match: {user: "beta task"}
    steps:
      - tool_calls: [{name: write_file, input: {path: shared.txt, content: "beta\n"}}]
      - tool_calls: [{name: read_file, input: {path: shared.txt}}]
      - tool_calls: [{name: complete_task, input: {summary: "never told"}}]
`

// Two running tasks write the same lines of the same file: the radar
// forecasts a conflict, both hear of it once (helpful, from the other
// task) at their next boundary, and the matrix shows the pair.
func TestOverlapBothTasksToldOfAConflict(t *testing.T) {
	t.Parallel()
	d := startModel(t, overlapScript, "", func(c *config.Config) {
		c.Supervision.Watcher.Enabled = false
		c.Supervision.Syncer.Enabled = false
		c.Supervision.Sessions.Enabled = false
		c.Merge.Auto = false
	})
	relA, relB := d.model.Hold("alpha", 1), d.model.Hold("beta", 1)
	t.Cleanup(relA)
	t.Cleanup(relB)
	a := d.create(t, api.CreateTaskRequest{Description: "the alpha task", Persona: "junior"})
	b := d.create(t, api.CreateTaskRequest{Description: "the beta task", Persona: "junior"})
	told := func(id, other task.ID) event.OverlapNotice {
		e := d.waitEvent(t, id, event.KindOverlapNotice, nil)
		p := e.Payload.(event.OverlapNotice)
		if p.Other != string(other) || p.Urgency != "helpful" || p.Forecast != "conflict" || p.Injection == 0 {
			t.Errorf("notice to %s = %+v, want a helpful conflict notice about %s", id, p, other)
		}
		return p
	}
	told(a.ID, b.ID)
	told(b.ID, a.ID)
	ps, err := d.client.Overlap(context.Background(), string(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Forecast != "conflict" || strings.Join(ps[0].Files, ",") != "shared.txt" {
		t.Fatalf("overlap = %+v, want one conflicting pair on shared.txt", ps)
	}
	relA()
	relB()
	for _, id := range []task.ID{a.ID, b.ID} {
		if done := d.finish(t, id); done.Status != task.Completed {
			t.Fatalf("%s: %s (%s)", id, done.Status, done.CloseReason)
		}
		if n := len(d.events(t, id, event.KindOverlapNotice)); n != 1 {
			t.Errorf("%s got %d overlap notices, want 1", id, n)
		}
	}
	for _, conv := range []string{"alpha-told", "beta-told"} {
		rs := d.requests(conv)
		if len(rs) == 0 {
			d.dump(t)
			t.Fatalf("%s: the notice never reached the task at its next boundary", conv)
		}
		if last := rs[0].Messages[len(rs[0].Messages)-1]; !strings.Contains(last.Text(), "sync-message") {
			t.Errorf("%s's request ends with %q, want the sync message", conv, last.Text())
		}
	}
}

// overlapApartScript: each task writes a file of its own, and then changes
// parser.go in a different place (alpha after its one line, beta before
// it). The second model call is held as in overlapScript.
const overlapApartScript = `
conversations:
  - name: alpha-told
    match: {user: "alpha task", after: "is changing files you changed too"}
    steps:
      - tool_calls: [{name: complete_task, input: {summary: "told of the overlap"}}]
  - name: alpha
    match: {user: "alpha task"}
    steps:
      - tool_calls:
          - {name: write_file, input: {path: alpha.txt, content: "alpha\n"}}
          - {name: edit_file, input: {path: parser.go, old: "package parser\n", new: "package parser\n\n// alpha was here\n"}}
      - tool_calls: [{name: read_file, input: {path: parser.go}}]
      - tool_calls: [{name: complete_task, input: {summary: "never told"}}]
  - name: beta-told
    match: {user: "beta task", after: "is changing files you changed too"}
    steps:
      - tool_calls: [{name: complete_task, input: {summary: "told of the overlap"}}]
  - name: beta
    match: {user: "beta task"}
    steps:
      - tool_calls:
          - {name: write_file, input: {path: beta.txt, content: "beta\n"}}
          - {name: edit_file, input: {path: parser.go, old: "package parser\n", new: "// Package parser, by beta.\npackage parser\n"}}
      - tool_calls: [{name: read_file, input: {path: parser.go}}]
      - tool_calls: [{name: complete_task, input: {summary: "never told"}}]
`

// Two running tasks change files of their own (nobody is told of those)
// and the same file in different places: each hears once, fyi, with a
// clean forecast naming only the shared file, at its next boundary; the
// matrix shows their changed lines apart.
func TestOverlapSameFileApartFYI(t *testing.T) {
	t.Parallel()
	d := startModel(t, overlapApartScript, "", func(c *config.Config) {
		c.Supervision.Watcher.Enabled = false
		c.Supervision.Syncer.Enabled = false
		c.Supervision.Sessions.Enabled = false
		c.Merge.Auto = false
	})
	relA, relB := d.model.Hold("alpha", 1), d.model.Hold("beta", 1)
	t.Cleanup(relA)
	t.Cleanup(relB)
	a := d.create(t, api.CreateTaskRequest{Description: "the alpha task", Persona: "junior"})
	b := d.create(t, api.CreateTaskRequest{Description: "the beta task", Persona: "junior"})
	for _, c := range []struct{ id, other task.ID }{{a.ID, b.ID}, {b.ID, a.ID}} {
		p := d.waitEvent(t, c.id, event.KindOverlapNotice, nil).Payload.(event.OverlapNotice)
		// The radar handles a task's changes in order: alpha.txt and
		// beta.txt came before parser.go and made no pair.
		if p.Other != string(c.other) || p.Urgency != "fyi" || p.Forecast != "clean" || strings.Join(p.Files, ",") != "parser.go" {
			t.Errorf("notice to %s = %+v, want an fyi, clean notice about %s on parser.go only", c.id, p, c.other)
		}
	}
	ps, err := d.client.Overlap(context.Background(), string(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Forecast != "clean" || strings.Join(ps[0].Files, ",") != "parser.go" || len(ps[0].Lines) != 1 || ps[0].Lines[0].Intersect {
		t.Fatalf("overlap = %+v, want one clean pair on parser.go with its changed lines apart", ps)
	}
	relA()
	relB()
	for _, id := range []task.ID{a.ID, b.ID} {
		if done := d.finish(t, id); done.Status != task.Completed {
			t.Fatalf("%s: %s (%s)", id, done.Status, done.CloseReason)
		}
		if n := len(d.events(t, id, event.KindOverlapNotice)); n != 1 {
			t.Errorf("%s got %d overlap notices, want 1", id, n)
		}
	}
	for _, conv := range []string{"alpha-told", "beta-told"} {
		rs := d.requests(conv)
		if len(rs) == 0 {
			d.dump(t)
			t.Fatalf("%s: the notice never reached the task at its next boundary", conv)
		}
		if last := rs[0].Messages[len(rs[0].Messages)-1]; !strings.Contains(last.Text(), `urgency="fyi"`) || !strings.Contains(last.Text(), "merge cleanly") {
			t.Errorf("%s's request ends with %q, want the fyi sync message", conv, last.Text())
		}
	}
}
