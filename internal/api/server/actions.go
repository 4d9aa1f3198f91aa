package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// bulkWorkers is how many tasks of one bulk action change at once: the
// store commits concurrent writes together, so a thousand resumes are a
// few commits, not a thousand.
const bulkWorkers = 32

// actions applies one action to several tasks (POST /v1/tasks/actions):
// each task as its own call would, its error in its own item.
func (s *Server) actions(w http.ResponseWriter, r *http.Request) {
	var req api.BulkActionRequest
	if !decode(w, r, &req) {
		return
	}
	ops := map[string]func(Tasks, context.Context, task.ID, string) (task.Task, error){
		"cancel": (Tasks).Cancel, "pause": (Tasks).Pause, "resume": (Tasks).Resume,
	}
	op, ok := ops[req.Action]
	switch {
	case !ok:
		writeJSON(w, http.StatusBadRequest, api.Error{Code: api.CodeInvalid,
			Message: fmt.Sprintf("action %q: want cancel, pause or resume", req.Action)})
		return
	case len(req.Refs) == 0 || len(req.Refs) > api.MaxBulkRefs:
		writeJSON(w, http.StatusBadRequest, api.Error{Code: api.CodeInvalid,
			Message: fmt.Sprintf("%d task ids: want 1 to %d", len(req.Refs), api.MaxBulkRefs)})
		return
	}
	for _, ref := range req.Refs {
		if strings.TrimSpace(ref) == "" {
			writeJSON(w, http.StatusBadRequest, api.Error{Code: api.CodeInvalid, Message: "a task id is empty"})
			return
		}
	}
	out := api.BulkActionResult{Results: make([]api.BulkActionItem, len(req.Refs))}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(bulkWorkers, len(req.Refs)) {
		wg.Go(func() {
			for i := range next {
				out.Results[i] = s.bulkItem(r, op, req.Refs[i], req.Reason)
			}
		})
	}
	for i := range req.Refs {
		next <- i
	}
	close(next)
	wg.Wait()
	writeJSON(w, http.StatusOK, out)
}

// bulkItem applies op to the task ref names.
func (s *Server) bulkItem(r *http.Request, op func(Tasks, context.Context, task.ID, string) (task.Task, error), ref, reason string) api.BulkActionItem {
	it := api.BulkActionItem{Ref: ref}
	id, err := s.cfg.Tasks.Resolve(r.Context(), ref)
	if err == nil {
		var t task.Task
		if t, err = op(s.cfg.Tasks, r.Context(), id, reason); err == nil {
			it.Task = &t
			return it
		}
	}
	_, e := s.errorBody(r, err)
	it.Error = &e
	return it
}
