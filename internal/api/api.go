// Package api holds the wire types of the daemon's local HTTP API and its
// routes. The server (api/server) and the Go client (api/client) share them;
// the CLI and the TUI talk to the daemon only through the client.
//
// # Transport
//
// HTTP/1.1 over a per-user Unix socket (mode 0600 in a 0700 directory). Routes
// are versioned under /v1 and use method patterns. Bodies are JSON. Errors are
// an Error body with a machine-readable Code. The watch route streams events as
// NDJSON, one event.Event per line, flushed as each happens.
//
// # Routes
//
//	GET  /v1/health                       Health
//	GET  /v1/status                       Status
//	POST /v1/shutdown                     (empty) starts an orderly shutdown
//	POST /v1/tasks                        CreateTaskRequest → task.Task
//	GET  /v1/tasks?status=S,S&all=1       TaskList (default: tasks not yet finished);
//	                                      &limit=N&after=ID pages it (TaskList.Next)
//	GET  /v1/tasks/{ref}                  TaskDetail
//	POST /v1/tasks/{ref}/cancel           ActionRequest → task.Task
//	POST /v1/tasks/{ref}/pause            ActionRequest → task.Task
//	POST /v1/tasks/{ref}/resume           ActionRequest → task.Task
//	POST /v1/tasks/actions                BulkActionRequest → BulkActionResult (several tasks in one call)
//	POST /v1/tasks/{ref}/messages         SendRequest → Message
//	POST /v1/tasks/{ref}/dependencies     DependRequest → TaskDetail
//	GET  /v1/tasks/{ref}/log?from=N       TaskLog: the stored conversation, entries with seq ≥ N
//	GET  /v1/tasks/{ref}/report           TaskReport: status, duration, PR, changed files, summary, logs
//	GET  /v1/cost?task=&by=&since=        CostReport: the cost ledger grouped by day, task or model
//	GET  /v1/events?task=&kind=&after=&since=&limit=   EventList
//	GET  /v1/watch?task=&kind=&after=     NDJSON stream of event.Event
//	GET  /metrics                         the Prometheus text exposition format (docs/metrics.md),
//	                                      not JSON; unversioned, where scrapers look for it
//
// {ref} is a task ID or a unique prefix of one, with or without "t-". On
// /v1/cost, task is such a reference (empty: every task), by is day, task,
// model or empty (only the total), and since an RFC 3339 time (empty: all).
package api

import (
	"path/filepath"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Health is the answer of the health probe.
type Health struct {
	Status    string    `json:"status"`
	PID       int       `json:"pid"`
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"`
}

// Status describes a running daemon.
type Status struct {
	Health
	Socket          string              `json:"socket"`
	DBFile          string              `json:"db_file"`
	ConfigFile      string              `json:"config_file"`
	LogFile         string              `json:"log_file"`
	Tasks           map[task.Status]int `json:"tasks"`
	Events          int64               `json:"events"`
	LastEventID     int64               `json:"last_event_id"`
	PendingMessages int                 `json:"pending_messages"`
	Bus             event.Stats         `json:"bus"`
	Models          Models              `json:"models"`
	// Running lists the tasks the executor runs now; Held says why it
	// dispatches nothing new (a spent budget, an engine not ready), or is
	// empty.
	Running []task.ID `json:"running"`
	Held    string    `json:"held,omitempty"`
	// Sandbox says how task commands are confined.
	Sandbox Sandbox `json:"sandbox"`
	// GitProcesses counts the git processes the daemon started since it
	// started: what work costs in git is the difference of two readings.
	GitProcesses int64 `json:"git_processes"`
	// Engines says which engines can run tasks now, and why not.
	Engines []EngineStatus `json:"engines,omitempty"`
}

// EngineStatus is one engine's readiness.
type EngineStatus struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	// Reason says what to set up when Ready is false.
	Reason string `json:"reason,omitempty"`
}

// Sandbox is the mode task commands run in, probed at daemon start.
type Sandbox struct {
	// Mode is "landlock", "none" (the kernel lacks it) or "off" (the
	// config turned it off).
	Mode string `json:"mode"`
	// ABI is the Landlock ABI version; 0 when Mode is not landlock.
	ABI int `json:"abi,omitempty"`
	// Network is sandbox.network: allow, deny or a list of ports.
	Network string `json:"network"`
	// Require is sandbox.require: commands are refused when they cannot be
	// confined.
	Require bool `json:"require"`
	// Summary is the line `daemon status` prints.
	Summary string `json:"summary"`
}

