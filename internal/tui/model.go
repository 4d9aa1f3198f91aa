// Package tui is the terminal dashboard (`neuraphage tui`): a Bubble Tea
// program that is a client of the daemon's API and its event stream, like
// the CLI. It loads the fleet once and then follows the stream; it never
// polls and never reaches into the daemon.
package tui

import (
	"context"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/sync/errgroup"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// screen is which view is shown.
type screen int

const (
	screenFleet screen = iota
	screenTask
	screenMerge
	screenKnowledge
)

// promptKind is what the bottom line is asking for.
type promptKind int

const (
	promptNone    promptKind = iota
	promptFilter             // the fleet's filter
	promptSearch             // the knowledge search
	promptText               // a message or a nudge for a task
	promptConfirm            // y/n before an action
)

// Model is the dashboard's Bubble Tea model.
type Model struct {
	ctx     context.Context
	backend Backend
	now     func() time.Time
	// events delivers the live stream, batched; nil before Run wires it.
	events <-chan event.Event

	w, h   int
	screen screen
	help   bool
	fleet  *fleetView
	all    bool
	filter string
	cursor int
	// top is the first row shown of the fleet.
	top int

	task      *taskView
	merge     api.MergeStatus
	knowledge []api.Learning
	search    string
	listTop   int

	prompt  promptKind
	input   string
	pending Action
	status  string
	loaded  bool
	ended   bool
	// editor and shell are the programs `o` and `!` run in a worktree.
	editor, shell string
}

// Options configure a Model.
type Options struct {
	// Now is the clock (tests fix it); time.Now when nil.
	Now func() time.Time
	// Editor and Shell run in a task's worktree ($EDITOR, $SHELL).
	Editor, Shell string
	// All starts the fleet view with finished tasks shown.
	All bool
}

// New returns a model reading from b. Run wires the live stream; a test
// feeds events with Update(EventsMsg{...}).
func New(ctx context.Context, b Backend, o Options) *Model {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Model{ctx: ctx, backend: b, now: o.Now, fleet: newFleet(), w: 80, h: 24, editor: o.Editor, shell: o.Shell, all: o.All}
}

// Messages.
type (
	snapshotMsg struct {
		list    []task.Summary
		health  []api.TaskHealth
		rebase  api.RebaseStatus
		reasons map[task.ID]string
		doing   map[task.ID]event.Event
		err     error
	}
	// EventsMsg is a batch of events from the live stream.
	EventsMsg   []event.Event
	streamEnded struct{ err error }
	taskMsg     struct {
		sum    task.Summary
		reason string
	}
	detailMsg struct {
		id     task.ID
		detail api.TaskDetail
		events []event.Event
		wt     api.Worktree
		wtErr  error
		merge  *api.MergeEntry
		ovl    []api.OverlapPair
		err    error
	}
	// headerMsg is the open task's worktree and merge state, read again.
	headerMsg struct {
		id    task.ID
		wt    api.Worktree
		wtErr error
		merge *api.MergeEntry
		ovl   []api.OverlapPair
	}
	// rebaseMsg is every task's distance from main, read again.
	rebaseMsg struct {
		st  api.RebaseStatus
		err error
	}
	diffMsg struct {
		id   task.ID
		text string
		err  error
	}
	mergeMsg struct {
		st  api.MergeStatus
		err error
	}
	knowledgeMsg struct {
		l   []api.Learning
		err error
	}
	doneMsg struct {
		text string
		err  error
	}
	// tickMsg redraws ages once a second; nothing is fetched.
	tickMsg time.Time
)

// Init loads the fleet and starts following the stream.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.loadFleet(), m.nextEvents(), tick())
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *Model) loadFleet() tea.Cmd {
	all := m.all
	return func() tea.Msg {
		var s snapshotMsg
		s.list, s.err = m.backend.Fleet(m.ctx, all)
		if s.err != nil {
			return s
		}
		// Health and the rebase forecast only add to the picture: a
		// daemon without them still shows its fleet.
		s.health, _ = m.backend.Health(m.ctx)
		s.rebase, _ = m.backend.Rebase(m.ctx)
		s.reasons = map[task.ID]string{}
		s.doing = map[task.ID]event.Event{}
		var mu sync.Mutex
		g := errgroup.Group{}
		g.SetLimit(8)
		for _, t := range s.list {
			switch t.Status {
			case task.Waiting, task.Paused, task.Failed:
				g.Go(func() error {
					r := m.lastReason(t.ID)
					mu.Lock()
					s.reasons[t.ID] = r
					mu.Unlock()
					return nil
				})
			case task.Running:
				g.Go(func() error {
					if e, ok := m.lastStep(t.ID); ok {
						mu.Lock()
						s.doing[t.ID] = e
						mu.Unlock()
					}
					return nil
				})
			}
		}
		_ = g.Wait()
		return s
	}
}

