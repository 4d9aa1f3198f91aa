package engine

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/inject"
)

// tags maps each kind the model sees to its wrapper element.
var tags = map[inject.Kind]string{
	inject.Message:      "user-message",
	inject.Nudge:        "system-nudge",
	inject.Sync:         "sync-message",
	inject.Rebase:       "rebase-notice",
	inject.Interjection: "interjection",
	inject.Persona:      "persona-change",
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
// the injection's attributes, typed ones under their stored names
// (inject.Injection.AttrMap), escaped, in name order. Pause is never shown
// to the model and renders as "".
func Render(inj inject.Injection) string {
	tag, ok := tags[inj.Kind]
	if !ok {
		return ""
	}
	attrs := inj.AttrMap()
	if attrs == nil {
		attrs = map[string]string{}
	}
	if inj.Source != "" {
		if _, set := attrs["from"]; !set {
			attrs["from"] = string(inj.Source)
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
