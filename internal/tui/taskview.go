package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// taskView is the open task: its conversation and what happened to it,
// followed live, and the diff of its worktree on demand.
type taskView struct {
	id     task.ID
	detail api.TaskDetail
	wt     api.Worktree
	wtErr  string
	// merge is the task's newest merge-queue entry, nil when none.
	merge *api.MergeEntry
	// overlaps are the overlap radar's pairs of the task (running only).
	overlaps []api.OverlapPair
	lines    []string
	// scroll is how many lines above the bottom the view shows; 0 follows
	// the stream.
	scroll   int
	showDiff bool
	diff     []string
	loading  bool
}

// add appends an event's lines.
func (v *taskView) add(e event.Event) {
	s := describe(e)
	if s == "" {
		return
	}
	for _, l := range strings.Split(s, "\n") {
		v.lines = append(v.lines, l)
	}
	if v.scroll > 0 {
		v.scroll += strings.Count(s, "\n") + 1
	}
}

// describe is an event as the conversation shows it; "" for events it
// leaves out. Every text from the task or the model is escaped.
func describe(e event.Event) string {
	p := words.Printable
	ts := e.Time.Format("15:04:05")
	switch x := e.Payload.(type) {
	case event.TurnStarted:
		return fmt.Sprintf("── turn %d · %s %s · %s", x.Turn, p(x.Engine), p(x.Model), ts)
	case event.Text:
		var b strings.Builder
		for i, l := range strings.Split(strings.TrimRight(x.Text, "\n"), "\n") {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString("  " + p(l))
		}
		return b.String()
	case event.ToolCall:
		return "→ " + p(x.Name) + " " + p(words.Clip(words.OneLine(string(x.Args)), 200))
	case event.ToolResult:
		state := "ok"
		if x.Error {
			state = "error"
		}
		s := fmt.Sprintf("← %s %s (%d bytes)", p(x.Name), state, x.Size)
		if x.Preview != "" {
			s += "\n    " + p(words.Clip(words.OneLine(x.Preview), 200))
		}
		return s
	case event.TaskMessage:
		kind := or(x.Kind, "message")
		urgent := ""
		if x.Urgent {
			urgent = " urgent"
		}
		return fmt.Sprintf("✉ %s%s #%d from %s: %s", p(kind), urgent, x.InjectionID, p(x.Source), p(words.OneLine(x.Text)))
	case event.Delivered:
		return fmt.Sprintf("✉ delivered %v at turn %d", x.InjectionIDs, x.Turn)
	case event.NeedsInput:
		return "? asks: " + p(x.Question)
	case event.Completed:
		return "✓ completed: " + p(x.Summary)
	case event.Failed:
		return "✗ failed: " + p(words.OneLine(x.Reason))
	case event.TaskStatus:
		s := fmt.Sprintf("· %s → %s", x.From, x.To)
		if x.Reason != "" {
			s += ": " + p(words.OneLine(x.Reason))
		}
		return s
	case event.HealthCheck:
		if x.Diagnosis == "" {
			return ""
		}
		s := fmt.Sprintf("⚕ Watcher: %s (%.0f%%, ladder %s): %s", x.Status, x.Confidence*100, x.Ladder, p(words.OneLine(x.Diagnosis)))
		for _, ev := range x.Evidence {
			s += "\n    evidence: " + fmt.Sprintf("step %d %s ", ev.Step, p(ev.Kind)) + p(words.Clip(words.OneLine(ev.What), 200))
		}
		return s
	case event.WatcherNudge:
		return "⚕ Watcher nudged: " + p(words.OneLine(x.Message))
	case event.WatcherPause:
		return "⚕ Watcher paused it: " + p(words.OneLine(x.Diagnosis))
	case event.WatcherAbort:
		return "⚕ Watcher aborted it: " + p(words.OneLine(x.Diagnosis))
	case event.SyncMessageSent:
		return fmt.Sprintf("⇄ sync in (%s, from %s): %s", x.Urgency, p(x.From), p(words.OneLine(x.Message)))
	case event.LearningExtracted:
		return "⇄ sync out: learning " + p(words.OneLine(x.Summary))
	case event.MergeQueued, event.MergeStarted, event.MergeLanded, event.MergeParked, event.MergeConflicted, event.MergeGateFailed,
		event.MergeOrdered, event.MergeYielded, event.OverlapFound, event.OverlapForecast, event.OverlapNotice,
		event.RebaseRequired, event.RebaseCompleted, event.RebaseConflict, event.CommitMade, event.PersonaEscalated:
		return fmt.Sprintf("· %s %s", e.Kind, p(words.Clip(words.OneLine(fmt.Sprintf("%+v", x)), 200)))
	}
	return ""
}

