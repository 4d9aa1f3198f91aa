package mcp

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// SpawnInput is spawn_task's input.
type SpawnInput struct {
	Description string   `json:"description" jsonschema:"what the task must do, self-contained: the change, where it is, how to check it; the worker sees only this and the repository"`
	Repo        string   `json:"repo,omitempty" jsonschema:"absolute path of the git repository to work in; default: the daemon's configured repository"`
	Engine      string   `json:"engine,omitempty" jsonschema:"engine that runs the task (native, claude, codex, gemini); default: the configured one"`
	Persona     string   `json:"persona,omitempty" jsonschema:"persona to run as (e.g. implementer, reviewer); default: chosen from the description"`
	Model       string   `json:"model,omitempty" jsonschema:"model to use instead of the persona's"`
	Tags        []string `json:"tags,omitempty" jsonschema:"labels for finding the task later"`
	Priority    *int     `json:"priority,omitempty" jsonschema:"0 (most urgent) to 4; default: the configured one"`
	Context     string   `json:"context,omitempty" jsonschema:"background the worker should know, kept apart from the description"`
	BudgetUSD   float64  `json:"budget_usd,omitempty" jsonschema:"cost cap in US dollars; the task stops when it is spent"`
	MaxTurns    int      `json:"max_iterations,omitempty" jsonschema:"cap on the number of model turns"`
	MaxTokens   int64    `json:"max_tokens,omitempty" jsonschema:"cap on tokens used"`
	Watch       []string `json:"watch,omitempty" jsonschema:"roles of watcher sessions to attach to the task (built in: security, tests, scope): each reviews its work as it goes"`
	DependsOn   []string `json:"depends_on,omitempty" jsonschema:"ids of tasks that must complete (their work on main) before this one starts"`
	ParentID    string   `json:"parent_id,omitempty" jsonschema:"id of the task this one is a sub-task of"`
}

// SpawnOutput is spawn_task's result.
type SpawnOutput struct {
	ID     string `json:"id" jsonschema:"the new task's id; pass it to wait_tasks, get_task and the other tools"`
	Status string `json:"status" jsonschema:"its status now: queued, or paused while it waits to be started"`
}

// RefInput names one task.
type RefInput struct {
	ID string `json:"id" jsonschema:"task id (t-…) or a unique prefix of one"`
}

// ListInput is list_tasks's input.
type ListInput struct {
	Status []string `json:"status,omitempty" jsonschema:"only tasks in these statuses (queued, running, waiting, paused, merging, completed, failed, cancelled); default: the unfinished ones"`
	All    bool     `json:"all,omitempty" jsonschema:"include finished tasks"`
	Limit  int      `json:"limit,omitempty" jsonschema:"at most this many tasks, newest last; default 200"`
}

// TaskSummary is one task of a listing.
type TaskSummary struct {
	ID          string  `json:"id"`
	Description string  `json:"description" jsonschema:"the description's first line"`
	Status      string  `json:"status"`
	Persona     string  `json:"persona,omitempty"`
	Engine      string  `json:"engine,omitempty"`
	CostUSD     float64 `json:"cost_usd"`
	CloseReason string  `json:"close_reason,omitempty" jsonschema:"why a finished task finished"`
}

// ListOutput is list_tasks's result.
type ListOutput struct {
	Tasks []TaskSummary `json:"tasks"`
	More  bool          `json:"more" jsonschema:"more tasks matched than the limit"`
}

// TaskInfo is get_task's result.
type TaskInfo struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Status      string   `json:"status" jsonschema:"queued, running, waiting (asked a question: answer_task), paused, merging (done, in the merge queue), completed, failed or cancelled"`
	Finished    bool     `json:"finished" jsonschema:"the status is completed, failed or cancelled"`
	CloseReason string   `json:"close_reason,omitempty"`
	Health      string   `json:"health,omitempty" jsonschema:"the supervisor's verdict: healthy, struggling, stuck, runaway, or the state of a task not running"`
	Doing       string   `json:"doing,omitempty" jsonschema:"what the task is doing or waiting on now"`
	Diagnosis   string   `json:"diagnosis,omitempty" jsonschema:"the supervisor's diagnosis when it is not healthy"`
	Persona     string   `json:"persona,omitempty"`
	Engine      string   `json:"engine,omitempty"`
	Model       string   `json:"model,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Repo        string   `json:"repo,omitempty"`
	Branch      string   `json:"branch,omitempty"`
	Worktree    string   `json:"worktree,omitempty"`
	Iterations  int      `json:"iterations"`
	Tokens      int64    `json:"tokens"`
	CostUSD     float64  `json:"cost_usd"`
	Blockers    []string `json:"blockers,omitempty" jsonschema:"unfinished tasks it waits for"`
	Pending     []string `json:"pending_messages,omitempty" jsonschema:"messages queued for it, not yet delivered"`
	Merge       *Merge   `json:"merge,omitempty" jsonschema:"its merge-queue entry, when it has one"`
	CreatedAt   string   `json:"created_at"`
	FinishedAt  string   `json:"finished_at,omitempty"`
}

// Merge is a task's merge-queue entry.
type Merge struct {
	State  string `json:"state" jsonschema:"queued, running, waiting, landed, failed or cancelled"`
	Target string `json:"target,omitempty" jsonschema:"branch it lands on"`
	Detail string `json:"detail,omitempty"`
	Commit string `json:"commit,omitempty" jsonschema:"the commit it landed as"`
}

// WaitInput is wait_tasks's input.
type WaitInput struct {
	IDs            []string `json:"ids" jsonschema:"ids of the tasks to wait for"`
	Mode           string   `json:"mode,omitempty" jsonschema:"all: return when every task finished (default); any: when the first one does"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty" jsonschema:"give up waiting after this long and return the statuses so far (default 600, at most 3600)"`
}

