package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

var (
	styleTitle     = lipgloss.NewStyle().Bold(true)
	styleHeader    = lipgloss.NewStyle().Faint(true)
	styleSelected  = lipgloss.NewStyle().Reverse(true)
	styleAttention = lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true)
	styleStatus    = lipgloss.NewStyle().Faint(true)
)

// View draws the screen: exactly m.h lines, none wider than m.w.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "neuraphage"
	return v
}

// Render is the screen as text with styles.
func (m *Model) Render() string {
	var lines []string
	if m.help {
		lines = m.renderHelp()
	} else {
		switch m.screen {
		case screenFleet:
			lines = m.renderFleet()
		case screenTask:
			lines = m.renderTask()
		case screenMerge:
			lines = m.renderMerge()
		case screenKnowledge:
			lines = m.renderKnowledge()
		}
	}
	body := m.h - 1
	if len(lines) > body {
		lines = lines[:body]
	}
	for len(lines) < body {
		lines = append(lines, "")
	}
	lines = append(lines, m.bottom())
	return strings.Join(lines, "\n")
}

func (m *Model) bottom() string {
	var s string
	switch m.prompt {
	case promptFilter:
		s = "filter: " + m.input + "█"
	case promptSearch:
		s = "search learnings: " + m.input + "█"
	case promptText:
		s = fmt.Sprintf("%s to %s (enter sends, esc cancels): %s█", m.pending.Kind, m.pending.TaskID, m.input)
	case promptConfirm:
		s = fmt.Sprintf("%s %s? [y/N]", m.pending.Kind, m.pending.TaskID)
	default:
		s = m.status
		if s == "" {
			s = "? help  enter open  / filter  a all  s send  p pause  r resume  m merges  L knowledge  q quit"
			if m.w < 100 {
				s = "? help  enter open  / filter  s send  p pause  r resume  q quit"
			}
		}
		return styleStatus.Render(ansi.Truncate(words.Printable(s), m.w, "…"))
	}
	return ansi.Truncate(words.Printable(s), m.w, "…")
}

func (m *Model) renderFleet() []string {
	rows := m.fleet.Visible(m.all, m.filter, m.now())
	need := 0
	for _, r := range rows {
		if r.Attention != "" {
			need++
		}
	}
	scope := "unfinished"
	if m.all {
		scope = "all"
	}
	title := fmt.Sprintf("neuraphage — %d tasks (%s), %d need you", len(rows), scope, need)
	if m.filter != "" {
		title += "  filter: " + words.Printable(m.filter)
	}
	if !m.loaded {
		title += "  loading…"
	}
	if m.ended {
		title += "  [stream ended]"
	}
	out := []string{styleTitle.Render(ansi.Truncate(title, m.w, "…")), styleHeader.Render(fleetHeader(m.w))}
	now := m.now()
	end := min(len(rows), m.top+m.fleetRows())
	for i := m.top; i < end; i++ {
		r := rows[i]
		out = append(out, m.fleet.styled(r, m.w, now, i == m.cursor))
	}
	if len(rows) == 0 && m.loaded {
		out = append(out, "  no tasks"+map[bool]string{true: " match the filter", false: ""}[m.filter != ""])
	}
	return out
}

func (m *Model) renderTask() []string {
	if m.task == nil {
		return nil
	}
	return m.task.render(m.fleet.Rows[m.task.id], m.w, m.h-1)
}

func (m *Model) renderMerge() []string {
	out := []string{styleTitle.Render(fmt.Sprintf("merge queue — %d open, %d recent  (esc back)", len(m.merge.Open), len(m.merge.Recent)))}
	var lines []string
	add := func(head string, es []mergeLine) {
		lines = append(lines, styleHeader.Render(head))
		for _, e := range es {
			lines = append(lines, ansi.Truncate(e.String(), m.w, "…"))
		}
	}
	add("open", mergeLines(m.merge.Open))
	add("recent", mergeLines(m.merge.Recent))
	return append(out, window(lines, m.listTop, m.h-2)...)
}

func (m *Model) renderKnowledge() []string {
	title := fmt.Sprintf("knowledge — %d learnings", len(m.knowledge))
	if m.search != "" {
		title += " matching " + words.Printable(m.search)
	}
	out := []string{styleTitle.Render(title + "  (/ search, esc back)")}
	var lines []string
	for _, l := range m.knowledge {
		lines = append(lines, ansi.Truncate(fmt.Sprintf("#%-4d %-16s %s", l.ID, words.Printable(l.Kind), words.Printable(words.OneLine(l.Summary))), m.w, "…"))
	}
	return append(out, window(lines, m.listTop, m.h-2)...)
}

func (m *Model) renderHelp() []string {
	out := []string{styleTitle.Render("keys  (esc closes)")}
	for _, k := range keyHelp {
		out = append(out, ansi.Truncate(fmt.Sprintf("  %-10s %s", k[0], k[1]), m.w, "…"))
	}
	if len(out) > m.h-1 {
		// On a short terminal the list goes in two columns.
		half := (len(keyHelp) + 1) / 2
		out = out[:1]
		colW := m.w / 2
		for i := 0; i < half; i++ {
			l := ansi.Truncate(fmt.Sprintf("%-9s %s", keyHelp[i][0], keyHelp[i][1]), colW-1, "…")
			l += strings.Repeat(" ", max(0, colW-ansi.StringWidth(l)))
			if j := i + half; j < len(keyHelp) {
				l += ansi.Truncate(fmt.Sprintf("%-9s %s", keyHelp[j][0], keyHelp[j][1]), m.w-colW, "…")
			}
			out = append(out, l)
		}
	}
	return out
}

func window(lines []string, top, n int) []string {
	top = max(0, min(top, len(lines)-n))
	return lines[top:min(len(lines), top+max(0, n))]
}

// styled is the row with its style; styling costs more than building the
// line, so it is cached with it.
func (f *fleetView) styled(r *row, w int, now time.Time, selected bool) string {
	line := f.render(r, w, now)
	c := f.cached(r)
	kind := 0
	switch {
	case selected:
		kind = 1
	case r.Attention != "":
		kind = 2
	}
	if c.styledFor == line && c.styledKind == kind && c.styledOut != "" {
		return c.styledOut
	}
	out := line
	switch kind {
	case 1:
		out = styleSelected.Render(line)
	case 2:
		out = styleAttention.Render(line)
	}
	c.styledFor, c.styledKind, c.styledOut = line, kind, out
	return out
}
