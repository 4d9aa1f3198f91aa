// Package fleet is the view model the dashboards share (the terminal UI and
// the web dashboard): each unfinished task's row kept current from the
// event stream, why it needs the user, and the order that puts those tasks
// first. It does no I/O; the front ends load it from the daemon's API and
// feed it the watch stream's events.
package fleet

import (
	"sort"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Row is one task of the fleet, kept current from the event stream.
type Row struct {
	Sum    task.Summary
	Health string
	// Doing is the running tool, "thinking", or "" when the task does
	// nothing; Since is when it began.
	Doing  string
	Since  time.Time
	Tokens int64
	Behind int
	// Attention says why the task needs the user; "" when it does not.
	// It is printable (words.Printable) and one line.
	Attention string
	// Reason is the last status change's reason (the question of a
	// waiting task, why a paused one paused).
	Reason string
	// Parked and Conflict are merge and rebase troubles not (yet)
	// reflected in the status.
	Parked, Conflict string
	WatcherPaused    bool
	// Rev grows whenever the row changes; a front end caches what it
	// drew of the row with the Rev it drew.
	Rev uint64
}

// computeAttention sets r.Attention from what is known of the task.
func (r *Row) computeAttention() {
	r.Attention = Attention(r.Sum.Status, r.Reason, r.WatcherPaused, r.Parked, r.Conflict)
	r.Rev++
}

// Attention says why a task needs the user: it waits for an answer, it is
// paused (by the Watcher, by its budget, or by the user), it failed, its
// merge is parked or its rebase conflicts; "" when it needs nothing.
func Attention(s task.Status, reason string, watcherPaused bool, parked, conflict string) string {
	a := ""
	switch s {
	case task.Waiting:
		a = "waiting for an answer"
		if reason != "" {
			a = "asks: " + reason
		}
	case task.Paused:
		switch {
		case watcherPaused:
			a = "paused by the Watcher"
		case strings.Contains(strings.ToLower(reason), "budget"):
			a = "paused by budget"
		default:
			a = "paused"
		}
		if reason != "" {
			a += ": " + reason
		}
	case task.Failed:
		a = "failed"
		if reason != "" {
			a += ": " + reason
		}
	}
	if a == "" && parked != "" {
		a = "merge parked: " + parked
	}
	if a == "" && conflict != "" {
		a = "rebase conflict: " + conflict
	}
	return words.Printable(words.OneLine(a))
}

// Fleet is the set of tasks a dashboard knows, by id, with a sorted,
// filtered order recomputed only when something it depends on changed.
// It is not safe for concurrent use.
type Fleet struct {
	Rows  map[task.ID]*Row
	order []*Row
	dirty bool
}

// New returns an empty fleet.
func New() *Fleet { return &Fleet{Rows: map[task.ID]*Row{}, dirty: true} }

// Load replaces the fleet with a listing and the Watcher's and the main
// watcher's views of it; reasons are the tasks' last status reasons.
func (f *Fleet) Load(list []task.Summary, health []api.TaskHealth, rb api.RebaseStatus, reasons map[task.ID]string) {
	f.Rows = make(map[task.ID]*Row, len(list))
	for _, s := range list {
		r := &Row{Sum: s, Tokens: s.Usage.InputTokens + s.Usage.OutputTokens, Reason: reasons[s.ID]}
		if r.Reason == "" && s.CloseReason != "" && finishedOrStopped(s.Status) {
			r.Reason = s.CloseReason
		}
		f.Rows[s.ID] = r
	}
	for _, h := range health {
		if r := f.Rows[h.TaskID]; r != nil {
			r.Health = h.Status
			if h.Ladder == "paused" {
				r.WatcherPaused = true
			}
			if h.Model != nil && r.Sum.Status == task.Running {
				r.Doing = "thinking"
			}
		}
	}
	f.ApplyRebase(rb)
}

// ApplyRebase sets every task's distance from main from the rebase status;
// a task it does not list is not behind.
func (f *Fleet) ApplyRebase(rb api.RebaseStatus) {
	for _, r := range f.Rows {
		r.Behind = 0
	}
	for _, t := range rb.Tasks {
		if r := f.Rows[t.TaskID]; r != nil {
			r.Behind = t.Behind
			if t.Forecast == "conflict" && len(t.Conflicts) > 0 {
				r.Conflict = strings.Join(t.Conflicts, ", ")
			}
		}
	}
	for _, r := range f.Rows {
		r.computeAttention()
	}
	f.dirty = true
}

func finishedOrStopped(s task.Status) bool {
	return s == task.Paused || s == task.Failed || s == task.Waiting || s.Terminal()
}

// Apply updates the fleet from one event. It reports whether the event
// names a task the fleet does not know (the caller fetches it and Puts
// it) and whether a row changed.
func (f *Fleet) Apply(e event.Event) (unknown, changed bool) {
	if e.TaskID == "" {
		return false, false
	}
	r := f.Rows[e.TaskID]
	if r == nil {
		return e.Kind == event.KindTaskCreated || e.Kind == event.KindTaskStatus, false
	}
	changed = true
	switch p := e.Payload.(type) {
	case event.TaskStatus:
		r.Sum.Status, r.Reason = p.To, p.Reason
		r.Sum.UpdatedAt = e.Time
		if p.To != task.Running {
			r.Doing = ""
		}
		if p.To != task.Paused {
			r.WatcherPaused = false
		}
		if p.To == task.Running {
			r.Doing, r.Since = "thinking", e.Time
		}
		f.dirty = true
	case event.TurnStarted:
		r.Doing, r.Since = "thinking", e.Time
	case event.ToolCall:
		r.Doing, r.Since = p.Name, e.Time
	case event.ToolResult:
		r.Doing, r.Since = "thinking", e.Time
	case event.Usage:
		r.Tokens, r.Sum.Usage.CostUSD = p.TotalTokens, p.TotalCostUSD
	case event.NeedsInput:
		r.Reason = p.Question
	case event.HealthCheck:
		r.Health = p.Status
	case event.WatcherPause:
		r.WatcherPaused, r.Reason = true, p.Diagnosis
	case event.MergeParked:
		r.Parked = p.Reason
		f.dirty = true
	case event.MergeLanded, event.MergeQueued:
		r.Parked = ""
		f.dirty = true
	case event.RebaseRequired:
		r.Behind = p.CommitsBehind
	case event.RebaseCompleted:
		r.Behind, r.Conflict = 0, ""
		f.dirty = true
	case event.RebaseConflict:
		r.Conflict = strings.Join(p.Files, ", ")
		f.dirty = true
	case event.PersonaEscalated:
		r.Sum.Persona = p.To
	default:
		changed = false
	}
	if changed {
		before := r.Attention
		r.computeAttention()
		if before != r.Attention {
			f.dirty = true
		}
	}
	return false, changed
}

// Put adds or replaces one task (one fetched after an event named it).
func (f *Fleet) Put(s task.Summary, reason string) *Row {
	r := f.Rows[s.ID]
	if r == nil {
		r = &Row{}
		f.Rows[s.ID] = r
	}
	r.Sum, r.Reason = s, reason
	r.Tokens = s.Usage.InputTokens + s.Usage.OutputTokens
	r.computeAttention()
	f.dirty = true
	return r
}

// Dirty reports whether the order may have changed since Visible last ran.
func (f *Fleet) Dirty() bool { return f.dirty }

// Visible returns the rows shown: those needing the user first, then by
// priority and age; finished tasks only with all; matching filter. The
// slice is the fleet's own, valid until the next call.
func (f *Fleet) Visible(all bool, filter string, now time.Time) []*Row {
	if !f.dirty {
		return f.order
	}
	f.order = f.order[:0]
	filter = strings.ToLower(filter)
	for _, r := range f.Rows {
		if !all && r.Sum.Status.Terminal() && !recentFailure(r, now) {
			continue
		}
		if filter != "" && !r.matches(filter) {
			continue
		}
		f.order = append(f.order, r)
	}
	sort.Slice(f.order, func(i, j int) bool { return Before(f.order[i], f.order[j]) })
	f.dirty = false
	return f.order
}

// Before is the fleet's order: the tasks that need the user first, then
// by priority, then the oldest first.
func Before(a, b *Row) bool {
	if (a.Attention != "") != (b.Attention != "") {
		return a.Attention != ""
	}
	if a.Sum.Priority != b.Sum.Priority {
		return a.Sum.Priority < b.Sum.Priority
	}
	if !a.Sum.CreatedAt.Equal(b.Sum.CreatedAt) {
		return a.Sum.CreatedAt.Before(b.Sum.CreatedAt)
	}
	return a.Sum.ID < b.Sum.ID
}

// FailedFor is how long a failed task stays in the fleet.
const FailedFor = 24 * time.Hour

func recentFailure(r *Row, now time.Time) bool {
	if r.Sum.Status != task.Failed {
		return false
	}
	at := r.Sum.UpdatedAt
	if r.Sum.FinishedAt != nil {
		at = *r.Sum.FinishedAt
	}
	return at.IsZero() || now.Sub(at) < FailedFor
}

func (r *Row) matches(filter string) bool {
	for _, s := range []string{string(r.Sum.ID), string(r.Sum.Status), r.Sum.Persona, r.Sum.Engine, r.Health, r.Sum.Description, r.Attention} {
		if strings.Contains(strings.ToLower(s), filter) {
			return true
		}
	}
	return false
}

// Touch makes Visible sort and filter again (the filter or the scope changed).
func (f *Fleet) Touch() { f.dirty = true }