// render draws the task view in w×h.
func (v *taskView) render(r *row, w, h int) []string {
	t := v.detail.Task
	head := []string{
		fmt.Sprintf("%s  %s  %s/%s  %s", v.id, t.Status, or(t.Engine, "-"), or(t.Persona, "-"), words.Printable(t.Description)),
	}
	if r != nil && r.attention != "" {
		head = append(head, "! "+r.attention)
	}
	wt := "worktree: " + or(v.wt.State, "none")
	if v.wt.Path != "" {
		wt += "  " + words.Printable(v.wt.Path) + "  branch " + words.Printable(v.wt.Branch)
	}
	if v.wtErr != "" {
		wt += "  (" + words.Printable(v.wtErr) + ")"
	}
	if r != nil {
		if r.behind > 0 {
			wt += fmt.Sprintf("  %d behind main", r.behind)
		}
		if r.parked != "" {
			wt += "  merge parked"
		}
	}
	head = append(head, wt)
	if v.merge != nil {
		head = append(head, "merge: "+mergeLine(*v.merge).String())
	}
	head = append(head, overlapLines(v.id, v.overlaps)...)
	if len(v.detail.Pending) > 0 {
		head = append(head, fmt.Sprintf("%d message(s) waiting for delivery", len(v.detail.Pending)))
	}
	for i, l := range head {
		head[i] = ansi.Truncate(l, w, "…")
	}
	head = append(head, strings.Repeat("─", max(0, w)))
	body := v.lines
	if v.showDiff {
		body = v.diff
	}
	if v.loading && len(body) == 0 {
		body = []string{"loading…"}
	}
	room := max(0, h-len(head))
	end := max(0, len(body)-v.scroll)
	start := max(0, end-room)
	out := head
	for _, l := range body[start:end] {
		out = append(out, ansi.Truncate(l, w, "…"))
	}
	return out
}

// maxOverlapRows bounds the overlap rows the task view's header shows.
const maxOverlapRows = 4

// overlapLines is the task's row of the overlap matrix: for each other
// running task it shares files with, the forecast of merging the two and
// the files (conflicting ones first when the forecast is a conflict).
func overlapLines(id task.ID, ps []api.OverlapPair) []string {
	if len(ps) == 0 {
		return nil
	}
	p := words.Printable
	out := []string{fmt.Sprintf("overlaps: %d running task(s) changed files this one changed", len(ps))}
	for i, o := range ps {
		if i == maxOverlapRows {
			out = append(out, fmt.Sprintf("  … and %d more (neuraphage overlap)", len(ps)-i))
			break
		}
		other := o.B
		if other == string(id) {
			other = o.A
		}
		fc := o.Forecast
		if len(o.Conflicts) > 0 {
			fc += " in " + strings.Join(o.Conflicts, ", ")
		}
		row := fmt.Sprintf("  ⇄ %-8s %-28s files: %s", p(other), p(fc), p(strings.Join(o.Files, ", ")))
		if l := o.LinesSummary(); l != "" {
			row += " · " + p(l)
		}
		out = append(out, row)
	}
	return out
}

// aboutOther reports whether e, another task's event, is about task id's
// overlap with it.
func aboutOther(e event.Event, id task.ID) bool {
	switch x := e.Payload.(type) {
	case event.OverlapFound:
		return x.Other == string(id)
	case event.OverlapForecast:
		return x.Other == string(id)
	}
	return false
}