// lastReason is the reason of the task's last status change: the question
// of a waiting task, why a paused one paused.
func (m *Model) lastReason(id task.ID) string {
	evs, err := m.backend.Events(m.ctx, event.Query{Filter: event.Filter{TaskID: id, Kinds: []string{string(event.KindTaskStatus), string(event.KindNeedsInput)}}})
	if err != nil {
		return ""
	}
	for i := len(evs) - 1; i >= 0; i-- {
		switch p := evs[i].Payload.(type) {
		case event.NeedsInput:
			return p.Question
		case event.TaskStatus:
			if p.Reason != "" {
				return p.Reason
			}
		}
	}
	return ""
}

// lastStep is the running task's last turn start, tool call or result:
// what it is doing now, until the stream says more.
func (m *Model) lastStep(id task.ID) (event.Event, bool) {
	evs, err := m.backend.Events(m.ctx, event.Query{Filter: event.Filter{TaskID: id, Kinds: []string{string(event.KindTurnStarted), string(event.KindToolCall), string(event.KindToolResult)}}})
	if err != nil || len(evs) == 0 {
		return event.Event{}, false
	}
	return evs[len(evs)-1], true
}

// nextEvents waits for the next event and takes whatever else is already
// there with it, so a burst costs one update and one frame.
func (m *Model) nextEvents() tea.Cmd {
	ch := m.events
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return streamEnded{}
		}
		batch := EventsMsg{e}
		for len(batch) < 512 {
			select {
			case e, ok := <-ch:
				if !ok {
					return batch
				}
				batch = append(batch, e)
			default:
				return batch
			}
		}
		return batch
	}
}

func (m *Model) fetchTask(id task.ID) tea.Cmd {
	return func() tea.Msg {
		d, err := m.backend.Detail(m.ctx, id)
		if err != nil {
			return nil
		}
		return taskMsg{sum: d.Task.Summarize(), reason: m.lastReason(id)}
	}
}

func (m *Model) openTask(id task.ID) tea.Cmd {
	m.task = &taskView{id: id, loading: true}
	m.screen = screenTask
	return func() tea.Msg {
		var d detailMsg
		d.id = id
		d.detail, d.err = m.backend.Detail(m.ctx, id)
		if d.err != nil {
			return d
		}
		d.events, d.err = m.backend.Events(m.ctx, event.Query{Filter: event.Filter{TaskID: id}})
		d.wt, d.wtErr = m.backend.Worktree(m.ctx, id)
		d.merge = m.mergeEntry(id)
		d.ovl = m.overlaps(id, d.detail.Task.Status)
		return d
	}
}

// mergeEntry is the task's newest merge-queue entry, nil when none or when
// the queue cannot be read.
func (m *Model) mergeEntry(id task.ID) *api.MergeEntry {
	st, err := m.backend.Merge(m.ctx)
	if err != nil {
		return nil
	}
	for _, e := range append(st.Open, st.Recent...) {
		if e.TaskID == id {
			return &e
		}
	}
	return nil
}

