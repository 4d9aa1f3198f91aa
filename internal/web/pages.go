package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/fleet"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// fleetStatuses are the statuses the fleet lists (failed ones need the
// user too; fleet.Visible keeps the recent ones).
var fleetStatuses = []task.Status{task.Queued, task.Running, task.Waiting, task.Paused, task.Merging, task.Failed}

// conversationLimit is how many of a task's events the task page shows
// at first; the stream replays the ones after the last shown.
const conversationLimit = 500

func (s *Server) base(r *http.Request, title, nav string) pageData {
	return pageData{Title: title, Nav: nav, CSRF: sessionOf(r).s.csrf}
}

// fail answers a request the daemon refused, with its message.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	code := http.StatusBadGateway
	var ce *client.Error
	if errors.As(err, &ce) && ce.Status >= 400 && ce.Status < 500 {
		code = ce.Status
	}
	w.WriteHeader(code)
	d := s.base(r, what, "")
	d.Flash = what + ": " + words.Printable(explain(err))
	s.tpl.page(w, "error", d)
}

// explain is a daemon error as the user reads it.
func explain(err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		m := ce.Body.Message
		if ce.Body.Hint != "" {
			m += " (" + ce.Body.Hint + ")"
		}
		if m != "" {
			return m
		}
	}
	return err.Error()
}

// loadFleet reads the fleet as the TUI does: the listing, the Watcher's
// health and the main watcher's distances.
func loadFleet(ctx context.Context, c *client.Client) (*fleet.Fleet, error) {
	list, err := c.ListTasks(ctx, fleetStatuses, false)
	if err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	// A daemon without the Watcher or the main watcher still shows its
	// fleet.
	health, _ := c.SupervisionHealth(ctx, "")
	rb, _ := c.RebaseStatus(ctx)
	f := fleet.New()
	f.Load(list, health, rb, nil)
	return f, nil
}

func rowsOf(f *fleet.Fleet) (rows []rowView, need int) {
	vis := f.Visible(false, "", time.Now())
	rows = make([]rowView, len(vis))
	for i, r := range vis {
		rows[i] = viewRow(r)
		if r.Attention != "" {
			need++
		}
	}
	return rows, need
}

// fleetPage reads the fleet from the daemon now, so that the page shows
// what the daemon holds at the request; the stream keeps it current.
func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) {
	f, err := loadFleet(r.Context(), s.c)
	if err != nil {
		s.fail(w, r, "reading the fleet", err)
		return
	}
	rows, need := rowsOf(f)
	d := s.base(r, "fleet", "fleet")
	d.Rows, d.Need, d.Stream = rows, need, "/events"
	s.tpl.page(w, "fleet", d)
}

// taskHead reads a task for the task and diff pages.
func (s *Server) taskHead(ctx context.Context, ref string) (*taskPage, error) {
	det, err := s.c.GetTask(ctx, ref)
	if err != nil {
		return nil, err
	}
	t := det.Task
	f := fleet.New()
	reason := ""
	if evs, err := s.c.Events(ctx, event.Query{Filter: event.Filter{TaskID: t.ID, Kinds: []string{string(event.KindTaskStatus), string(event.KindNeedsInput)}}}); err == nil {
		for _, e := range evs {
			switch p := e.Payload.(type) {
			case event.TaskStatus:
				reason = p.Reason
			case event.NeedsInput:
				reason = p.Question
			}
		}
	}
	row := f.Put(t.Summarize(), reason)
	if h, err := s.c.SupervisionHealth(ctx, string(t.ID)); err == nil && len(h) > 0 {
		row.Health = h[0].Status
	}
	p := &taskPage{Row: viewRow(row), Description: words.Printable(t.Description), Pending: len(det.Pending), Worktree: "none", Merge: "none"}
	if t.Status == task.Waiting {
		p.Question = words.Printable(reason)
	}
	if wt, err := s.c.Worktree(ctx, string(t.ID)); err == nil {
		p.Worktree = words.Printable(wt.State + " " + wt.Branch)
	}
	if ms, err := s.c.MergeStatus(ctx, 50); err == nil {
		for _, e := range slices.Concat(ms.Open, ms.Recent) {
			if e.TaskID == t.ID {
				p.Merge = fmt.Sprintf("#%d %s", e.ID, words.Printable(e.State))
				break
			}
		}
	}
	return p, nil
}

