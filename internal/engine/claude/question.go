package claude

import (
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/engine"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

// QuestionMarker starts the final line of a turn whose reply asks the user
// something: the CLI has no tool that waits for its user in print mode
// (the native loop has ask_user), so the system prompt the engine appends
// (--append-system-prompt) tells it to end such a reply with
//
//	[NEEDS INPUT] the question
//
// The run then ends waiting with the question, as the native loop's
// ask_user does, and the user's reply resumes the same session. Only the
// last non-empty line of the turn's final text counts: the marker quoted
// inside a reply, a file or a user's message does not.
const QuestionMarker = "[NEEDS INPUT]"

// systemPrompt is appended to the CLI's own system prompt.
const systemPrompt = "You run unattended under Neuraphage; no one reads your replies while you work. " +
	"When you cannot go on without an answer from the user, end your reply with one final line that starts with " +
	QuestionMarker + " followed by the question, and stop: the user's answer comes as the next message. " +
	"Never write that marker otherwise. " + engine.LearningNote

// maxQuestion bounds the question a reply asks.
const maxQuestion = 1000

// question is what the final text of a turn asks the user: the rest of its
// last non-empty line when that line starts with QuestionMarker, as one
// line, without terminal controls; "" when it asks nothing.
func question(final string) string {
	final = strings.TrimRight(final, " \t\r\n")
	last := final[strings.LastIndexByte(final, '\n')+1:]
	q, ok := strings.CutPrefix(strings.TrimSpace(last), QuestionMarker)
	if !ok {
		return ""
	}
	q = words.Clip(words.Printable(words.OneLine(strings.TrimLeft(q, ":"))), maxQuestion)
	if q == "" {
		// The marker alone: the question is the reply before it.
		q = words.Clip(words.Printable(words.OneLine(final[:len(final)-len(last)])), maxQuestion)
	}
	return words.Or(q, "Claude Code asks for your input.")
}
