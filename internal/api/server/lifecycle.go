package server

import (
	"context"
	"net/http"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Reports is what the server needs for task reports (lifecycle.Reporter).
type Reports interface {
	Report(ctx context.Context, id task.ID) (lifecycle.Report, error)
}

var _ Reports = lifecycle.Reporter{}

// taskReport serves a task's report (seed 003's summary).
func (s *Server) taskReport(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Reports == nil {
		writeJSON(w, http.StatusServiceUnavailable, api.Error{Code: api.CodeUnavailable,
			Message: "this daemon serves no task reports",
			Hint:    "restart the daemon (`neuraphage daemon stop`, then any command starts it again)"})
		return
	}
	id, err := s.cfg.Tasks.Resolve(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rep, err := s.cfg.Reports.Report(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, taskReport(rep))
}

func taskReport(r lifecycle.Report) api.TaskReport {
	out := api.TaskReport{TaskID: r.ID, Description: r.Description, Status: r.Status, Reason: r.Reason,
		DurationMs: r.Duration.Milliseconds(), PRURL: r.PR, Landed: r.Landed, Base: r.Base, Branch: r.Branch,
		Files: make([]api.FileChange, len(r.Files)), Range: r.Range, Note: r.Note, Summary: r.Summary,
		Logs: r.Logs, Markdown: lifecycle.Markdown(r)}
	for i, f := range r.Files {
		out.Files[i] = api.FileChange{Path: f.Path, Added: f.Added, Deleted: f.Deleted, Binary: f.Binary}
	}
	return out
}