func (s *Server) taskPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	head, err := s.taskHead(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, "reading the task", err)
		return
	}
	evs, err := s.c.Events(ctx, event.Query{Filter: event.Filter{TaskID: task.ID(head.Row.ID)}})
	if err != nil {
		s.fail(w, r, "reading the conversation", err)
		return
	}
	d := s.base(r, head.Row.ID, "")
	d.Task, d.Stream = head, "/events?task="+head.Row.ID
	if len(evs) > conversationLimit {
		evs = evs[len(evs)-conversationLimit:]
	}
	for _, e := range evs {
		if l, ok := viewLine(e); ok {
			l.Task = ""
			d.Lines = append(d.Lines, l)
		}
	}
	s.tpl.page(w, "task", d)
}

// diffPage shows the task's worktree against its base commit (git diff,
// read-only, as the TUI does).
func (s *Server) diffPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	head, err := s.taskHead(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, "reading the task", err)
		return
	}
	d := s.base(r, head.Row.ID+" diff", "")
	d.Task = head
	wt, err := s.c.Worktree(ctx, head.Row.ID)
	switch {
	case err != nil:
		d.Diff = "no worktree: " + explain(err)
	case wt.Path == "" || wt.BaseCommit == "" || wt.State != api.WorktreeActive:
		d.Diff = "the task has no worktree (state " + wt.State + ")"
	default:
		out, err := git.Run(ctx, wt.Path, "diff", "--stat", "--patch", wt.BaseCommit)
		if err != nil {
			out = "git diff: " + err.Error()
		}
		d.Diff = words.Or(out, "no changes")
	}
	d.Diff = printableBlock(d.Diff)
	s.tpl.page(w, "diff", d)
}

// printableBlock keeps a block's lines and escapes everything else.
func printableBlock(s string) string {
	var b []byte
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '\n' {
			b = append(b, words.Printable(s[start:i])...)
			if i < len(s) {
				b = append(b, '\n')
			}
			start = i + 1
		}
	}
	return string(b)
}

func (s *Server) diagnosesPage(w http.ResponseWriter, r *http.Request) {
	evs, err := s.c.Diagnoses(r.Context(), "", 200)
	if err != nil {
		s.fail(w, r, "reading the Watcher's diagnoses", err)
		return
	}
	d := s.base(r, "diagnoses", "diagnoses")
	d.Stream = "/events?diagnoses=1"
	for _, e := range evs {
		if l, ok := viewDiagnosis(e); ok {
			d.Diag = append(d.Diag, l)
		}
	}
	s.tpl.page(w, "diagnoses", d)
}

// viewDiagnosis is a watcher.* event as the diagnoses page lists it.
func viewDiagnosis(e event.Event) (lineView, bool) {
	if !isDiagnosis(e) {
		return lineView{}, false
	}
	l, ok := viewLine(e)
	if !ok {
		l = lineView{ID: e.ID, Task: words.Printable(string(e.TaskID)), Kind: "watcher", Time: e.Time.Format("Jan 2 15:04:05"),
			Text: words.Printable(words.Clip(words.OneLine(fmt.Sprintf("%s %+v", e.Kind, e.Payload)), 400))}
	}
	return l, true
}

func isDiagnosis(e event.Event) bool {
	return len(e.Kind) > 8 && e.Kind[:8] == "watcher." || e.Kind == event.KindHealthCheck
}

func (s *Server) syncPage(w http.ResponseWriter, r *http.Request) {
	ms, err := s.c.SyncMessages(r.Context(), "", 200)
	if err != nil {
		s.fail(w, r, "reading the sync messages", err)
		return
	}
	d := s.base(r, "sync messages", "sync")
	for i := len(ms) - 1; i >= 0; i-- { // newest first
		d.Sync = append(d.Sync, viewSync(ms[i]))
	}
	s.tpl.page(w, "sync", d)
}

func (s *Server) mergePage(w http.ResponseWriter, r *http.Request) {
	ms, err := s.c.MergeStatus(r.Context(), 50)
	if err != nil {
		s.fail(w, r, "reading the merge queue", err)
		return
	}
	d := s.base(r, "merge queue", "merge")
	for _, e := range ms.Open {
		d.Merge = append(d.Merge, viewMerge(e))
	}
	for _, e := range ms.Recent {
		d.Recent = append(d.Recent, viewMerge(e))
	}
	s.tpl.page(w, "merge", d)
}
