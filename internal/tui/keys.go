package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// keyHelp lists every key, as the help overlay shows it.
var keyHelp = [][2]string{
	{"↑/k ↓/j", "move (fleet, lists); scroll (task view)"},
	{"pgup pgdn", "page up, page down"},
	{"g G", "first, last"},
	{"enter", "open the task"},
	{"esc", "back; close help; cancel a prompt"},
	{"/", "filter the fleet (id, status, persona, engine, text)"},
	{"a", "show every task, finished ones too (toggle)"},
	{"d", "task view: diff of the worktree against its base (toggle)"},
	{"m", "merge queue"},
	{"L", "knowledge (learnings); / searches"},
	{"s", "answer / send a message"},
	{"S", "send an urgent message (interrupts the turn)"},
	{"n", "nudge"},
	{"p", "pause (confirm)"},
	{"r", "resume (confirm)"},
	{"x", "cancel (confirm)"},
	{"e", "escalate to the next persona (confirm)"},
	{"b", "rebase onto main (confirm)"},
	{"M", "merge: enqueue (confirm)"},
	{"R", "merge: retry a parked merge (confirm)"},
	{"o", "open the worktree in $EDITOR"},
	{"!", "open a shell in the worktree"},
	{"?", "this help"},
	{"q ctrl+c", "quit"},
}

// key handles one key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s == "ctrl+c" {
		return tea.Quit
	}
	if m.prompt != promptNone {
		return m.promptKey(k)
	}
	if m.help {
		if s == "esc" || s == "?" || s == "q" {
			m.help = false
		}
		return nil
	}
	switch s {
	case "q":
		if m.screen == screenFleet {
			return tea.Quit
		}
		m.back()
		return nil
	case "esc", "backspace":
		if m.screen == screenFleet && m.filter != "" {
			m.filter = ""
			m.fleet.Touch()
			m.clampCursor()
		}
		m.back()
		return nil
	case "?":
		m.help = true
		return nil
	case "m":
		m.screen, m.listTop = screenMerge, 0
		return m.loadMerge()
	case "L":
		m.screen, m.listTop = screenKnowledge, 0
		return m.loadKnowledge()
	}
	switch m.screen {
	case screenFleet:
		if cmd, ok := m.fleetKey(s); ok {
			return cmd
		}
	case screenTask:
		if cmd, ok := m.taskKey(s); ok {
			return cmd
		}
	case screenMerge, screenKnowledge:
		switch s {
		case "up", "k":
			m.listTop = max(0, m.listTop-1)
		case "down", "j":
			m.listTop++
		case "/":
			if m.screen == screenKnowledge {
				m.prompt, m.input = promptSearch, m.search
			}
		}
		return nil
	}
	return m.actionKey(s)
}

func (m *Model) back() {
	switch m.screen {
	case screenTask:
		m.task = nil
	}
	m.screen = screenFleet
}

func (m *Model) fleetKey(s string) (tea.Cmd, bool) {
	n := len(m.fleet.Visible(m.all, m.filter, m.now()))
	switch s {
	case "up", "k":
		m.cursor--
	case "down", "j":
		m.cursor++
	case "pgup":
		m.cursor -= m.fleetRows()
	case "pgdown":
		m.cursor += m.fleetRows()
	case "g", "home":
		m.cursor = 0
	case "G", "end":
		m.cursor = n - 1
	case "/":
		m.prompt, m.input = promptFilter, m.filter
	case "a":
		m.all = !m.all
		m.fleet.Touch()
		m.clampCursor()
		if m.all {
			return m.loadFleet(), true
		}
	case "enter":
		if r := m.selected(); r != nil {
			return m.openTask(r.Sum.ID), true
		}
	default:
		return nil, false
	}
	m.clampCursor()
	return nil, true
}

