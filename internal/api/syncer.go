package api

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Learning is one entry of the knowledge store (GET /v1/knowledge,
// /v1/knowledge/{id}): something a task found out, with the tasks that
// found it (one learning, many sources) and how often it was relayed.
type Learning struct {
	ID        int64            `json:"id"`
	Kind      string           `json:"kind"` // explicit | error-resolution | discovery | statement | llm
	Summary   string           `json:"summary"`
	Detail    string           `json:"detail,omitempty"`
	Tags      []string         `json:"tags,omitempty"`
	Files     []string         `json:"files,omitempty"`
	Sources   []LearningSource `json:"sources"`
	CreatedAt time.Time        `json:"created_at"`
	UpdatedAt time.Time        `json:"updated_at"`
	// Relayed lists the sync messages that carried it (GET
	// /v1/knowledge/{id} only).
	Relayed []SyncMessage `json:"relayed,omitempty"`
}

// LearningSource is one task that found a learning out.
type LearningSource struct {
	TaskID task.ID   `json:"task_id"`
	Kind   string    `json:"kind"`
	At     time.Time `json:"at"`
}

// SyncMessage is one learning relayed to one task (GET /v1/sync/messages):
// what was said, to whom, why, and when it was delivered.
type SyncMessage struct {
	ID          int64      `json:"id"`
	LearningID  int64      `json:"learning_id"`
	From        task.ID    `json:"from"`
	To          task.ID    `json:"to"`
	Urgency     string     `json:"urgency"` // blocking | helpful | fyi
	Relevance   string     `json:"relevance,omitempty"`
	Score       float64    `json:"score"`
	Message     string     `json:"message"`
	Reason      string     `json:"reason,omitempty"`
	DecidedBy   string     `json:"decided_by"` // persona | rules | hook
	State       string     `json:"state"`      // held | queued | delivered | ignored | blocked
	Note        string     `json:"note,omitempty"`
	InjectionID int64      `json:"injection_id,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	QueuedAt    *time.Time `json:"queued_at,omitempty"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

// SyncerStats is the Syncer's part of GET /v1/supervision/stats.
type SyncerStats struct {
	Enabled      bool      `json:"enabled"`
	Running      bool      `json:"running"`
	LastSweep    time.Time `json:"last_sweep,omitzero"`
	Sweeps       uint64    `json:"sweeps"`
	Observations uint64    `json:"observations"`
	// Learnings counts learnings stored by kind (merged ones included);
	// Merged those that joined a known learning.
	Learnings map[string]uint64 `json:"learnings"`
	Merged    uint64            `json:"merged"`
	Evaluated uint64            `json:"evaluated"`
	Sent      uint64            `json:"sent"`
	Held      uint64            `json:"held"`
	Delivered uint64            `json:"delivered"`
	// Ignored counts relays not made, by reason.
	Ignored map[string]uint64 `json:"ignored"`
	Briefed uint64            `json:"briefed"` // new tasks given learnings in their first context
	// PersonaCalls, PersonaFailures: the syncer persona's decisions, and
	// those that failed or replied unusably (the deterministic rules
	// decided instead: degraded). ExtractCalls: the turn-end model pass.
	PersonaCalls    uint64  `json:"persona_calls"`
	PersonaFailures uint64  `json:"persona_failures"`
	ExtractCalls    uint64  `json:"extract_calls"`
	ExtractFailures uint64  `json:"extract_failures"`
	ModelTokens     int64   `json:"model_tokens"`
	ModelUSD        float64 `json:"model_usd"`
	Degraded        bool    `json:"degraded"`
	DegradedReason  string  `json:"degraded_reason,omitempty"`
	Panics          uint64  `json:"panics"`
	Restarts        uint64  `json:"restarts"`
}
