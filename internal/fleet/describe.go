package fleet

import (
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Describe is an event as the conversation shows it; "" for events it
// leaves out. Every text from the task or the model is escaped.
func Describe(e event.Event) string {
	p := words.Printable
	ts := e.Time.Format("15:04:05")
	switch x := e.Payload.(type) {
	case event.TurnStarted:
		return fmt.Sprintf("── turn %d · %s %s · %s", x.Turn, p(x.Engine), p(x.Model), ts)
	case event.Text:
		var b strings.Builder
		for i, l := range strings.Split(strings.TrimRight(x.Text, "\n"), "\n") {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString("  " + p(l))
		}
		return b.String()
	case event.ToolCall:
		return "→ " + p(x.Name) + " " + p(words.Clip(words.OneLine(string(x.Args)), 200))
	case event.ToolResult:
		state := "ok"
		if x.Error {
			state = "error"
		}
		s := fmt.Sprintf("← %s %s (%d bytes)", p(x.Name), state, x.Size)
		if x.Preview != "" {
			s += "\n    " + p(words.Clip(words.OneLine(x.Preview), 200))
		}
		return s
	case event.TaskMessage:
		kind := words.Or(x.Kind, "message")
		urgent := ""
		if x.Urgent {
			urgent = " urgent"
		}
		return fmt.Sprintf("✉ %s%s #%d from %s: %s", p(kind), urgent, x.InjectionID, p(x.Source), p(words.OneLine(x.Text)))
	case event.Delivered:
		return fmt.Sprintf("✉ delivered %v at turn %d", x.InjectionIDs, x.Turn)
	case event.NeedsInput:
		return "? asks: " + p(x.Question)
	case event.Completed:
		return "✓ completed: " + p(x.Summary)
	case event.Failed:
		return "✗ failed: " + p(words.OneLine(x.Reason))
	case event.TaskStatus:
		s := fmt.Sprintf("· %s → %s", x.From, x.To)
		if x.Reason != "" {
			s += ": " + p(words.OneLine(x.Reason))
		}
		return s
	case event.HealthCheck:
		if x.Diagnosis == "" {
			return ""
		}
		s := fmt.Sprintf("⚕ Watcher: %s (%.0f%%, ladder %s): %s", x.Status, x.Confidence*100, x.Ladder, p(words.OneLine(x.Diagnosis)))
		for _, ev := range x.Evidence {
			s += "\n    evidence: " + fmt.Sprintf("step %d %s ", ev.Step, p(ev.Kind)) + p(words.Clip(words.OneLine(ev.What), 200))
		}
		return s
	case event.WatcherNudge:
		return "⚕ Watcher nudged: " + p(words.OneLine(x.Message))
	case event.WatcherPause:
		return "⚕ Watcher paused it: " + p(words.OneLine(x.Diagnosis))
	case event.WatcherAbort:
		return "⚕ Watcher aborted it: " + p(words.OneLine(x.Diagnosis))
	case event.SyncMessageSent:
		return fmt.Sprintf("⇄ sync in (%s, from %s): %s", x.Urgency, p(x.From), p(words.OneLine(x.Message)))
	case event.LearningExtracted:
		return "⇄ sync out: learning " + p(words.OneLine(x.Summary))
	case event.MergeQueued, event.MergeStarted, event.MergeLanded, event.MergeParked, event.MergeConflicted, event.MergeGateFailed,
		event.MergeOrdered, event.MergeYielded, event.OverlapFound, event.OverlapForecast, event.OverlapNotice,
		event.RebaseRequired, event.RebaseCompleted, event.RebaseConflict, event.CommitMade, event.PersonaEscalated:
		return fmt.Sprintf("· %s %s", e.Kind, p(words.Clip(words.OneLine(fmt.Sprintf("%+v", x)), 200)))
	}
	return ""
}
