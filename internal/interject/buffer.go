package interject

import (
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// Limits of what a Buffer keeps: each observation is cut to its own
// share, and the whole to MaxChars, the oldest observations dropped first.
const (
	maxText   = 2000 // assistant text, a message
	maxArgs   = 1500 // a tool call's arguments
	maxResult = 600  // a tool result's preview and tail
	// MaxChars bounds the activity one evaluation weighs.
	MaxChars = 12000
)

// Breakpoint says whether an observation ends a stretch of activity the
// session should evaluate now.
type Breakpoint int

// The breakpoints.
const (
	// None: activity, evaluate after a quiet spell (a timeout).
	None Breakpoint = iota
	// TurnEnd: the task's turn ended.
	TurnEnd
	// FilesChanged: a tool result changed files (its file.changed events
	// follow it).
	FilesChanged
)

func (b Breakpoint) String() string {
	switch b {
	case TurnEnd:
		return "turn end"
	case FilesChanged:
		return "files changed"
	}
	return "activity"
}

// Buffer accumulates one task's activity since the session's last
// evaluation. It is not safe for concurrent use (its session's loop owns
// it).
type Buffer struct {
	lines   []string
	size    int
	dropped int
}

// Add records what e shows of the task's activity and says whether it is
// a breakpoint. Events that show nothing (usage, deltas) are ignored and
// are no breakpoint; kept reports whether e added anything.
func (b *Buffer) Add(e event.Event) (kept bool, bp Breakpoint) {
	switch p := e.Payload.(type) {
	case event.TaskMessage:
		if p.Kind == "pause" {
			return false, None
		}
		who := "User"
		if p.Source != "" && p.Source != "user" {
			who = "Injected " + p.Kind + " from " + p.Source
		}
		b.push(fmt.Sprintf("[%s]: %s", who, clip(p.Text, maxText)))
	case event.Text:
		if strings.TrimSpace(p.Text) == "" {
			return false, None
		}
		b.push("[Assistant]: " + clip(p.Text, maxText))
	case event.ToolCall:
		b.push(fmt.Sprintf("[ToolCall]: %s %s", p.Name, clip(string(p.Args), maxArgs)))
	case event.ToolResult:
		status := "ok"
		if p.Error {
			status = "error"
		}
		text := p.Preview
		if p.Tail != "" {
			text += "\n…\n" + p.Tail
		}
		b.push(fmt.Sprintf("[ToolResult]: %s (%s): %s", p.Name, status, clip(text, maxResult)))
	case event.FileChanged:
		// A tool's file changes follow its result: the result changed
		// files.
		b.push(fmt.Sprintf("[FileChanged]: %s %s", p.Op, p.Path))
		return true, FilesChanged
	case event.TurnEnded:
		return len(b.lines) > 0, TurnEnd
	case event.NeedsInput:
		b.push("[AskUser]: " + clip(p.Question, maxText))
		return true, TurnEnd
	case event.Completed:
		b.push("[Completed]: " + clip(p.Summary, maxText))
	default:
		return false, None
	}
	return true, None
}

func (b *Buffer) push(s string) {
	b.lines = append(b.lines, s)
	b.size += len(s) + 2
	for b.size > MaxChars && len(b.lines) > 1 {
		b.size -= len(b.lines[0]) + 2
		b.lines = b.lines[1:]
		b.dropped++
	}
}

// Len returns how many observations the buffer holds.
func (b *Buffer) Len() int { return len(b.lines) }

// Take returns the activity as text (oldest first, a line saying how many
// older observations were dropped), and how many observations it holds,
// and empties the buffer.
func (b *Buffer) Take() (string, int) {
	var s strings.Builder
	if b.dropped > 0 {
		fmt.Fprintf(&s, "(%d earlier observations left out)\n\n", b.dropped)
	}
	s.WriteString(strings.Join(b.lines, "\n\n"))
	n := len(b.lines)
	*b = Buffer{}
	return s.String(), n
}
