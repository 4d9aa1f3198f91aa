package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/fleet"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

//go:embed templates
var templateFS embed.FS

// pages are the templates of whole pages; each is the layout with its
// "content".
var pages = []string{"fleet", "task", "diff", "diagnoses", "sync", "merge", "login", "error"}

// templates holds every page and the fragments the live stream sends.
type templates struct {
	pages map[string]*template.Template
	frag  *template.Template
}

func parseTemplates() *templates {
	t := &templates{pages: map[string]*template.Template{}}
	t.frag = template.Must(template.New("").ParseFS(templateFS, "templates/fragments.html"))
	for _, p := range pages {
		t.pages[p] = template.Must(template.New("").ParseFS(templateFS, "templates/layout.html", "templates/fragments.html", "templates/"+p+".html"))
	}
	return t
}

// page writes a whole page; a template error is the server's fault and is
// logged by the caller's status.
func (t *templates) page(w http.ResponseWriter, name string, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var b bytes.Buffer
	if err := t.pages[name].ExecuteTemplate(&b, "layout", d); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(b.Bytes())
}

// fragment renders one fragment ("rows", "row", "line") to a string.
func (t *templates) fragment(name string, data any) string {
	var b strings.Builder
	t.render(&b, name, data)
	return b.String()
}

func (t *templates) render(w io.Writer, name string, data any) {
	if err := t.frag.ExecuteTemplate(w, name, data); err != nil {
		fmt.Fprintf(w, "<p class=err>rendering %s failed</p>", name)
	}
}

// pageData is what every page's template gets.
type pageData struct {
	Title  string
	Nav    string
	CSRF   string
	Stream string
	Flash  string

	Rows   []rowView
	Need   int
	Task   *taskPage
	Lines  []lineView
	Diff   string
	Diag   []lineView
	Sync   []syncView
	Merge  []mergeView
	Recent []mergeView
}

// rowView is a fleet row as the page shows it; every string is printable
// (words.Printable) and html/template escapes it.
type rowView struct {
	ID, Status, Engine, Persona, Health, Doing, Tokens, Cost, Behind, Text string
	Attention                                                              bool
	Waiting, Pausable, Paused                                              bool
}

func viewRow(r *fleet.Row) rowView {
	p := words.Printable
	v := rowView{
		ID: p(string(r.Sum.ID)), Status: string(r.Sum.Status), Engine: p(r.Sum.Engine), Persona: p(r.Sum.Persona),
		Health: p(r.Health), Doing: p(r.Doing), Tokens: shortTokens(r.Tokens), Cost: fmt.Sprintf("$%.2f", r.Sum.Usage.CostUSD),
		Text: p(words.OneLine(words.Or(r.Attention, r.Sum.Description))), Attention: r.Attention != "",
		Waiting: r.Sum.Status == task.Waiting, Paused: r.Sum.Status == task.Paused,
		Pausable: r.Sum.Status == task.Running || r.Sum.Status == task.Queued || r.Sum.Status == task.Waiting,
	}
	if r.Behind > 0 {
		v.Behind = fmt.Sprintf("↓%d", r.Behind)
	}
	return v
}

func shortTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// lineView is one entry of a conversation or of the diagnoses.
type lineView struct {
	ID   int64
	Task string
	Kind string
	Time string
	Text string
}

// viewLine is an event as the conversation shows it (fleet.Describe, which
// makes every text printable); ok is false for events it leaves out.
func viewLine(e event.Event) (lineView, bool) {
	s := fleet.Describe(e)
	if s == "" {
		return lineView{}, false
	}
	kind := strings.SplitN(string(e.Kind), ".", 2)[0]
	return lineView{ID: e.ID, Task: words.Printable(string(e.TaskID)), Kind: kind, Time: e.Time.Format("15:04:05"), Text: s}, true
}

// taskPage is the task view's head.
type taskPage struct {
	Row         rowView
	Description string
	Question    string
	Worktree    string
	Merge       string
	Pending     int
}

type syncView struct {
	From, To, Urgency, State, Message, Time string
}

func viewSync(m api.SyncMessage) syncView {
	p := words.Printable
	return syncView{From: p(string(m.From)), To: p(string(m.To)), Urgency: p(m.Urgency), State: p(m.State),
		Message: p(m.Message), Time: m.CreatedAt.Format("Jan 2 15:04")}
}

type mergeView struct {
	ID                          int64
	Task, State, Target, Detail string
	Attempts                    int
	Retry                       bool
}

func viewMerge(e api.MergeEntry) mergeView {
	p := words.Printable
	return mergeView{ID: e.ID, Task: p(string(e.TaskID)), State: p(e.State), Target: p(e.Target),
		Detail: p(words.OneLine(e.Detail)), Attempts: e.Attempts, Retry: e.State == api.MergeParked}
}
