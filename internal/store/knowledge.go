package store

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Learning is something a task found out that others may need: one entry
// of the knowledge store. The same discovery made twice (by one task or
// two) is one learning with several sources.
type Learning struct {
	ID int64 `json:"id"`
	// TaskID is the first source: the task that found it out.
	TaskID task.ID `json:"task_id"`
	// Kind is how it was found: explicit (record_learning),
	// error-resolution, discovery, statement or llm.
	Kind string `json:"kind"`
	// Summary is required.
	Summary string   `json:"summary"`
	Detail  string   `json:"detail,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	// Files are the worktree-relative paths it is about.
	Files     []string  `json:"files,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when a source was last added.
	UpdatedAt time.Time `json:"updated_at"`
	// Sources are the tasks that found it out, first one first.
	Sources []LearningSource `json:"sources,omitempty"`
	// Merged, on a learning just recorded, says it joined an existing one
	// (the same normalized text, or similar enough) instead of adding one.
	Merged bool `json:"merged,omitempty"`
	// Repeat, on a learning just recorded, says the task was a source of
	// it already: nothing was added.
	Repeat bool `json:"-"`
	// Turn is the source's turn, for the events of a recording.
	Turn int `json:"-"`
	// Similarity, on a learning to record, is how similar (0 to 1, see
	// knowledge.Similarity) an existing learning must be to take it as a
	// further source; zero means DefaultSimilarity.
	Similarity float64 `json:"-"`
}

// DefaultSimilarity is the similarity at which two learnings are one.
const DefaultSimilarity = 0.8

// LearningSource is one task that found a learning out.
type LearningSource struct {
	TaskID task.ID   `json:"task_id"`
	Kind   string    `json:"kind"`
	At     time.Time `json:"at"`
}

// LearningQuery selects learnings.
type LearningQuery struct {
	// TaskID selects the learnings one task is a source of.
	TaskID task.ID
	// Search selects learnings matching these words (full-text, any word;
	// the best matches first instead of the oldest).
	Search string
	// AfterID selects learnings with a larger ID: a cursor, as IDs are
	// never reused.
	AfterID int64
	// Limit caps the result; 0 means no cap.
	Limit int
}

// SyncState is where a sync message is.
type SyncState string

// The states of a sync message. Held waits for the recipient's rate
// limit or cooldown; queued is in the recipient's injection queue;
// delivered reached its model; ignored was dropped (Note says why);
// blocked was stopped by a SyncerRelay hook.
const (
	SyncHeld      SyncState = "held"
	SyncQueued    SyncState = "queued"
	SyncDelivered SyncState = "delivered"
	SyncIgnored   SyncState = "ignored"
	SyncBlocked   SyncState = "blocked"
)

// SyncMessage is one learning relayed (or about to be) to one task. A
// learning reaches a task at most once: (LearningID, TaskID) is unique.
type SyncMessage struct {
	ID         int64   `json:"id"`
	LearningID int64   `json:"learning_id"`
	From       task.ID `json:"from"`
	TaskID     task.ID `json:"task_id"`
	// Urgency is blocking, helpful or fyi; Relevance high, medium or low;
	// Score the deterministic relevance (0 to 1).
	Urgency   string  `json:"urgency"`
	Relevance string  `json:"relevance,omitempty"`
	Score     float64 `json:"score"`
	Message   string  `json:"message"`
	// Reason says why this task: the relationships that held and who
	// decided (the syncer persona, the deterministic rules, a hook).
	Reason      string     `json:"reason,omitempty"`
	DecidedBy   string     `json:"decided_by"`
	State       SyncState  `json:"state"`
	Note        string     `json:"note,omitempty"`
	InjectionID int64      `json:"injection_id,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	QueuedAt    *time.Time `json:"queued_at,omitempty"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

// SyncQuery selects sync messages, oldest first (newest first with
// Newest).
type SyncQuery struct {
	TaskID      task.ID // the recipient
	From        task.ID // the source
	LearningID  int64
	InjectionID int64
	States      []SyncState
	Limit       int
	Newest      bool
}
