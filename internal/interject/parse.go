package interject

import (
	"regexp"
	"strings"
)

// Decision is what an evaluation decided.
type Decision string

// The decisions.
const (
	// Continue: nothing to send (a [CONTINUE] note, no block, or a block
	// that could not be read).
	Continue Decision = "continue"
	// Interject: send Content to the task, urgently or not.
	Interject Decision = "interject"
)

// Reply is a watcher model's reply, parsed.
type Reply struct {
	Decision Decision
	// Urgent interrupts the task's turn in flight (Interject only).
	Urgent bool
	// Content is what to tell the task (Interject only; never empty).
	Content string
	// Note is the session's own note (Continue): the [CONTINUE] block's
	// text, or why the reply was taken as Continue.
	Note string
}

// maxNote bounds a note kept from a reply without a block.
const maxNote = 500

var (
	// opening finds the first block marker of either kind.
	opening = regexp.MustCompile(`(?i)\[\s*(INTERJECT|CONTINUE)\s*\]`)
	closeI  = regexp.MustCompile(`(?i)\[\s*/\s*INTERJECT\s*\]`)
	closeC  = regexp.MustCompile(`(?i)\[\s*/\s*CONTINUE\s*\]`)
	// field finds "urgent:" and "content:" at the start of a line.
	urgentField  = regexp.MustCompile(`(?im)^[ \t]*urgent[ \t]*:[ \t]*([^\n]*)$`)
	contentField = regexp.MustCompile(`(?im)^[ \t]*content[ \t]*:[ \t]?`)
)

// Parse reads a watcher model's reply (only the reply: never the prompt,
// which holds the task's text). The first block decides:
//
//   - [INTERJECT] urgent: true|false / content: … [/INTERJECT]: Interject,
//     Urgent only for "true", Content everything after "content:" up to
//     the closing marker (several lines kept, trimmed). An unclosed block,
//     one without "content:", or one whose content is empty is Continue,
//     with a Note that says so: a malformed reply never sends anything.
//   - [CONTINUE] … [/CONTINUE]: Continue with its text as Note (an
//     unclosed one: the rest of the reply).
//   - no block: Continue, the reply's start as Note.
//
// Blocks after the first are ignored.
func Parse(reply string) Reply {
	loc := opening.FindStringSubmatchIndex(reply)
	if loc == nil {
		return Reply{Decision: Continue, Note: clip(strings.TrimSpace(reply), maxNote)}
	}
	kind := strings.ToUpper(reply[loc[2]:loc[3]])
	rest := reply[loc[1]:]
	if kind == "CONTINUE" {
		if end := closeC.FindStringIndex(rest); end != nil {
			rest = rest[:end[0]]
		}
		return Reply{Decision: Continue, Note: clip(strings.TrimSpace(rest), maxNote)}
	}
	end := closeI.FindStringIndex(rest)
	if end == nil {
		return Reply{Decision: Continue, Note: "malformed reply: [INTERJECT] not closed by [/INTERJECT]; nothing sent"}
	}
	block := rest[:end[0]]
	c := contentField.FindStringIndex(block)
	if c == nil {
		return Reply{Decision: Continue, Note: "malformed reply: [INTERJECT] without content:; nothing sent"}
	}
	urgent := false
	// Only an urgent: line before content: counts: the content may say
	// "urgent: true" in its own words.
	if m := urgentField.FindStringSubmatch(block[:c[0]]); m != nil {
		urgent = strings.EqualFold(strings.TrimSpace(m[1]), "true")
	}
	content := strings.TrimSpace(block[c[1]:])
	if content == "" {
		return Reply{Decision: Continue, Note: "empty interjection; nothing sent"}
	}
	return Reply{Decision: Interject, Urgent: urgent, Content: content}
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !isRuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
