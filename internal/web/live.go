package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/fleet"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// subBuffer is how many frames a browser may fall behind before the hub
// gives up on it; the page then reloads itself.
const subBuffer = 256

// frame is one server-sent event: a named HTML fragment.
type frame struct{ name, data string }

// sub is one connected page: the fleet (task ""), a task's view, or the
// diagnoses.
type sub struct {
	task task.ID
	diag bool
	ch   chan frame
	// lost is closed when the hub dropped a frame for this page.
	lost     chan struct{}
	lostOnce sync.Once
}

func (s *sub) send(f frame) {
	select {
	case s.ch <- f:
	default:
		s.lostOnce.Do(func() { close(s.lost) })
	}
}

// hub follows the daemon's watch stream, keeps the fleet current and
// renders each change once for every page that shows it.
type hub struct {
	c   *client.Client
	tpl *templates
	log interface {
		Warn(string, ...any)
	}

	mu   sync.Mutex
	f    *fleet.Fleet // nil until the first load
	subs map[*sub]struct{}
	// rows caches each row's fragment with the Rev it was rendered at: a
	// whole-fleet frame renders only the rows that changed.
	rows map[*fleet.Row]renderedRow
	// fleetSize is the room a whole-fleet frame is likely to need.
	fleetSize int
}

type renderedRow struct {
	rev  uint64
	html string
}

func newHub(c *client.Client, tpl *templates, log interface{ Warn(string, ...any) }) *hub {
	return &hub{c: c, tpl: tpl, log: log, subs: map[*sub]struct{}{}, rows: map[*fleet.Row]renderedRow{}}
}

// run follows the stream until ctx ends, reconnecting after a break with
// a growing pause.
func (h *hub) run(ctx context.Context) error {
	pause := 100 * time.Millisecond
	for {
		err := h.follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		h.log.Warn("the web dashboard lost the watch stream; reconnecting", "err", err, "in", pause)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, 10*time.Second)
	}
}

// follow opens the watch stream, then loads the fleet (so that nothing
// falls between the two), then applies every event.
func (h *hub) follow(ctx context.Context) error {
	st, err := h.c.Watch(ctx, event.Query{AfterID: -1})
	if err != nil {
		return err
	}
	defer st.Close()
	f, err := loadFleet(ctx, h.c)
	if err != nil {
		return err
	}
	h.load(f)
	for {
		e, err := st.Next()
		if err != nil {
			return err
		}
		h.apply(ctx, e)
	}
}

// load replaces the fleet and sends it whole to every fleet page.
func (h *hub) load(f *fleet.Fleet) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.f = f
	clear(h.rows)
	frames := h.fleetFrames()
	for s := range h.subs {
		if s.task == "" && !s.diag {
			for _, fr := range frames {
				s.send(fr)
			}
		}
	}
}

// fleetFrames renders the whole fleet and the count of tasks that need
// the user. The caller holds h.mu.
func (h *hub) fleetFrames() []frame {
	vis := h.f.Visible(false, "", time.Now())
	if len(vis) == 0 {
		return []frame{{"fleet", h.tpl.fragment("rows", nil)}, {"need", "0 need you"}}
	}
	var b strings.Builder
	b.Grow(h.fleetSize)
	need := 0
	for _, r := range vis {
		b.WriteString(h.rowHTML(r))
		if r.Attention != "" {
			need++
		}
	}
	h.fleetSize = b.Len() + b.Len()/8
	return []frame{{"fleet", b.String()}, {"need", strconv.Itoa(need) + " need you"}}
}

// rowHTML is a row's fragment, rendered again only when the row changed.
// The caller holds h.mu.
func (h *hub) rowHTML(r *fleet.Row) string {
	if c, ok := h.rows[r]; ok && c.rev == r.Rev {
		return c.html
	}
	html := h.tpl.fragment("row", viewRow(r))
	h.rows[r] = renderedRow{rev: r.Rev, html: html}
	return html
}

// fleetPages reports whether a fleet page is connected. The caller holds
// h.mu.
func (h *hub) fleetPages() bool {
	for s := range h.subs {
		if s.task == "" && !s.diag {
			return true
		}
	}
	return false
}

