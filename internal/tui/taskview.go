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
	lines []string
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
