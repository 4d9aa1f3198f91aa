package store

import (
	"errors"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// ErrConflict is returned (wrapped) by Checkpoint when the conversation does
// not have the length the caller expected (another writer appended to it), or
// when an injection it would deliver was delivered already. Either way the
// caller's view of the task is stale: reload and start the step again.
var ErrConflict = errors.New("conversation changed underneath")

// Entry is one message of a task's conversation as its engine stored it.
type Entry struct {
	// Seq is the entry's position in the conversation, from 0.
	Seq int `json:"seq"`
	// Turn is the engine's turn number when the entry was added.
	Turn    int         `json:"turn"`
	At      time.Time   `json:"at"`
	Message llm.Message `json:"message"`
}

// Charge is one model call in the cost ledger.
type Charge struct {
	ID               int64     `json:"id"`
	TaskID           task.ID   `json:"task_id"`
	At               time.Time `json:"at"`
	Provider         string    `json:"provider"`
	Model            string    `json:"model"`
	InputTokens      int64     `json:"input_tokens"`
	OutputTokens     int64     `json:"output_tokens"`
	CacheReadTokens  int64     `json:"cache_read_tokens"`
	CacheWriteTokens int64     `json:"cache_write_tokens"`
	CostUSD          float64   `json:"cost_usd"`
	// DurationMs is how long the call took.
	DurationMs int64 `json:"duration_ms"`
}

// Checkpoint is one step of a task's run, committed atomically by
// Store.Checkpoint: either all of it is on disk or none of it.
type Checkpoint struct {
	TaskID task.ID
	// From is the length the caller believes the conversation has; Entries
	// are appended at From, From+1, ... (their Seq is set by the store; a
	// zero At is now). A conversation of another length is ErrConflict.
	// With Replace, the whole conversation is replaced by Entries (from Seq
	// 0) and From must be its current length too.
	From    int
	Entries []Entry
	Replace bool
	// Delivered are injection IDs the conversation now holds; they are
	// marked delivered at DeliveredAt (zero: now). An ID that is unknown or
	// of another task (ErrNotFound), or already delivered, listed twice
	// included (ErrConflict), is an error and nothing is committed, so an
	// injection is never delivered twice.
	Delivered   []int64
	DeliveredAt time.Time
	// Charges are added to the cost ledger (their ID and TaskID are set by
	// the store; a zero At is now).
	Charges []Charge
	// Mutate, when set, changes the task in the same transaction; its
	// events are committed before evs.
	Mutate Mutation
}

// CostQuery selects and groups the cost ledger.
type CostQuery struct {
	// TaskID selects one task's charges.
	TaskID task.ID
	// Since selects charges at or after it (zero: all).
	Since time.Time
	// By groups the rows: "day" (UTC date, YYYY-MM-DD), "task", "model"
	// ("provider/model"), "watcher" (the watcher session an evaluation
	// was charged to; only watcher sessions' charges) or "" (one row with
	// key "total").
	By string
	// AfterID selects the charges with a larger ID (0: all). IDs grow in
	// commit order and charges are never deleted, so a reader that keeps
	// running sums reads only what was added since its last LastID.
	AfterID int64
}

// CostRow is one group of the cost ledger, ordered by key.
type CostRow struct {
	Key              string  `json:"key"`
	Calls            int64   `json:"calls"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// LastID is the largest charge ID of the group (0 when it has none):
	// the next query's AfterID.
	LastID int64 `json:"-"`
}