// Models says which model each tier resolved to at daemon start, or how to
// configure one when none can be used.
type Models struct {
	Ready bool `json:"ready"`
	// Setup explains what to configure when Ready is false.
	Setup string      `json:"setup,omitempty"`
	Tiers []TierModel `json:"tiers,omitempty"`
}

// TierModel is one tier's resolved model.
type TierModel struct {
	Tier     string `json:"tier"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	BaseURL  string `json:"base_url,omitempty"`
}

// CreateTaskRequest asks for a new task.
type CreateTaskRequest struct {
	Description string   `json:"description"`
	Context     string   `json:"context,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Priority 0..4; nil takes the configured default.
	Priority *int   `json:"priority,omitempty"`
	ParentID string `json:"parent_id,omitempty"`
	Persona  string `json:"persona,omitempty"`
	Engine   string `json:"engine,omitempty"`
	Model    string `json:"model,omitempty"`
	Repo     string `json:"repo,omitempty"`
	Budget   Budget `json:"budget,omitempty"`
	NoStart  bool   `json:"no_start,omitempty"`
	// NoSupervision keeps the Watcher away from the task.
	NoSupervision bool `json:"no_supervision,omitempty"`
	// Watch attaches a watcher session of each of these roles to the task
	// (`watch add TASK --role R`), checked before the task is created.
	Watch []string `json:"watch,omitempty"`
	// Workflow makes a workflow task whose phases run as child tasks
	// (docs/personas.md).
	Workflow []task.Phase `json:"workflow,omitempty"`
}

// Budget is a task's budget as the user gives it.
type Budget struct {
	MaxIterations int     `json:"max_iterations,omitempty"`
	MaxTokens     int64   `json:"max_tokens,omitempty"`
	MaxCostUSD    float64 `json:"max_cost_usd,omitempty"`
}

// TaskList is a page of a listing of tasks: what listings show of each,
// oldest first, and Next, the ?after= of the next page when more tasks
// remain.
type TaskList struct {
	Tasks []task.Summary `json:"tasks"`
	Next  task.ID        `json:"next,omitempty"`
}

// TaskDetail is one task with what `task show` adds.
type TaskDetail struct {
	Task      task.Task      `json:"task"`
	Readiness task.Readiness `json:"readiness"`
	Blockers  []task.ID      `json:"blockers,omitempty"`
	Pending   []Message      `json:"pending_messages,omitempty"`
	// Returned are messages the task never saw: it finished while they
	// waited in its queue.
	Returned []Message `json:"returned_messages,omitempty"`
}

// ActionRequest carries the reason for a pause, resume or cancel.
type ActionRequest struct {
	Reason string `json:"reason,omitempty"`
}

// SendRequest is a message for a task.
type SendRequest struct {
	Text string `json:"text"`
	// Urgent interrupts the task's turn in flight instead of waiting for
	// its next boundary.
	Urgent bool `json:"urgent,omitempty"`
}

