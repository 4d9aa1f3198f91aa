package api

import "github.com/neuraphage/neuraphage-go/internal/task"

// MaxBulkRefs bounds the tasks one bulk action names.
const MaxBulkRefs = 10_000

// BulkActionRequest applies one action (cancel, pause or resume) to
// several tasks in one call: each task on its own, as its own call would,
// so that one task in the wrong state fails alone.
type BulkActionRequest struct {
	Action string   `json:"action"`
	Refs   []string `json:"refs"`
	Reason string   `json:"reason,omitempty"`
}

// BulkActionResult answers a BulkActionRequest: one item per ref, in the
// order of the request.
type BulkActionResult struct {
	Results []BulkActionItem `json:"results"`
}

// BulkActionItem is what the action did to one task: the task as stored
// after it, or the error its own call would have answered.
type BulkActionItem struct {
	Ref   string     `json:"ref"`
	Task  *task.Task `json:"task,omitempty"`
	Error *Error     `json:"error,omitempty"`
}

// Failed counts the items that carry an error.
func (r BulkActionResult) Failed() int {
	n := 0
	for _, it := range r.Results {
		if it.Error != nil {
			n++
		}
	}
	return n
}
