package store

import (
	"context"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// WatchStatus is the state of a watcher session.
type WatchStatus string

// The states of a watcher session. An active session evaluates its
// targets' activity; a paused one (by its user, or by itself at its
// budget) keeps its place and evaluates nothing; an ended one (its one
// task finished, or removed) is kept as history.
const (
	WatchActive WatchStatus = "active"
	WatchPaused WatchStatus = "paused"
	WatchEnded  WatchStatus = "ended"
)

// WatchTarget is what a watcher session watches: one task, the tasks
// carrying any of Tags, or every task (All). Exactly one is set.
type WatchTarget struct {
	TaskID task.ID  `json:"task_id,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	All    bool     `json:"all,omitempty"`
}

// WatchSession is a watcher session: a reviewer with a brief that follows
// its target tasks' activity and interjects when it matters.
type WatchSession struct {
	// ID is the session's short id ("w-3f9a1c").
	ID string `json:"id"`
	// Name is the session's unique handle ("security", "security-2").
	Name string `json:"name"`
	// Title is how it names itself to the task ("Security Reviewer").
	Title string `json:"title"`
	// Role is the built-in or personas.yaml role it was made from ("" for
	// a brief of the user's own).
	Role  string `json:"role,omitempty"`
	Brief string `json:"brief"`
	// Authority is "peer" (a suggestion) or "supervisor" (to be followed).
	Authority string      `json:"authority"`
	Tier      string      `json:"tier"`
	Target    WatchTarget `json:"target"`
	Status    WatchStatus `json:"status"`
	// Reason says why the session is paused or ended.
	Reason string `json:"reason,omitempty"`
	// BudgetUSD caps what its evaluations may cost (0: no cap); past it
	// the session pauses itself.
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	// SpentUSD, Evaluations and Interjections are kept by
	// RecordEvaluation.
	SpentUSD      float64   `json:"spent_usd"`
	Evaluations   int64     `json:"evaluations"`
	Interjections int64     `json:"interjections"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// The decisions of an evaluation.
const (
	// DecisionInterject: the session spoke (Content, Urgent).
	DecisionInterject = "interject"
	// DecisionContinue: nothing to say (Note).
	DecisionContinue = "continue"
	// DecisionFailed: the model call failed (Error); nothing was sent.
	DecisionFailed = "failed"
)

// WatchEvaluation is one evaluation of a watcher session: what it
// decided about one task's activity, what it cost, what was sent.
type WatchEvaluation struct {
	ID        int64     `json:"id"`
	SessionID string    `json:"session_id"`
	TaskID    task.ID   `json:"task_id"`
	At        time.Time `json:"at"`
	Decision  string    `json:"decision"`
	Urgent    bool      `json:"urgent,omitempty"`
	Content   string    `json:"content,omitempty"`
	Note      string    `json:"note,omitempty"`
	// InjectionID is the interjection in the task's queue (0: none sent).
	InjectionID int64 `json:"injection_id,omitempty"`
	// Undelivered says why an interjection was not sent (the task ended).
	Undelivered string `json:"undelivered,omitempty"`
	Error       string `json:"error,omitempty"`
	// Observations is how many observations the evaluation weighed.
	Observations int `json:"observations"`
	// The model call, charged to the session in the cost ledger.
	Provider     string  `json:"provider,omitempty"`
	Model        string  `json:"model,omitempty"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	DurationMs   int64   `json:"duration_ms"`
}

// WatchQuery selects evaluations.
type WatchQuery struct {
	// SessionID selects one session's; "" all.
	SessionID string
	// AfterID selects those with a greater ID.
	AfterID int64
	// Limit keeps the newest Limit of them (0: all), still oldest first.
	Limit int
}

// WatchSessions is the table of watcher sessions.
type WatchSessions interface {
	// CreateWatchSession stores a new session with evs; a taken ID or
	// name is ErrExists.
	CreateWatchSession(ctx context.Context, w WatchSession, evs ...event.Event) ([]event.Event, error)
	// UpdateWatchSession applies mut to the session and stores the result
	// with mut's events, atomically. Its ID and creation time do not
	// change.
	UpdateWatchSession(ctx context.Context, id string, mut func(*WatchSession) ([]event.Event, error)) (WatchSession, []event.Event, error)
	// GetWatchSession returns one session (ErrNotFound).
	GetWatchSession(ctx context.Context, id string) (WatchSession, error)
	// ResolveWatchSession finds the session a user's reference names: its
	// exact name, its ID or a unique prefix of the ID (with or without
	// "w-"). No match is ErrNotFound; several are *AmbiguousError.
	ResolveWatchSession(ctx context.Context, ref string) (string, error)
	// ListWatchSessions returns every session, oldest first.
	ListWatchSessions(ctx context.Context) ([]WatchSession, error)
}

// WatchLog is the record of watcher sessions' evaluations.
type WatchLog interface {
	// RecordEvaluation stores an evaluation of an existing session (else
	// ErrNotFound) with the events built by record, charges its model
	// call to the cost ledger (the watched task's, marked with the
	// session: `cost --by watcher`), and adds it to the session's
	// SpentUSD, Evaluations and Interjections, in one transaction.
	RecordEvaluation(ctx context.Context, e WatchEvaluation, record func(WatchEvaluation) []event.Event) (WatchEvaluation, []event.Event, error)
	// WatchEvaluations returns the evaluations matching q, oldest first.
	WatchEvaluations(ctx context.Context, q WatchQuery) ([]WatchEvaluation, error)
}
