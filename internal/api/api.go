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
//	GET  /v1/tasks?status=S,S&all=1       TaskList (default: tasks not yet finished)
//	GET  /v1/tasks/{ref}                  TaskDetail
//	POST /v1/tasks/{ref}/cancel           ActionRequest → task.Task
//	POST /v1/tasks/{ref}/pause            ActionRequest → task.Task
//	POST /v1/tasks/{ref}/resume           ActionRequest → task.Task
//	POST /v1/tasks/{ref}/messages         SendRequest → Message
//	POST /v1/tasks/{ref}/dependencies     DependRequest → TaskDetail
//	GET  /v1/events?task=&kind=&after=&since=&limit=   EventList
//	GET  /v1/watch?task=&kind=&after=     NDJSON stream of event.Event
//
// {ref} is a task ID or a unique prefix of one, with or without "t-".
package api

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
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
}

// Budget is a task's budget as the user gives it.
type Budget struct {
	MaxIterations int     `json:"max_iterations,omitempty"`
	MaxTokens     int64   `json:"max_tokens,omitempty"`
	MaxCostUSD    float64 `json:"max_cost_usd,omitempty"`
}

// TaskList is a list of tasks.
type TaskList struct {
	Tasks []task.Task `json:"tasks"`
}

// TaskDetail is one task with what `task show` adds.
type TaskDetail struct {
	Task      task.Task      `json:"task"`
	Readiness task.Readiness `json:"readiness"`
	Blockers  []task.ID      `json:"blockers,omitempty"`
	Pending   []Message      `json:"pending_messages,omitempty"`
}

// ActionRequest carries the reason for a pause, resume or cancel.
type ActionRequest struct {
	Reason string `json:"reason,omitempty"`
}

// SendRequest is a message for a task.
type SendRequest struct {
	Text string `json:"text"`
}

// Message is an entry of a task's message queue.
type Message struct {
	ID          int64      `json:"id"`
	TaskID      task.ID    `json:"task_id"`
	Source      string     `json:"source"`
	Text        string     `json:"text"`
	Urgent      bool       `json:"urgent,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

// DependRequest makes a task wait for a blocker.
type DependRequest struct {
	Blocker string `json:"blocker"`
}

// EventList is a page of the event log.
type EventList struct {
	Events []event.Event `json:"events"`
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
)
