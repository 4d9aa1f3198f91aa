package api

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Watcher sessions' routes.
//
//	POST   /v1/watchers                    WatchAddRequest → WatchSession
//	GET    /v1/watchers                    WatchList
//	GET    /v1/watchers/{ref}              WatchSession
//	GET    /v1/watchers/{ref}/log?after=N&limit=N   WatchLog: its evaluations, oldest first
//	POST   /v1/watchers/{ref}/pause        (empty) → WatchSession
//	POST   /v1/watchers/{ref}/resume       (empty) → WatchSession
//	DELETE /v1/watchers/{ref}              WatchSession: the session, ended
//
// {ref} is a session's name, its id or a unique prefix of the id. A daemon
// without watcher sessions answers them with CodeUnavailable (503).

// WatchAddRequest adds a watcher session: exactly one of Task, Tags and
// All; exactly one of Role and Brief.
type WatchAddRequest struct {
	Task      string   `json:"task,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	All       bool     `json:"all,omitempty"`
	Role      string   `json:"role,omitempty"`
	Brief     string   `json:"brief,omitempty"`
	Authority string   `json:"authority,omitempty"` // peer | supervisor; "" the role's
	Tier      string   `json:"tier,omitempty"`      // router | worker | expert; "" the role's
	BudgetUSD float64  `json:"budget_usd,omitempty"`
}

// WatchTarget is what a session watches.
type WatchTarget struct {
	Task task.ID  `json:"task,omitempty"`
	Tags []string `json:"tags,omitempty"`
	All  bool     `json:"all,omitempty"`
}

// WatchSession is a watcher session.
type WatchSession struct {
	ID            string      `json:"id"`
	Name          string      `json:"name"`
	Title         string      `json:"title"`
	Role          string      `json:"role,omitempty"`
	Brief         string      `json:"brief"`
	Authority     string      `json:"authority"`
	Tier          string      `json:"tier"`
	Target        WatchTarget `json:"target"`
	Status        string      `json:"status"` // active | paused | ended
	Reason        string      `json:"reason,omitempty"`
	BudgetUSD     float64     `json:"budget_usd,omitempty"`
	SpentUSD      float64     `json:"spent_usd"`
	Evaluations   int64       `json:"evaluations"`
	Interjections int64       `json:"interjections"`
	CreatedAt     time.Time   `json:"created_at"`
	UpdatedAt     time.Time   `json:"updated_at"`
}

// WatchList is GET /v1/watchers.
type WatchList struct {
	Sessions []WatchSession `json:"sessions"`
}

// WatchEvaluation is one evaluation of a session.
type WatchEvaluation struct {
	ID           int64     `json:"id"`
	Task         task.ID   `json:"task"`
	At           time.Time `json:"at"`
	Decision     string    `json:"decision"` // interject | continue | failed
	Urgent       bool      `json:"urgent,omitempty"`
	Content      string    `json:"content,omitempty"`
	Note         string    `json:"note,omitempty"`
	InjectionID  int64     `json:"injection_id,omitempty"`
	Undelivered  string    `json:"undelivered,omitempty"`
	Error        string    `json:"error,omitempty"`
	Observations int       `json:"observations"`
	Model        string    `json:"model,omitempty"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	CostUSD      float64   `json:"cost_usd"`
	DurationMs   int64     `json:"duration_ms"`
}

// WatchLog is GET /v1/watchers/{ref}/log.
type WatchLog struct {
	Session     WatchSession      `json:"session"`
	Evaluations []WatchEvaluation `json:"evaluations"`
}