// overlaps is the overlap radar's pairs of a running task (nil for a task
// not running, or when the radar cannot be read).
func (m *Model) overlaps(id task.ID, st task.Status) []api.OverlapPair {
	if st != task.Running && st != task.Waiting {
		return nil
	}
	ps, err := m.backend.Overlap(m.ctx, id)
	if err != nil {
		return nil
	}
	return ps
}

// loadHeader reads the open task's worktree and merge state again, after
// the stream said one of them changed.
func (m *Model) loadHeader(id task.ID) tea.Cmd {
	var st task.Status
	if m.task != nil && m.task.id == id {
		st = m.task.detail.Task.Status
	}
	return func() tea.Msg {
		h := headerMsg{id: id}
		h.wt, h.wtErr = m.backend.Worktree(m.ctx, id)
		h.merge = m.mergeEntry(id)
		h.ovl = m.overlaps(id, st)
		return h
	}
}

// loadRebase reads every task's distance from main again, after main moved.
func (m *Model) loadRebase() tea.Cmd {
	return func() tea.Msg {
		st, err := m.backend.Rebase(m.ctx)
		return rebaseMsg{st, err}
	}
}

func (m *Model) loadDiff() tea.Cmd {
	v := m.task
	wt := v.wt
	return func() tea.Msg {
		s, err := m.backend.Diff(m.ctx, wt)
		return diffMsg{id: v.id, text: s, err: err}
	}
}

func (m *Model) loadMerge() tea.Cmd {
	return func() tea.Msg {
		st, err := m.backend.Merge(m.ctx)
		return mergeMsg{st, err}
	}
}

func (m *Model) loadKnowledge() tea.Cmd {
	q := m.search
	return func() tea.Msg {
		l, err := m.backend.Knowledge(m.ctx, q)
		return knowledgeMsg{l, err}
	}
}

func (m *Model) do(a Action) tea.Cmd {
	return func() tea.Msg {
		s, err := m.backend.Do(m.ctx, a)
		return doneMsg{s, err}
	}
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = max(20, msg.Width), max(6, msg.Height)
		m.clampCursor()
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case snapshotMsg:
		if msg.err != nil {
			m.status = "loading the fleet: " + msg.err.Error()
			return m, nil
		}
		m.fleet.load(msg.list, msg.health, msg.rebase, msg.reasons)
		for _, e := range msg.doing {
			m.fleet.Apply(e)
		}
		m.loaded = true
		m.clampCursor()
	case EventsMsg:
		return m, m.applyEvents(msg)
	case streamEnded:
		m.ended = true
		m.status = "the daemon ended the event stream; press q to quit"
	case taskMsg:
		m.fleet.Put(msg.sum, msg.reason)
	case detailMsg:
		if m.task == nil || m.task.id != msg.id {
			return m, nil
		}
		m.task.loading = false
		if msg.err != nil {
			m.status = msg.err.Error()
			return m, nil
		}
		m.task.detail, m.task.wt, m.task.merge, m.task.overlaps = msg.detail, msg.wt, msg.merge, msg.ovl
		if msg.wtErr != nil {
			m.task.wtErr = msg.wtErr.Error()
		}
		// Events the stream brought while the history loaded are in both.
		live := m.task.lines
		m.task.lines = nil
		for _, e := range msg.events {
			m.task.add(e)
		}
		m.task.lines = append(m.task.lines, live...)
	case headerMsg:
		if m.task != nil && m.task.id == msg.id {
			m.task.wt, m.task.merge, m.task.wtErr, m.task.overlaps = msg.wt, msg.merge, "", msg.ovl
			if msg.wtErr != nil {
				m.task.wtErr = msg.wtErr.Error()
			}
		}
	case rebaseMsg:
		if msg.err != nil {
			m.status = "rebase status: " + msg.err.Error()
		} else {
			m.fleet.ApplyRebase(msg.st)
		}
	case diffMsg:
		if m.task != nil && m.task.id == msg.id {
			if msg.err != nil {
				m.task.diff = []string{"no diff: " + msg.err.Error()}
			} else if strings.TrimSpace(msg.text) == "" {
				m.task.diff = []string{"no changes against the base"}
			} else {
				m.task.diff = strings.Split(strings.TrimRight(msg.text, "\n"), "\n")
				for i, l := range m.task.diff {
					m.task.diff[i] = printable(l)
				}
			}
		}
	case mergeMsg:
		if msg.err != nil {
			m.status = "merge queue: " + msg.err.Error()
		} else {
			m.merge = msg.st
		}
	case knowledgeMsg:
		if msg.err != nil {
			m.status = "knowledge: " + msg.err.Error()
		} else {
			m.knowledge = msg.l
		}
	case doneMsg:
		if msg.err != nil {
			m.status = "failed: " + msg.err.Error()
		} else {
			m.status = msg.text
		}
	case tickMsg:
		return m, tick()
	case runIn:
		return m, execCmd(msg)
	case execDone:
		if msg.err != nil {
			m.status = "the program failed: " + msg.err.Error()
		}
	}
	return m, nil
}

