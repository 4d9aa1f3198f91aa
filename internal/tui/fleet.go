package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// row is one task of the fleet view, kept current from the event stream.
type row struct {
	sum    task.Summary
	health string
	// doing is the running tool, "thinking", or "" when the task does
	// nothing; since is when it began.
	doing  string
	since  time.Time
	tokens int64
	behind int
	// attention says why the task needs the user; "" when it does not.
	attention string
	// reason is the last status change's reason (the question of a
	// waiting task, why a paused one paused).
	reason string
	// parked and conflict are merge and rebase troubles not (yet)
	// reflected in the status.
	parked, conflict string
	watcherPaused    bool

	// line caches the rendered row; "" when it must be rendered again.
	line      string
	lineWidth int
	lineAge   string
	// styledFor is the line styledOut (with styledKind) was made from.
	styledFor, styledOut string
	styledKind           int
}

// computeAttention sets r.attention from what is known of the task.
func (r *row) computeAttention() {
	a := ""
	switch r.sum.Status {
	case task.Waiting:
		a = "waiting for an answer"
		if r.reason != "" {
			a = "asks: " + r.reason
		}
	case task.Paused:
		switch {
		case r.watcherPaused:
			a = "paused by the Watcher"
		case strings.Contains(strings.ToLower(r.reason), "budget"):
			a = "paused by budget"
		default:
			a = "paused"
		}
		if r.reason != "" {
			a += ": " + r.reason
		}
	case task.Failed:
		a = "failed"
		if r.reason != "" {
			a += ": " + r.reason
		}
	}
	if a == "" && r.parked != "" {
		a = "merge parked: " + r.parked
	}
	if a == "" && r.conflict != "" {
		a = "rebase conflict: " + r.conflict
	}
	r.attention = words.Printable(words.OneLine(a))
	r.line = ""
}

// fleet is the set of tasks the TUI knows, by id, with a sorted, filtered
// order recomputed only when something it depends on changed.
type fleet struct {
	rows  map[task.ID]*row
	order []*row
	dirty bool
}

func newFleet() *fleet { return &fleet{rows: map[task.ID]*row{}, dirty: true} }

// load replaces the fleet with a listing and the Watcher's and the main
// watcher's views of it.
func (f *fleet) load(list []task.Summary, health []api.TaskHealth, rb api.RebaseStatus, reasons map[task.ID]string) {
	f.rows = make(map[task.ID]*row, len(list))
	for _, s := range list {
		r := &row{sum: s, tokens: s.Usage.InputTokens + s.Usage.OutputTokens, reason: reasons[s.ID]}
		if r.reason == "" && s.CloseReason != "" && finishedOrStopped(s.Status) {
			r.reason = s.CloseReason
		}
		f.rows[s.ID] = r
	}
	for _, h := range health {
		if r := f.rows[h.TaskID]; r != nil {
			r.health = h.Status
			if h.Ladder == "paused" {
				r.watcherPaused = true
			}
			if h.Model != nil && r.sum.Status == task.Running {
				r.doing = "thinking"
			}
		}
	}
	f.applyRebase(rb)
}

// applyRebase sets every task's distance from main from the rebase status;
// a task it does not list is not behind.
func (f *fleet) applyRebase(rb api.RebaseStatus) {
	for _, r := range f.rows {
		r.behind = 0
	}
	for _, t := range rb.Tasks {
		if r := f.rows[t.TaskID]; r != nil {
			r.behind = t.Behind
			if t.Forecast == "conflict" && len(t.Conflicts) > 0 {
				r.conflict = strings.Join(t.Conflicts, ", ")
			}
		}
	}
	for _, r := range f.rows {
		r.computeAttention()
	}
	f.dirty = true
}

func finishedOrStopped(s task.Status) bool {
	return s == task.Paused || s == task.Failed || s == task.Waiting || s.Terminal()
}

// apply updates the fleet from one event. It reports whether the event
// names a task the fleet does not know (the caller fetches it).
func (f *fleet) apply(e event.Event) (unknown bool) {
	if e.TaskID == "" {
		return false
	}
	r := f.rows[e.TaskID]
	if r == nil {
		return e.Kind == event.KindTaskCreated || e.Kind == event.KindTaskStatus
	}
	changed := true
	switch p := e.Payload.(type) {
	case event.TaskStatus:
		r.sum.Status, r.reason = p.To, p.Reason
		r.sum.UpdatedAt = e.Time
		if p.To != task.Running {
			r.doing = ""
		}
		if p.To != task.Paused {
			r.watcherPaused = false
		}
		if p.To == task.Running {
			r.doing, r.since = "thinking", e.Time
		}
		f.dirty = true
	case event.TurnStarted:
		r.doing, r.since = "thinking", e.Time
	case event.ToolCall:
		r.doing, r.since = p.Name, e.Time
	case event.ToolResult:
		r.doing, r.since = "thinking", e.Time
	case event.Usage:
		r.tokens, r.sum.Usage.CostUSD = p.TotalTokens, p.TotalCostUSD
	case event.NeedsInput:
		r.reason = p.Question
	case event.HealthCheck:
		r.health = p.Status
	case event.WatcherPause:
		r.watcherPaused, r.reason = true, p.Diagnosis
	case event.MergeParked:
		r.parked = p.Reason
		f.dirty = true
	case event.MergeLanded, event.MergeQueued:
		r.parked = ""
		f.dirty = true
	case event.RebaseRequired:
		r.behind = p.CommitsBehind
	case event.RebaseCompleted:
		r.behind, r.conflict = 0, ""
		f.dirty = true
	case event.RebaseConflict:
		r.conflict = strings.Join(p.Files, ", ")
		f.dirty = true
	case event.PersonaEscalated:
		r.sum.Persona = p.To
	default:
		changed = false
	}
	if changed {
		before := r.attention
		r.computeAttention()
		if before != r.attention {
			f.dirty = true
		}
	}
	return false
}

