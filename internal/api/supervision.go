package api

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TaskHealth is the Watcher's view of one task (GET /v1/supervision/health).
type TaskHealth struct {
	TaskID task.ID `json:"task_id"`
	// State is the task's status as the Watcher last saw it (running,
	// paused, waiting, queued).
	State string `json:"state,omitempty"`
	// Status is healthy, struggling, stuck or runaway for a running task;
	// for a task not running, its state (paused, waiting, queued), with no
	// score. Unknown for a task the Watcher has not seen; unsupervised for
	// a task created with --no-supervision.
	Status string `json:"status"`
	// Activity says in words what the task waits on: "waiting on model
	// 95 s, attempt 2 of 5", "paused", "waiting for input", "queued".
	Activity string `json:"activity,omitempty"`
	// Model is the model call in progress, absent when none.
	Model      *ModelCall `json:"model,omitempty"`
	Confidence float64    `json:"confidence"`
	Diagnosis  string     `json:"diagnosis,omitempty"`
	Check      string     `json:"check,omitempty"`
	Tier       int        `json:"tier,omitempty"`
	// Ladder is the intervention step reached: none, hint, warning,
	// critical, escalated, paused or aborted.
	Ladder string `json:"ladder"`
	// Unheeded counts nudges that no progress followed.
	Unheeded  int       `json:"unheeded"`
	LastCheck time.Time `json:"last_check,omitzero"`
	// The window's counters (the window spans pauses, answers and
	// daemon restarts).
	Steps               int              `json:"steps"`
	StepsSinceProgress  int              `json:"steps_since_progress"`
	TokensSinceProgress int64            `json:"tokens_since_progress"`
	USDSinceProgress    float64          `json:"usd_since_progress"`
	LastProgress        time.Time        `json:"last_progress,omitzero"`
	Evidence            []event.Evidence `json:"evidence,omitempty"`
}

// ModelCall is a model call in progress: waiting for its reply, or
// retried after failed attempts.
type ModelCall struct {
	Turn int `json:"turn"`
	// Since is when its first attempt started; WaitingSecs how long ago.
	Since       time.Time `json:"since"`
	WaitingSecs float64   `json:"waiting_secs"`
	// Attempt is the attempt in progress (1 until a retry); MaxAttempts is
	// known once the call has been retried.
	Attempt     int `json:"attempt"`
	MaxAttempts int `json:"max_attempts,omitempty"`
	// LastError is why the last attempt failed.
	LastError string `json:"last_error,omitempty"`
}

// SupervisionStats are the Watcher's counters since the daemon started
// (GET /v1/supervision/stats).
type SupervisionStats struct {
	Enabled bool `json:"enabled"`
	// Running is false when the Watcher's loop is not running (disabled,
	// or between a crash and its restart).
	Running      bool      `json:"running"`
	Started      time.Time `json:"started,omitzero"`
	LastCycle    time.Time `json:"last_cycle,omitzero"`
	Cycles       uint64    `json:"cycles"`
	Observations uint64    `json:"observations"`
	Watched      int       `json:"watched"` // tasks with a window now
	// Tier1 counts findings by check; Tier2Calls the persona's judgements,
	// Tier2Failures the calls that failed or replied unusably (each one
	// puts the Watcher in degraded mode, tier 1 alone, until a call works).
	Tier1         map[string]uint64 `json:"tier1"`
	Tier2Calls    uint64            `json:"tier2_calls"`
	Tier2Failures uint64            `json:"tier2_failures"`
	// Tier2Tokens and Tier2USD are what the judgements cost (on the
	// watcher persona's tier); they are not charged to the tasks judged.
	Tier2Tokens    int64   `json:"tier2_tokens"`
	Tier2USD       float64 `json:"tier2_usd"`
	Degraded       bool    `json:"degraded"`
	DegradedReason string  `json:"degraded_reason,omitempty"`
	DegradedSecs   float64 `json:"degraded_secs"`
	Nudges         uint64  `json:"nudges"`
	Escalations    uint64  `json:"escalations"`
	Pauses         uint64  `json:"pauses"`
	Aborts         uint64  `json:"aborts"`
	HookBlocks     uint64  `json:"hook_blocks"`
	// Panics counts evaluations of one task that panicked (recovered; the
	// others went on); Restarts counts restarts of the loop itself.
	Panics   uint64 `json:"panics"`
	Restarts uint64 `json:"restarts"`
	// Syncer is the Syncer's counters, nil when it is not built.
	Syncer *SyncerStats `json:"syncer,omitempty"`
}

// NudgeRequest is the body of POST /v1/tasks/{ref}/nudge.
type NudgeRequest struct {
	Text string `json:"text"`
}