// applyEvents folds a batch of events into the fleet and the open views.
func (m *Model) applyEvents(batch EventsMsg) tea.Cmd {
	var cmds []tea.Cmd
	fetch := map[task.ID]bool{}
	mergeChanged, mainMoved, headerChanged := false, false, false
	for _, e := range batch {
		if e.Kind == event.KindTextDelta {
			continue
		}
		if first(m.fleet.Apply(e)) && !fetch[e.TaskID] {
			fetch[e.TaskID] = true
			cmds = append(cmds, m.fetchTask(e.TaskID))
		}
		if m.task != nil && e.TaskID == m.task.id {
			m.task.add(e)
			if p, ok := e.Payload.(event.TaskStatus); ok {
				m.task.detail.Task.Status = p.To
			}
			if strings.HasPrefix(string(e.Kind), "worktree.") || strings.HasPrefix(string(e.Kind), "merge.") || strings.HasPrefix(string(e.Kind), "overlap.") {
				headerChanged = true
			}
		}
		if m.task != nil && e.TaskID != m.task.id && aboutOther(e, m.task.id) {
			// Another task's overlap with the open one.
			headerChanged = true
		}
		if strings.HasPrefix(string(e.Kind), "merge.") {
			mergeChanged = true
		}
		if e.Kind == event.KindMainUpdated {
			mainMoved = true
		}
	}
	if mergeChanged && m.screen == screenMerge {
		cmds = append(cmds, m.loadMerge())
	}
	// One read for a batch, however many events it holds.
	if headerChanged {
		cmds = append(cmds, m.loadHeader(m.task.id))
	}
	if mainMoved {
		cmds = append(cmds, m.loadRebase())
	}
	cmds = append(cmds, m.nextEvents())
	return tea.Batch(cmds...)
}

func (m *Model) clampCursor() {
	n := len(m.fleet.Visible(m.all, m.filter, m.now()))
	m.cursor = max(0, min(m.cursor, n-1))
	rows := m.fleetRows()
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if m.cursor >= m.top+rows {
		m.top = m.cursor - rows + 1
	}
	m.top = max(0, min(m.top, n-rows))
}

// fleetRows is how many task rows fit: the title, header, and the two
// bottom lines take four.
func (m *Model) fleetRows() int { return max(1, m.h-4) }

// selected is the task the actions apply to: the open task, or the
// fleet's highlighted one.
func (m *Model) selected() *row {
	if m.screen == screenTask && m.task != nil {
		if r := m.fleet.Rows[m.task.id]; r != nil {
			return r
		}
		return &row{Sum: m.task.detail.Task.Summarize()}
	}
	if m.screen != screenFleet {
		return nil
	}
	rows := m.fleet.Visible(m.all, m.filter, m.now())
	if m.cursor < len(rows) {
		return rows[m.cursor]
	}
	return nil
}
