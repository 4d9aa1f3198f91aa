package engine

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Kind is what an injected message is.
type Kind string

// Injection kinds. Every way of reaching a running task is one of them and
// goes through the executor's one door (executor.Inject).
const (
	// Message is a user's message (an answer to ask_user, or direction).
	Message Kind = "message"
	// Nudge is a supervisor's nudge; attribute severity.
	Nudge Kind = "nudge"
	// Sync is a learning relayed from another task; attributes from, urgency.
	Sync Kind = "sync"
	// Rebase tells the task that main moved; attribute urgency.
	Rebase Kind = "rebase"
	// Interjection is from a watcher session; attributes from, authority.
	Interjection Kind = "interjection"
	// Pause stops the task at its next boundary. The model never sees it.
	Pause Kind = "pause"
	// Persona changes the persona the task runs as (an escalation);
	// attributes from, to, by. The executor carries the request out at
	// the boundary; the model sees only the outcome.
	Persona Kind = "persona"
)

// Kinds lists the injection kinds.
func Kinds() []Kind { return []Kind{Message, Nudge, Sync, Rebase, Interjection, Pause, Persona} }

// ParseKind returns the kind named s ("" is Message).
func ParseKind(s string) (Kind, error) {
	if s == "" {
		return Message, nil
	}
	for _, k := range Kinds() {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, 0, len(Kinds()))
	for _, k := range Kinds() {
		names = append(names, string(k))
	}
	return "", fmt.Errorf("%q is not an injection kind; want one of %s", s, strings.Join(names, ", "))
}

// Injection is a message waiting in a task's durable queue.
type Injection struct {
	ID     int64
	Kind   Kind
	Source string
	Attrs  map[string]string
	Text   string
	Urgent bool
	At     time.Time
}

// tags maps each kind the model sees to its wrapper element.
var tags = map[Kind]string{
	Message:      "user-message",
	Nudge:        "system-nudge",
	Sync:         "sync-message",
	Rebase:       "rebase-notice",
	Interjection: "interjection",
	Persona:      "persona-change",
}

// NoteTag wraps notes the engine itself adds to the conversation (a
// cut-off reply to continue, a restart to account for).
const NoteTag = "system-note"

// reserved matches the start of any wrapper element, opening or closing, in
// any letter case and with any space after "<" or "</": the forms Neutralize
// defuses.
var reserved = regexp.MustCompile(`(?i)<\s*/?\s*(user-message|system-nudge|sync-message|rebase-notice|interjection|persona-change|system-note)\b`)

// Neutralize defuses every wrapper element in text that did not come from
// the executor (task descriptions, files, tool output, message bodies) by
// escaping its "<" as "&lt;", so that no text a task handles can forge a
// nudge, a sync message or a note. Other text is left as it is.
func Neutralize(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	return reserved.ReplaceAllStringFunc(text, func(m string) string { return "&lt;" + m[1:] })
}

// escapeAttr makes s safe inside a double-quoted attribute value.
var attrEscaper = strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;", "\n", " ", "\r", " ")

// Render returns the text the model sees for inj: its body, neutralized,
// inside the kind's wrapper element, whose attributes are the sender and
// the injection's attributes (escaped, in name order). Pause is never shown
// to the model and renders as "".
func Render(inj Injection) string {
	tag, ok := tags[inj.Kind]
	if !ok {
		return ""
	}
	attrs := map[string]string{}
	maps.Copy(attrs, inj.Attrs)
	if inj.Source != "" {
		if _, set := attrs["from"]; !set {
			attrs["from"] = inj.Source
		}
	}
	if inj.Urgent {
		attrs["urgent"] = "true"
	}
	var b strings.Builder
	b.WriteString("<" + tag)
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		if !validAttrName(k) {
			continue
		}
		fmt.Fprintf(&b, ` %s="%s"`, k, attrEscaper.Replace(attrs[k]))
	}
	b.WriteString(">\n")
	b.WriteString(Neutralize(strings.TrimSpace(inj.Text)))
	b.WriteString("\n</" + tag + ">")
	return b.String()
}

// Note returns an engine note for the model.
func Note(text string) string {
	return "<" + NoteTag + ">\n" + Neutralize(text) + "\n</" + NoteTag + ">"
}

func validAttrName(k string) bool {
	if k == "" || len(k) > 32 {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