// Message is an entry of a task's message queue.
type Message struct {
	ID          int64      `json:"id"`
	TaskID      task.ID    `json:"task_id"`
	Source      string     `json:"source"`
	Kind        string     `json:"kind,omitempty"`
	Text        string     `json:"text"`
	Urgent      bool       `json:"urgent,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	// ReturnedAt is when the task finished with the message undelivered.
	ReturnedAt *time.Time `json:"returned_at,omitempty"`
	// TaskStatus is the task's status as the message was queued (in the
	// answer to a send only).
	TaskStatus task.Status `json:"task_status,omitempty"`
}

// DependRequest makes a task wait for a blocker.
type DependRequest struct {
	Blocker string `json:"blocker"`
}

// EventList is a page of the event log.
type EventList struct {
	Events []event.Event `json:"events"`
}

// TaskLog is a task's stored conversation, or the part of it asked for.
type TaskLog struct {
	TaskID  task.ID    `json:"task_id"`
	Entries []LogEntry `json:"entries"`
}

// LogEntry is one message of a task's conversation.
type LogEntry struct {
	// Seq is the entry's position in the conversation, from 0.
	Seq int `json:"seq"`
	// Turn is the engine's turn number when the entry was added.
	Turn    int         `json:"turn"`
	At      time.Time   `json:"at"`
	Message llm.Message `json:"message"`
}

// The groupings of a cost report.
const (
	CostByDay   = "day"   // UTC date, YYYY-MM-DD
	CostByTask  = "task"  // task ID
	CostByModel = "model" // provider/model
	// CostByWatcher groups watcher sessions' evaluations by session ID.
	CostByWatcher = "watcher"
)

// CostQuery selects a cost report: the query of GET /v1/cost.
type CostQuery struct {
	// Task is a task reference; empty selects every task.
	Task string
	// By is CostByDay, CostByTask, CostByModel or empty (only the total).
	By string
	// Since selects charges at or after it; zero selects all.
	Since time.Time
}

// CostReport is the cost ledger summarized: one row per group, ordered by
// key, and the total of the selection.
type CostReport struct {
	TaskID task.ID   `json:"task_id,omitempty"`
	Since  time.Time `json:"since,omitzero"`
	By     string    `json:"by,omitempty"`
	Rows   []CostRow `json:"rows"`
	Total  CostRow   `json:"total"`
}

// CostRow is one group of model calls and what they cost.
type CostRow struct {
	Key              string  `json:"key"`
	Calls            int64   `json:"calls"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// Error is the body of every non-2xx answer.
type Error struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
	Hint    string    `json:"hint,omitempty"`
}

// ErrorCode classifies an API error.
type ErrorCode string

// The error codes.
const (
	CodeNotFound    ErrorCode = "not_found"   // no such task (404)
	CodeInvalid     ErrorCode = "invalid"     // the request is wrong (400)
	CodeConflict    ErrorCode = "conflict"    // not possible in the current state (409)
	CodeUnavailable ErrorCode = "unavailable" // the daemon is shutting down (503)
	CodeInternal    ErrorCode = "internal"    // something broke (500)
	// CodeUnauthorized: the request lacks the daemon's API token (401).
	CodeUnauthorized ErrorCode = "unauthorized"
)

// TokenFileName is the file, next to the daemon's socket, holding its API
// token: a random secret the daemon writes (mode 0600) when it starts and
// every request must carry as "Authorization: Bearer <token>". Reading it is
// what a client needs to reach the daemon; a task's sandboxed commands cannot
// read the run directory, so they cannot, even where they can connect to the
// socket.
const TokenFileName = "api.token"

// TokenPath returns the path of the API token of the daemon listening on
// socket.
func TokenPath(socket string) string { return filepath.Join(filepath.Dir(socket), TokenFileName) }

// Worktrees and the merge queue.
//
//	GET  /v1/worktrees                    WorktreeList: every worktree record, and stray worktrees
//	GET  /v1/worktrees/{ref}              Worktree
//	POST /v1/worktrees/prune              (empty) → PruneReport
//	POST /v1/worktrees/prune-archives     ArchivePruneRequest → ArchivePruneReport
//	POST /v1/worktrees/{ref}/restore      (empty) → Worktree
//	GET  /v1/merge?recent=N               MergeStatus: the open entries and the N newest closed ones (default 20)
//	POST /v1/merge/{ref}/enqueue          (empty) → MergeEntry
//	POST /v1/merge/{ref}/retry            (empty) → MergeEntry
//	POST /v1/merge/{ref}/cancel           MergeRequest → MergeEntry
//
// A daemon without worktrees answers these with CodeUnavailable (503). A
// request the current state refuses (the task is still running, it has no
// branch to merge, the worktree's directory is taken) is CodeConflict (409).

// The states of a worktree (Worktree.State).
const (
	WorktreeActive  = "active"  // on disk, or it should be
	WorktreeRemoved = "removed" // removed; its branch tip is archived
)

