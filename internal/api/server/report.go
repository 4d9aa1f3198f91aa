package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// taskLog serves a task's stored conversation.
func (s *Server) taskLog(w http.ResponseWriter, r *http.Request) {
	from := 0
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.fail(w, r, &task.InvalidError{Field: "from", Msg: "must be an entry number, 0 or more"})
			return
		}
		from = n
	}
	id, entries, err := s.cfg.Tasks.Log(r.Context(), r.PathValue("ref"), from)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := api.TaskLog{TaskID: id, Entries: make([]api.LogEntry, len(entries))}
	for i, e := range entries {
		out.Entries[i] = api.LogEntry{Seq: e.Seq, Turn: e.Turn, At: e.At, Message: e.Message}
	}
	writeJSON(w, http.StatusOK, out)
}

// cost serves the cost ledger: the rows of the grouping asked for and the
// total of the same selection.
func (s *Server) cost(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	rep := api.CostReport{By: v.Get("by"), Rows: []api.CostRow{}}
	if since := v.Get("since"); since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			s.fail(w, r, &task.InvalidError{Field: "since", Msg: "must be an RFC 3339 time"})
			return
		}
		rep.Since = t
	}
	ref := v.Get("task")
	if ref != "" {
		id, err := s.cfg.Tasks.Resolve(r.Context(), ref)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		rep.TaskID, ref = id, string(id)
	}
	if rep.By != "" {
		rows, err := s.cfg.Tasks.Costs(r.Context(), ref, rep.By, rep.Since)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		for _, row := range rows {
			rep.Rows = append(rep.Rows, costRow(row))
		}
	}
	total, err := s.cfg.Tasks.Costs(r.Context(), ref, "", rep.Since)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rep.Total = api.CostRow{Key: "total"}
	if len(total) > 0 {
		rep.Total = costRow(total[0])
	}
	writeJSON(w, http.StatusOK, rep)
}

func costRow(r store.CostRow) api.CostRow {
	return api.CostRow{Key: r.Key, Calls: r.Calls, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, CostUSD: r.CostUSD}
}
