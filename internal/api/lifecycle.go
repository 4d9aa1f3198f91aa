package api

import "github.com/neuraphage/neuraphage-go/internal/task"

// TaskReport is GET /v1/tasks/{ref}/report: seed 003's summary of a task
// (docs/lifecycle.md), as fields and as the rendered markdown.
type TaskReport struct {
	TaskID      task.ID     `json:"task_id"`
	Description string      `json:"description"`
	Status      task.Status `json:"status"`
	Reason      string      `json:"reason,omitempty"`
	// DurationMs is from the task's first start to its finish (or now).
	DurationMs int64  `json:"duration_ms"`
	PRURL      string `json:"pr_url,omitempty"`
	Landed     string `json:"landed,omitempty"`
	Base       string `json:"base,omitempty"`
	Branch     string `json:"branch,omitempty"`
	// Files are the changed files; Range the commits they were counted
	// between ("from..to"); Note why none could be counted.
	Files    []FileChange `json:"files"`
	Range    string       `json:"range,omitempty"`
	Note     string       `json:"note,omitempty"`
	Summary  string       `json:"summary,omitempty"`
	Logs     []string     `json:"logs"`
	Markdown string       `json:"markdown"`
}

// FileChange is one changed file of a TaskReport.
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}