// Worktree is a task's worktree as the registry records it and as it is on
// disk now.
type Worktree struct {
	// TaskID is empty for a stray worktree.
	TaskID task.ID `json:"task_id"`
	// Repo is the top of the repository's main work tree.
	Repo string `json:"repo"`
	// Branch is the task's branch, "neuraphage/<task-id>/work" (an
	// older task's may be "neuraphage/<task-id>").
	Branch string `json:"branch"`
	// Base is the branch the task started from and merges into; BaseCommit
	// the commit it started from.
	Base       string `json:"base"`
	BaseCommit string `json:"base_commit"`
	Path       string `json:"path"`
	// State is WorktreeActive or WorktreeRemoved.
	State string `json:"state"`
	// Port is the free port handed to the task (0: none).
	Port int `json:"port,omitempty"`
	// Archive is the ref keeping the branch tip once archived
	// ("refs/neuraphage/archive/<task-id>").
	Archive string `json:"archive,omitempty"`
	// Landed is the commit the work landed as on Base; LandedTip the branch
	// tip that landed.
	Landed    string `json:"landed,omitempty"`
	LandedTip string `json:"landed_tip,omitempty"`
	// Note is the last problem seen with it.
	Note      string    `json:"note,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`

	// Exists: the directory is there.
	Exists bool `json:"exists"`
	// Changed and Untracked are the work tree's uncommitted files;
	// InProgress names an operation in progress (a rebase, a merge).
	Changed    []string `json:"changed,omitempty"`
	Untracked  []string `json:"untracked,omitempty"`
	InProgress string   `json:"in_progress,omitempty"`
	// Ignored are the ignored files removing the worktree would keep in the
	// task's archive: created or changed since it was provisioned, not build
	// output.
	Ignored []string `json:"ignored,omitempty"`
	// Tip is the branch's commit ("" when the branch is gone).
	Tip string `json:"tip,omitempty"`
	// Ahead and Behind count commits against the base branch.
	Ahead  int `json:"ahead"`
	Behind int `json:"behind"`
	// Merged: the branch's work is on the base branch.
	Merged bool `json:"merged"`
	// Archived: the archive ref holds the branch tip.
	Archived bool `json:"archived"`
	// Stray: a worktree on a neuraphage branch that the registry does not
	// know; it is left alone.
	Stray bool `json:"stray,omitempty"`
}

// WorktreeList is every worktree.
type WorktreeList struct {
	Worktrees []Worktree `json:"worktrees"`
}

// PruneResult is what a prune did with one worktree: removed, or kept and
// why.
type PruneResult struct {
	TaskID  task.ID `json:"task_id"`
	Path    string  `json:"path"`
	Removed bool    `json:"removed"`
	Reason  string  `json:"reason"`
}

// PruneReport is what a prune did, one result per finished task's worktree.
type PruneReport struct {
	Results []PruneResult `json:"results"`
}

// ArchivePruneRequest asks to delete the ignored-files archives no longer
// needed: those of restored worktrees that hold every archived file, and,
// with OlderThanSeconds > 0, those of worktrees removed longer ago.
type ArchivePruneRequest struct {
	OlderThanSeconds int64 `json:"older_than_seconds,omitempty"`
}

// ArchivePruneResult is what an archive prune did with one task's
// ignored-files archive: deleted, or kept and why.
type ArchivePruneResult struct {
	TaskID  task.ID `json:"task_id"`
	Dir     string  `json:"dir"`
	Files   int     `json:"files"`
	Removed bool    `json:"removed"`
	Reason  string  `json:"reason"`
}

// ArchivePruneReport is what an archive prune did, one result per archive.
type ArchivePruneReport struct {
	Results []ArchivePruneResult `json:"results"`
}

// The states of a merge entry (MergeEntry.State). Queued, running and
// waiting are open; the others closed.
const (
	MergeQueued    = "queued"    // waits its turn
	MergeRunning   = "running"   // being checked, gated, landed
	MergeWaiting   = "waiting"   // cannot land yet; tried again
	MergeLanded    = "landed"    // on the target
	MergePR        = "pr"        // a pull request was opened instead
	MergeSentBack  = "sent_back" // returned to the task to fix
	MergeYielded   = "yielded"   // a smaller overlapping entry landed first; told to rebase
	MergeParked    = "parked"    // stopped for the user: retry takes it up again
	MergeCancelled = "cancelled"
)

