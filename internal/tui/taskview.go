package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/fleet"
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
	s := fleet.Describe(e)
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

// render draws the task view in w×h.
func (v *taskView) render(r *row, w, h int) []string {
	t := v.detail.Task
	head := []string{
		fmt.Sprintf("%s  %s  %s/%s  %s", v.id, t.Status, or(t.Engine, "-"), or(t.Persona, "-"), words.Printable(t.Description)),
	}
	if r != nil && r.Attention != "" {
		head = append(head, "! "+r.Attention)
	}
	wt := "worktree: " + or(v.wt.State, "none")
	if v.wt.Path != "" {
		wt += "  " + words.Printable(v.wt.Path) + "  branch " + words.Printable(v.wt.Branch)
	}
	if v.wtErr != "" {
		wt += "  (" + words.Printable(v.wtErr) + ")"
	}
	if r != nil {
		if r.Behind > 0 {
			wt += fmt.Sprintf("  %d behind main", r.Behind)
		}
		if r.Parked != "" {
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