// put adds or replaces one task (one fetched after an event named it).
func (f *fleet) put(s task.Summary, reason string) {
	r := f.rows[s.ID]
	if r == nil {
		r = &row{}
		f.rows[s.ID] = r
	}
	r.sum, r.reason = s, reason
	r.tokens = s.Usage.InputTokens + s.Usage.OutputTokens
	r.computeAttention()
	f.dirty = true
}

// visible returns the rows shown: those needing the user first, then by
// priority and age; finished tasks only with all; matching filter.
func (f *fleet) visible(all bool, filter string, now time.Time) []*row {
	if !f.dirty {
		return f.order
	}
	f.order = f.order[:0]
	filter = strings.ToLower(filter)
	for _, r := range f.rows {
		if !all && r.sum.Status.Terminal() && !recentFailure(r, now) {
			continue
		}
		if filter != "" && !r.matches(filter) {
			continue
		}
		f.order = append(f.order, r)
	}
	sort.Slice(f.order, func(i, j int) bool {
		a, b := f.order[i], f.order[j]
		if (a.attention != "") != (b.attention != "") {
			return a.attention != ""
		}
		if a.sum.Priority != b.sum.Priority {
			return a.sum.Priority < b.sum.Priority
		}
		if !a.sum.CreatedAt.Equal(b.sum.CreatedAt) {
			return a.sum.CreatedAt.Before(b.sum.CreatedAt)
		}
		return a.sum.ID < b.sum.ID
	})
	f.dirty = false
	return f.order
}

// failedFor is how long a failed task stays in the fleet view.
const failedFor = 24 * time.Hour

func recentFailure(r *row, now time.Time) bool {
	if r.sum.Status != task.Failed {
		return false
	}
	at := r.sum.UpdatedAt
	if r.sum.FinishedAt != nil {
		at = *r.sum.FinishedAt
	}
	return at.IsZero() || now.Sub(at) < failedFor
}

func (r *row) matches(filter string) bool {
	for _, s := range []string{string(r.sum.ID), string(r.sum.Status), r.sum.Persona, r.sum.Engine, r.health, r.sum.Description, r.attention} {
		if strings.Contains(strings.ToLower(s), filter) {
			return true
		}
	}
	return false
}

// render draws the row at width w; the cache holds unless the row changed
// or the clock moved the age it shows.
func (r *row) render(w int, now time.Time) string {
	age := ""
	if r.doing != "" {
		age = " " + shortAge(now.Sub(r.since))
	}
	if r.line != "" && r.lineWidth == w && r.lineAge == age {
		return r.line
	}
	mark := " "
	if r.attention != "" {
		mark = "!"
	}
	doing := r.doing
	if doing != "" {
		doing += age
	}
	cost := fmt.Sprintf("$%.2f", r.sum.Usage.CostUSD)
	behind := ""
	if r.behind > 0 {
		behind = fmt.Sprintf("↓%d", r.behind)
	}
	var s string
	if w >= 120 {
		s = fmt.Sprintf("%s %-8s %-9s %-7s %-10s %-10s %-16s %7s %7s %-4s %s", mark, r.sum.ID, r.sum.Status,
			clip(r.sum.Engine, 7), clip(r.sum.Persona, 10), clip(r.health, 10), clip(words.Printable(doing), 16),
			shortTokens(r.tokens), cost, behind, words.Printable(or(r.attention, r.sum.Description)))
	} else {
		s = fmt.Sprintf("%s %-8s %-8s %-9s %-12s %6s %-3s %s", mark, r.sum.ID, clip(string(r.sum.Status), 8),
			clip(r.health, 9), clip(words.Printable(doing), 12), cost, behind, words.Printable(or(r.attention, r.sum.Description)))
	}
	s = ansi.Truncate(s, w, "…")
	r.line, r.lineWidth, r.lineAge = s, w, age
	return s
}

func fleetHeader(w int) string {
	if w >= 120 {
		return ansi.Truncate(fmt.Sprintf("  %-8s %-9s %-7s %-10s %-10s %-16s %7s %7s %-4s %s", "ID", "STATUS", "ENGINE", "PERSONA", "HEALTH", "DOING", "TOKENS", "COST", "BHND", "ATTENTION / TASK"), w, "")
	}
	return ansi.Truncate(fmt.Sprintf("  %-8s %-8s %-9s %-12s %6s %-3s %s", "ID", "STATUS", "HEALTH", "DOING", "COST", "BH", "ATTENTION / TASK"), w, "")
}

func clip(s string, n int) string { return ansi.Truncate(s, n, "…") }

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func shortAge(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}

func shortTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