// MergeEntry is one task's request to land its branch on a target branch.
type MergeEntry struct {
	ID     int64   `json:"id"`
	TaskID task.ID `json:"task_id"`
	Repo   string  `json:"repo"`
	Branch string  `json:"branch"`
	Target string  `json:"target"`
	State  string  `json:"state"`
	// Detail says why the entry is in its state: the conflicting files, the
	// gate's output tail, what it waits for.
	Detail string `json:"detail,omitempty"`
	// Files are the conflicting files of the last conflict.
	Files    []string `json:"files,omitempty"`
	Attempts int      `json:"attempts"`
	// Commit is the commit that landed on Target; PRURL the pull request.
	Commit     string     `json:"commit,omitempty"`
	PRURL      string     `json:"pr_url,omitempty"`
	EnqueuedAt time.Time  `json:"enqueued_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// MergeStatus is the merge queue: the open entries, then the newest closed
// ones, each list oldest first.
type MergeStatus struct {
	Open   []MergeEntry `json:"open"`
	Recent []MergeEntry `json:"recent"`
}

// MergeRequest carries the reason for a merge cancel.
type MergeRequest struct {
	Reason string `json:"reason,omitempty"`
}

// RebaseStatus is the main watcher and where every watched task branch
// stands against main (GET /v1/rebase).
type RebaseStatus struct {
	Watcher MainWatcher  `json:"watcher"`
	Tasks   []TaskRebase `json:"tasks"`
}

// MainWatcher is the main watcher's health.
type MainWatcher struct {
	Enabled bool   `json:"enabled"`
	Urgency string `json:"urgency"`
	// Watching says ref changes are seen through filesystem
	// notifications; otherwise only polling sees them.
	Watching  bool       `json:"watching"`
	LastCycle *time.Time `json:"last_cycle,omitempty"`
	Cycles    int64      `json:"cycles"`
	Notices   int64      `json:"notices"`
	Rebases   int64      `json:"rebases"`
	Conflicts int64      `json:"conflicts"`
	Panics    int64      `json:"panics"`
	Repos     []MainRef  `json:"repos"`
}

// MainRef is one watched main branch.
type MainRef struct {
	Repo   string `json:"repo"`
	Main   string `json:"main"`
	Commit string `json:"commit,omitempty"`
	// Error says why main cannot be read; FetchError why the last fetch
	// failed (the watcher goes on with what it has).
	Error      string `json:"error,omitempty"`
	FetchError string `json:"fetch_error,omitempty"`
}

// TaskRebase is where one task's branch stands against main.
type TaskRebase struct {
	TaskID     task.ID     `json:"task_id"`
	Status     task.Status `json:"status"`
	Repo       string      `json:"repo"`
	Branch     string      `json:"branch"`
	Main       string      `json:"main"`
	MainCommit string      `json:"main_commit,omitempty"`
	Behind     int         `json:"behind"`
	Ahead      int         `json:"ahead"`
	NewCommits []string    `json:"new_commits,omitempty"`
	// Forecast is clean, conflict (Conflicts), overlap (Overlap: files
	// both sides changed) or "" when up to date.
	Forecast  string   `json:"forecast,omitempty"`
	Conflicts []string `json:"conflicts,omitempty"`
	Overlap   []string `json:"overlap,omitempty"`
	// State is up_to_date, behind, notified, cooldown, unrelated,
	// merging or error (Note says why).
	State          string     `json:"state"`
	Note           string     `json:"note,omitempty"`
	LastNotice     *time.Time `json:"last_notice,omitempty"`
	LastNoticeMain string     `json:"last_notice_main,omitempty"`
	LastRebased    *time.Time `json:"last_rebased,omitempty"`
}

// RebaseRequest is the answer to `task rebase` for one task (POST
// /v1/tasks/{ref}/rebase, POST /v1/rebase for all).
type RebaseRequest struct {
	TaskID task.ID `json:"task_id"`
	// Outcome is requested (rebased by the executor at the task's next
	// tool boundary), up_to_date or refused (Note says why).
	Outcome string `json:"outcome"`
	Note    string `json:"note"`
	Behind  int    `json:"behind,omitempty"`
	Main    string `json:"main,omitempty"`
}

// EscalateRequest asks to move a task to a stronger persona (POST
// /v1/tasks/{ref}/escalate): To, or one step up the escalation chain.
type EscalateRequest struct {
	To     string `json:"to,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Escalation is an accepted escalation. Applied says it is made already
// (the task was not running); otherwise it is made at the task's next
// turn boundary.
type Escalation struct {
	TaskID  task.ID `json:"task_id"`
	From    string  `json:"from"`
	To      string  `json:"to"`
	Applied bool    `json:"applied"`
}
