// Package task is the task model: what a task is, its statuses and the one table of
// legal transitions between them, its identifiers, and the readiness rules for
// dependencies between tasks.
//
// The package is pure: it performs no I/O, starts no goroutines and holds no state.
// The store persists tasks, the daemon changes them, and every change of status goes
// through Transition so that an illegal move is an error and never silently applied.
package task

import (
	"fmt"
	"strings"
	"time"
)

// Task is one unit of work run by an agent in its own worktree.
type Task struct {
	ID          ID       `json:"id"`
	Description string   `json:"description"`
	Context     string   `json:"context,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Priority orders dispatch: 0 is the most urgent, 4 the least.
	Priority int    `json:"priority"`
	ParentID ID     `json:"parent_id,omitempty"`
	Persona  string `json:"persona,omitempty"`
	// PersonaVia says how the persona was chosen: explicit, router,
	// fallback, hook, escalated; empty until the task first starts.
	PersonaVia string `json:"persona_via,omitempty"`
	Engine     string `json:"engine,omitempty"`
	Model      string `json:"model,omitempty"`
	Repo       string `json:"repo,omitempty"`
	Branch     string `json:"branch,omitempty"`
	Worktree   string `json:"worktree,omitempty"`
	// Workflow, on a workflow task, is its phases; each runs as child
	// tasks. Phase, on such a child, says which phase it runs.
	Workflow []Phase   `json:"workflow,omitempty"`
	Phase    *PhaseRef `json:"phase,omitempty"`
	// NoSupervision keeps the Watcher away from the task (created with
	// --no-supervision): no health checks, nudges, escalations or pauses.
	NoSupervision bool `json:"no_supervision,omitempty"`
	// Manifest is the task's sandbox manifest, evaluated when it first
	// starts; nil before.
	Manifest *Manifest `json:"manifest,omitempty"`

	Status Status `json:"status"`
	// ResumePending marks a task that was running when the daemon stopped: the
	// executor resumes it from its last persisted turn instead of starting afresh.
	ResumePending bool `json:"resume_pending,omitempty"`
	// Closing marks a running task whose run ended with a result (completed
	// or failed) that is being recorded: it takes no more messages, and the
	// store sets it only while its queue is empty (store.UpdateTask), so no
	// message slips in between the last look at the queue and the end. Every
	// change of status clears it.
	Closing bool `json:"closing,omitempty"`
	// CloseReason says why the task reached a terminal status, or why it is paused.
	CloseReason string `json:"close_reason,omitempty"`

	Budget Budget `json:"budget"`
	Usage  Usage  `json:"usage"`

	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// Budget limits what a task may spend. A zero field means no limit of that kind.
type Budget struct {
	MaxIterations int     `json:"max_iterations,omitempty"`
	MaxTokens     int64   `json:"max_tokens,omitempty"`
	MaxCostUSD    float64 `json:"max_cost_usd,omitempty"`
}

// Usage is what a task has spent so far.
type Usage struct {
	Iterations   int     `json:"iterations"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Limits for the fields a user types.
const (
	MinPriority       = 0
	MaxPriority       = 4
	MaxDescriptionLen = 10_000
	MaxTags           = 32
	MaxTagLen         = 64
)

// Spec is what a user gives when creating a task; New turns it into a Task.
type Spec struct {
	Description string
	Context     string
	Tags        []string
	Priority    int
	ParentID    ID
	Persona     string
	Engine      string
	Model       string
	Repo        string
	Budget      Budget
	Workflow    []Phase
	Phase       *PhaseRef
	// Hold creates the task paused, so it does not run until resumed.
	Hold bool
	// NoSupervision keeps the Watcher away from the task.
	NoSupervision bool
}

// New validates spec and returns the task it describes, created at now with id.
func New(id ID, spec Spec, now time.Time) (Task, error) {
	desc := strings.TrimSpace(spec.Description)
	switch {
	case desc == "":
		return Task{}, &InvalidError{Field: "description", Msg: "must not be empty"}
	case len(desc) > MaxDescriptionLen:
		return Task{}, &InvalidError{Field: "description", Msg: fmt.Sprintf("is %d bytes; at most %d", len(desc), MaxDescriptionLen)}
	case spec.Priority < MinPriority || spec.Priority > MaxPriority:
		return Task{}, &InvalidError{Field: "priority", Msg: fmt.Sprintf("is %d; want %d (most urgent) to %d", spec.Priority, MinPriority, MaxPriority)}
	case spec.Budget.MaxIterations < 0 || spec.Budget.MaxTokens < 0 || spec.Budget.MaxCostUSD < 0:
		return Task{}, &InvalidError{Field: "budget", Msg: "must not be negative"}
	}
	tags, err := NormalizeTags(spec.Tags)
	if err != nil {
		return Task{}, err
	}
	if err := checkWorkflow(spec.Workflow); err != nil {
		return Task{}, err
	}
	st := Queued
	reason := ""
	if spec.Hold {
		st = Paused
		reason = "created with --no-start"
	}
	now = now.UTC()
	return Task{
		ID:            id,
		Description:   desc,
		Context:       spec.Context,
		Tags:          tags,
		Priority:      spec.Priority,
		ParentID:      spec.ParentID,
		Persona:       spec.Persona,
		Engine:        spec.Engine,
		Model:         spec.Model,
		Repo:          spec.Repo,
		Status:        st,
		CloseReason:   reason,
		Budget:        spec.Budget,
		Workflow:      spec.Workflow,
		Phase:         spec.Phase,
		CreatedAt:     now,
		NoSupervision: spec.NoSupervision,
		UpdatedAt:     now,
	}, nil
}

// NormalizeTags trims, lower-cases and de-duplicates tags, keeping their first order.
func NormalizeTags(in []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, t := range in {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || seen[t] {
			continue
		}
		if len(t) > MaxTagLen || strings.ContainsAny(t, ", \t\n") {
			return nil, &InvalidError{Field: "tags", Msg: fmt.Sprintf("tag %q must be at most %d characters with no spaces or commas", t, MaxTagLen)}
		}
		seen[t] = true
		out = append(out, t)
	}
	if len(out) > MaxTags {
		return nil, &InvalidError{Field: "tags", Msg: fmt.Sprintf("%d tags; at most %d", len(out), MaxTags)}
	}
	return out, nil
}

// InvalidError reports a task field that fails validation.
type InvalidError struct {
	Field string
	Msg   string
}

func (e *InvalidError) Error() string { return e.Field + " " + e.Msg }
