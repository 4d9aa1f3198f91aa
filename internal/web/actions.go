package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// reason is what the daemon records as the reason of an action taken here.
const reason = "from the web dashboard"

// maxMessage bounds a message typed in the dashboard.
const maxMessage = 64 << 10

// actions are the dashboard's actions, each through the API route the CLI
// uses for it. They return what happened, in words.
var actions = map[string]func(ctx context.Context, c *client.Client, ref, text string) (string, error){
	"answer": func(ctx context.Context, c *client.Client, ref, text string) (string, error) {
		d, err := c.GetTask(ctx, ref)
		if err != nil {
			return "", err
		}
		if d.Task.Status != task.Waiting {
			return "", &client.Error{Status: http.StatusConflict, Body: api.Error{Code: api.CodeConflict,
				Message: fmt.Sprintf("%s is %s, not waiting for an answer; send it a message instead", ref, d.Task.Status)}}
		}
		m, err := c.SendMessage(ctx, ref, api.SendRequest{Text: text})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("answer #%d sent to %s", m.ID, ref), nil
	},
	"send":   send(false),
	"urgent": send(true),
	"nudge": func(ctx context.Context, c *client.Client, ref, text string) (string, error) {
		m, err := c.Nudge(ctx, ref, text)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("nudge #%d queued for %s", m.ID, ref), nil
	},
	"pause":  act(client.Pause),
	"resume": act(client.Resume),
	"cancel": act(client.Cancel),
	"escalate": func(ctx context.Context, c *client.Client, ref, _ string) (string, error) {
		e, err := c.Escalate(ctx, ref, "", reason)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("escalated %s: %s → %s", ref, e.From, e.To), nil
	},
	"merge-retry": func(ctx context.Context, c *client.Client, ref, _ string) (string, error) {
		e, err := c.MergeRetry(ctx, ref)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("merge of %s retried as #%d (%s)", ref, e.ID, e.State), nil
	},
}

// needsText are the actions that carry a message.
var needsText = map[string]bool{"answer": true, "send": true, "urgent": true, "nudge": true}

func send(urgent bool) func(ctx context.Context, c *client.Client, ref, text string) (string, error) {
	return func(ctx context.Context, c *client.Client, ref, text string) (string, error) {
		m, err := c.SendMessage(ctx, ref, api.SendRequest{Text: text, Urgent: urgent})
		if err != nil {
			return "", err
		}
		kind := "message"
		if urgent {
			kind = "urgent message"
		}
		return fmt.Sprintf("%s #%d queued for %s", kind, m.ID, ref), nil
	}
}

func act(a client.Action) func(ctx context.Context, c *client.Client, ref, _ string) (string, error) {
	return func(ctx context.Context, c *client.Client, ref, _ string) (string, error) {
		t, err := c.Act(ctx, ref, a, reason)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s: now %s", a, ref, t.Status), nil
	}
}

// action runs one action on a task. An htmx request gets the outcome as a
// fragment for #flash; a plain form post is sent back to the task.
func (s *Server) action(w http.ResponseWriter, r *http.Request) {
	name, ref := r.PathValue("action"), r.PathValue("id")
	do, ok := actions[name]
	if !ok {
		s.outcome(w, r, ref, http.StatusNotFound, fmt.Sprintf("no action %q", name))
		return
	}
	if !s.auth.allow(sessionOf(r).s) {
		w.Header().Set("Retry-After", "5")
		s.outcome(w, r, ref, http.StatusTooManyRequests, "too many actions at once; wait a few seconds")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxMessage+4096)
	text := strings.TrimSpace(r.PostFormValue("text"))
	if needsText[name] && text == "" {
		s.outcome(w, r, ref, http.StatusBadRequest, name+" needs a message")
		return
	}
	if len(text) > maxMessage {
		s.outcome(w, r, ref, http.StatusRequestEntityTooLarge, "the message is too long")
		return
	}
	msg, err := do(r.Context(), s.c, ref, text)
	if err != nil {
		code := http.StatusBadGateway
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status >= 400 && ce.Status < 500 {
			code = ce.Status
		}
		s.outcome(w, r, ref, code, name+" "+ref+": "+explain(err))
		return
	}
	s.log.Info("web action", "action", name, "task_id", ref)
	s.outcome(w, r, ref, http.StatusOK, msg)
}

// outcome answers an action: a fragment for htmx, otherwise a redirect to
// the task (or the error page).
func (s *Server) outcome(w http.ResponseWriter, r *http.Request, ref string, code int, text string) {
	text = words.Printable(text)
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(code)
		s.tpl.render(w, "flash", struct {
			Text string
			Err  bool
		}{text, code != http.StatusOK})
		return
	}
	if code == http.StatusOK {
		http.Redirect(w, r, "/tasks/"+url.PathEscape(ref), http.StatusSeeOther)
		return
	}
	w.WriteHeader(code)
	d := s.base(r, "action refused", "")
	d.Flash = text
	s.tpl.page(w, "error", d)
}