// apply folds one event into the fleet and sends what changed.
func (h *hub) apply(ctx context.Context, e event.Event) {
	h.mu.Lock()
	if h.f == nil {
		h.mu.Unlock()
		return
	}
	unknown, changed := h.f.Apply(e)
	h.mu.Unlock()
	if unknown {
		// A task the fleet does not know: read it (outside the lock).
		if d, err := h.c.GetTask(ctx, string(e.TaskID)); err == nil {
			h.mu.Lock()
			h.f.Put(d.Task.Summarize(), reasonOf(e))
			h.mu.Unlock()
			changed = true
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		return
	}
	var fleetFrames []frame
	var rowFrame *frame
	if changed {
		if r := h.f.Rows[e.TaskID]; r != nil {
			rowFrame = &frame{"row", h.rowHTML(r)}
		}
		switch {
		case !h.fleetPages():
		case h.f.Dirty():
			fleetFrames = h.fleetFrames()
		case rowFrame != nil:
			fleetFrames = []frame{*rowFrame}
		}
	}
	var line, diag *frame
	if l, ok := viewLine(e); ok {
		task := l.Task
		l.Task = ""
		line = &frame{"line", h.tpl.fragment("line", l)}
		if isDiagnosis(e) {
			l.Task = task
			diag = &frame{"line", h.tpl.fragment("line", l)}
		}
	} else if l, ok := viewDiagnosis(e); ok {
		diag = &frame{"line", h.tpl.fragment("line", l)}
	}
	for s := range h.subs {
		switch {
		case s.diag:
			if diag != nil {
				s.send(*diag)
			}
		case s.task == "":
			for _, f := range fleetFrames {
				s.send(f)
			}
		case s.task == e.TaskID:
			if rowFrame != nil {
				s.send(*rowFrame)
			}
			if line != nil {
				s.send(*line)
			}
		}
	}
}

func reasonOf(e event.Event) string {
	switch p := e.Payload.(type) {
	case event.TaskStatus:
		return p.Reason
	case event.NeedsInput:
		return p.Question
	}
	return ""
}

// subscribe adds a page; a fleet page gets the whole fleet at once, so
// that nothing between its render and its stream is missed.
func (h *hub) subscribe(t task.ID, diag bool) *sub {
	s := &sub{task: t, diag: diag, ch: make(chan frame, subBuffer), lost: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[s] = struct{}{}
	if h.f != nil && t == "" && !diag {
		for _, f := range h.fleetFrames() {
			s.send(f)
		}
	}
	if h.f != nil && t != "" {
		if r := h.f.Rows[t]; r != nil {
			s.send(frame{"row", h.rowHTML(r)})
		}
	}
	return s
}

func (h *hub) unsubscribe(s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// events is the Server-Sent Events stream of a page: ?task=ID for a task's
// view (with ?after=N, the conversation after event N is replayed first),
// ?diagnoses=1 for the diagnoses, the fleet otherwise.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	t := task.ID(q.Get("task"))
	sub := s.hub.subscribe(t, q.Get("diagnoses") != "")
	defer s.hub.unsubscribe(sub)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var b strings.Builder
	b.WriteString(": live\n\n")
	if after, err := strconv.ParseInt(q.Get("after"), 10, 64); err == nil && t != "" {
		evs, err := s.c.Events(ctx, event.Query{Filter: event.Filter{TaskID: t}, AfterID: after})
		if err == nil {
			for _, e := range evs {
				if l, ok := viewLine(e); ok {
					l.Task = ""
					writeFrame(&b, frame{"line", s.tpl.fragment("line", l)})
				}
			}
		}
	}
	if _, err := fmt.Fprint(w, b.String()); err != nil {
		return
	}
	fl.Flush()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.lost:
			b.Reset()
			writeFrame(&b, frame{"reload", "the page fell behind"})
			fmt.Fprint(w, b.String())
			fl.Flush()
			return
		case f := <-sub.ch:
			b.Reset()
			writeFrame(&b, f)
			for more := true; more; {
				select {
				case f := <-sub.ch:
					writeFrame(&b, f)
				default:
					more = false
				}
			}
			if _, err := fmt.Fprint(w, b.String()); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// writeFrame writes one event in the text/event-stream format: each line
// of data on its own data: line.
func writeFrame(b *strings.Builder, f frame) {
	b.WriteString("event: ")
	b.WriteString(f.name)
	b.WriteByte('\n')
	for _, l := range strings.Split(f.data, "\n") {
		b.WriteString("data: ")
		b.WriteString(strings.TrimSuffix(l, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}