func (m *Model) taskKey(s string) (tea.Cmd, bool) {
	v := m.task
	page := max(1, m.h-6)
	switch s {
	case "up", "k":
		v.scroll++
	case "down", "j":
		v.scroll = max(0, v.scroll-1)
	case "pgup":
		v.scroll += page
	case "pgdown":
		v.scroll = max(0, v.scroll-page)
	case "g", "home":
		v.scroll = len(v.lines)
	case "G", "end":
		v.scroll = 0
	case "d":
		v.showDiff = !v.showDiff
		v.scroll = 0
		if v.showDiff {
			v.diff = []string{"loading the diff…"}
			return m.loadDiff(), true
		}
	default:
		return nil, false
	}
	n := len(v.lines)
	if v.showDiff {
		n = len(v.diff)
	}
	v.scroll = min(v.scroll, max(0, n-1))
	return nil, true
}

// actionKey starts an action on the selected task.
func (m *Model) actionKey(s string) tea.Cmd {
	r := m.selected()
	if r == nil {
		return nil
	}
	id := r.Sum.ID
	kinds := map[string]ActionKind{"p": ActPause, "r": ActResume, "x": ActCancel, "e": ActEscalate, "b": ActRebase, "M": ActMergeEnqueue, "R": ActMergeRetry}
	switch s {
	case "s", "S", "n":
		kind := map[string]ActionKind{"s": ActSend, "S": ActSendUrgent, "n": ActNudge}[s]
		m.pending = Action{Kind: kind, TaskID: id}
		m.prompt, m.input = promptText, ""
	case "o", "!":
		return m.openWorktree(r, s == "!")
	default:
		kind, ok := kinds[s]
		if !ok {
			return nil
		}
		m.pending = Action{Kind: kind, TaskID: id}
		m.prompt = promptConfirm
	}
	return nil
}

func (m *Model) openWorktree(r *row, shell bool) tea.Cmd {
	dir := ""
	if m.task != nil && m.task.id == r.Sum.ID {
		dir = m.task.wt.Path
	}
	id := r.Sum.ID
	prog := m.editor
	if shell {
		prog = m.shell
	}
	if prog == "" {
		m.status = "set $EDITOR (or $SHELL) to open a worktree"
		return nil
	}
	return func() tea.Msg {
		if dir == "" {
			wt, err := m.backend.Worktree(m.ctx, id)
			if err != nil {
				return doneMsg{err: err}
			}
			if wt.Path == "" {
				return doneMsg{err: fmt.Errorf("%s has no worktree (%s)", id, wt.State)}
			}
			dir = wt.Path
		}
		return runIn{dir: dir, prog: prog, shell: shell}
	}
}

// promptKey handles a key while the bottom line asks for something.
func (m *Model) promptKey(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if m.prompt == promptConfirm {
		m.prompt = promptNone
		if s == "y" || s == "Y" || s == "enter" {
			m.status = fmt.Sprintf("%s %s…", m.pending.Kind, m.pending.TaskID)
			return m.do(m.pending)
		}
		m.status = "not done"
		return nil
	}
	switch s {
	case "esc":
		m.prompt, m.input = promptNone, ""
		return nil
	case "enter":
		p, text := m.prompt, strings.TrimSpace(m.input)
		m.prompt, m.input = promptNone, ""
		switch p {
		case promptFilter:
			m.filter = text
			m.fleet.Touch()
			m.cursor, m.top = 0, 0
			m.clampCursor()
		case promptSearch:
			m.search = text
			return m.loadKnowledge()
		case promptText:
			if text == "" {
				m.status = "nothing sent: the message is empty"
				return nil
			}
			a := m.pending
			a.Text = text
			m.status = fmt.Sprintf("%s %s…", a.Kind, a.TaskID)
			return m.do(a)
		}
		return nil
	case "backspace":
		if r := []rune(m.input); len(r) > 0 {
			m.input = string(r[:len(r)-1])
		}
	case "ctrl+u":
		m.input = ""
	case "space":
		m.input += " "
	default:
		if t := k.Key().Text; t != "" {
			m.input += t
		}
	}
	if m.prompt == promptFilter {
		// The filter applies as it is typed.
		m.filter = m.input
		m.fleet.Touch()
		m.cursor, m.top = 0, 0
		m.clampCursor()
	}
	return nil
}

func printable(s string) string {
	return words.Printable(strings.ReplaceAll(s, "\t", "    "))
}

var _ = task.Running