// WaitOutput is wait_tasks's result.
type WaitOutput struct {
	Done     bool          `json:"done" jsonschema:"the wait's condition was met; false when it timed out"`
	Tasks    []TaskSummary `json:"tasks" jsonschema:"every awaited task as it is now"`
	Finished []string      `json:"finished" jsonschema:"ids of the awaited tasks that finished"`
	Waiting  []string      `json:"waiting_for_answer,omitempty" jsonschema:"ids of tasks that asked a question and wait for answer_task"`
}

// MessageInput is send_message's input.
type MessageInput struct {
	ID     string `json:"id" jsonschema:"task id"`
	Text   string `json:"text" jsonschema:"the message; the task reads it at its next turn"`
	Urgent bool   `json:"urgent,omitempty" jsonschema:"interrupt the task's turn in flight instead of waiting for its end"`
}

// AnswerInput is answer_task's input.
type AnswerInput struct {
	ID     string `json:"id" jsonschema:"id of a task in status waiting"`
	Answer string `json:"answer" jsonschema:"the answer to the task's question"`
}

// MessageOutput says what became of a message.
type MessageOutput struct {
	MessageID  int64  `json:"message_id"`
	TaskStatus string `json:"task_status" jsonschema:"the task's status as the message was queued"`
}

// ActionInput is the input of pause_task, resume_task and cancel_task.
type ActionInput struct {
	ID     string `json:"id" jsonschema:"task id"`
	Reason string `json:"reason,omitempty" jsonschema:"why, recorded with the task"`
}

// ActionOutput is the task's status after an action.
type ActionOutput struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// ReportOutput is get_report's result.
type ReportOutput struct {
	ID       string       `json:"id"`
	Status   string       `json:"status"`
	Summary  string       `json:"summary,omitempty" jsonschema:"the worker's summary of what it did"`
	Landed   string       `json:"landed,omitempty" jsonschema:"commit the work landed as on the base branch"`
	Files    []FileChange `json:"files" jsonschema:"files changed, with line counts"`
	Markdown string       `json:"markdown" jsonschema:"the report to show the user"`
}

// FileChange is one changed file.
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
}

// SearchInput is search_knowledge's input.
type SearchInput struct {
	Query string `json:"query" jsonschema:"words to look for in what tasks learned"`
	Task  string `json:"task,omitempty" jsonschema:"only learnings from this task"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many (default 20)"`
}

// SearchOutput is search_knowledge's result.
type SearchOutput struct {
	Learnings []Learning `json:"learnings"`
}

// Learning is one thing a task learned.
type Learning struct {
	ID      int64    `json:"id"`
	Summary string   `json:"summary"`
	Detail  string   `json:"detail,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Files   []string `json:"files,omitempty"`
	Tasks   []string `json:"tasks,omitempty" jsonschema:"tasks it came from"`
}

// MergeInput is merge_status's input.
type MergeInput struct {
	Recent int `json:"recent,omitempty" jsonschema:"how many closed entries to show (default 20)"`
}

// MergeEntry is one entry of the merge queue.
type MergeEntry struct {
	TaskID string `json:"task_id"`
	Merge
	Attempts int `json:"attempts"`
}

// MergeOutput is merge_status's result.
type MergeOutput struct {
	Open   []MergeEntry `json:"open" jsonschema:"entries waiting or being landed"`
	Recent []MergeEntry `json:"recent" jsonschema:"the newest closed entries"`
}

func summaryOf(s task.Summary) TaskSummary {
	return TaskSummary{ID: string(s.ID), Description: s.Description, Status: string(s.Status), Persona: s.Persona,
		Engine: s.Engine, CostUSD: s.Usage.CostUSD, CloseReason: s.CloseReason}
}

func mergeOf(e api.MergeEntry) MergeEntry {
	return MergeEntry{TaskID: string(e.TaskID), Merge: Merge{State: e.State, Target: e.Target, Detail: e.Detail, Commit: e.Commit}, Attempts: e.Attempts}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
