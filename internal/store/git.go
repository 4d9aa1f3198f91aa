package store

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// WorktreeState is where a task's worktree is in its life.
type WorktreeState string

// The worktree states.
const (
	// WorktreeActive: the worktree is (or should be) on disk.
	WorktreeActive WorktreeState = "active"
	// WorktreeRemoved: the worktree was removed, its work merged or its
	// branch tip archived.
	WorktreeRemoved WorktreeState = "removed"
)

// Worktree is the registry's record of one task's worktree: one per task.
type Worktree struct {
	TaskID task.ID `json:"task_id"`
	// Repo is the top of the repository's main work tree (absolute).
	Repo string `json:"repo"`
	// Branch is the task's branch, "neuraphage/<task-id>/work" (an
	// older task's may be "neuraphage/<task-id>").
	Branch string `json:"branch"`
	// Base is the branch the task started from and merges into; BaseCommit
	// the commit it started from.
	Base       string `json:"base"`
	BaseCommit string `json:"base_commit"`
	// Path is the worktree's directory (absolute).
	Path  string        `json:"path"`
	State WorktreeState `json:"state"`
	// Port is the free port handed to the task (0: none).
	Port int `json:"port,omitempty"`
	// Archive is the ref that keeps the branch tip once archived
	// ("refs/neuraphage/archive/<task-id>"); empty until then.
	Archive string `json:"archive,omitempty"`
	// Landed is the commit the branch's work landed as on Base (for a
	// squash, not an ancestor of the branch); LandedTip is the branch tip
	// that landed. Empty until it lands.
	Landed    string `json:"landed,omitempty"`
	LandedTip string `json:"landed_tip,omitempty"`
	// Note is the last problem seen with it (missing, setup failed, ...).
	Note      string    `json:"note,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MergeState is where an entry of the merge queue is.
type MergeState string

// The merge entry states. Queued, Running and Waiting are open: an entry in
// them will be processed. The others are closed.
const (
	MergeQueued    MergeState = "queued"    // waits its turn
	MergeRunning   MergeState = "running"   // being checked, gated, landed
	MergeWaiting   MergeState = "waiting"   // cannot land yet (dirty target checkout); tried again
	MergeLanded    MergeState = "landed"    // on the target
	MergePR        MergeState = "pr"        // a pull request was opened instead
	MergeSentBack  MergeState = "sent_back" // conflict or failed gate, returned to the task to fix
	MergeYielded   MergeState = "yielded"   // a smaller overlapping entry landed first; its task was told to rebase
	MergeParked    MergeState = "parked"    // stopped for the user: `merge retry` takes it up again
	MergeCancelled MergeState = "cancelled"
)

// Open reports whether an entry in s will still be processed.
func (s MergeState) Open() bool { return s == MergeQueued || s == MergeRunning || s == MergeWaiting }

// MergeEntry is one task's request to land its branch on a target branch.
type MergeEntry struct {
	ID     int64      `json:"id"`
	TaskID task.ID    `json:"task_id"`
	Repo   string     `json:"repo"`
	Branch string     `json:"branch"`
	Target string     `json:"target"`
	State  MergeState `json:"state"`
	// Detail says why the entry is in its state, for the user: the
	// conflicting files, the gate's output tail, what it waits for.
	Detail string `json:"detail,omitempty"`
	// Files are the conflicting files of the last conflict.
	Files []string `json:"files,omitempty"`
	// Attempts counts how many times the queue took the entry up.
	Attempts int `json:"attempts"`
	// Commit is the commit that landed on Target; PRURL the pull request.
	Commit     string     `json:"commit,omitempty"`
	PRURL      string     `json:"pr_url,omitempty"`
	EnqueuedAt time.Time  `json:"enqueued_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Step is the git operation the queue began in the task's worktree
	// ("rebase", "merge") and has not seen end, recorded before it starts;
	// StepTip is the branch tip before it. A restarted queue that finds a
	// half-done operation of that kind there knows it as its own, aborts
	// it and checks the branch is back at StepTip. Empty otherwise.
	Step    string `json:"step,omitempty"`
	StepTip string `json:"step_tip,omitempty"`
}

// MergeQuery selects merge entries.
type MergeQuery struct {
	// TaskID selects one task's entries.
	TaskID task.ID
	// Open selects the open entries only (queued, running, waiting).
	Open bool
	// Repo and Target select one queue.
	Repo, Target string
	// Limit caps the result, keeping the newest; 0 means no cap.
	Limit int
}

// MergeMutation changes a merge entry inside a write transaction and returns
// the events recording the change. Like Mutation it must be quick and do no
// I/O; an error abandons the change.
type MergeMutation func(m *MergeEntry) ([]event.Event, error)
