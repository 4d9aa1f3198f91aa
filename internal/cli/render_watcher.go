package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// How a watcher event's evidence is shown.
const (
	evidenceIndent = "    "
	evidenceLines  = 6   // at most this many steps, then how many more
	evidenceWidth  = 140 // runes of a step's account
)

// describeWatcher renders a watcher.* event as one line, starting
// "watcher: ". Its evidence goes on lines of its own (writeEvidence).
func describeWatcher(p event.Payload) (string, bool) {
	switch p := p.(type) {
	case event.HealthCheck:
		return healthCheckLine(p), true
	case event.WatcherNudge:
		return watcherNudgeLine(p), true
	case event.WatcherEscalate:
		return watcherEscalateLine(p), true
	case event.WatcherPause:
		s := "watcher: paused the task"
		if len(p.Signals) > 0 {
			s += " (" + strings.Join(p.Signals, ", ") + ")"
		}
		return s + ": " + truncate(p.Diagnosis, 100), true
	case event.WatcherAbort:
		why := nonEmpty(strings.ReplaceAll(p.Reason, "-", " "))
		why = append(why, p.Signals...)
		s := "watcher: aborted the task"
		if len(why) > 0 {
			s += " (" + strings.Join(why, ", ") + ")"
		}
		return s + ": " + truncate(p.Diagnosis, 100), true
	}
	return "", false
}

// watcherEvidence returns the evidence a watcher.* payload carries.
func watcherEvidence(p event.Payload) []event.Evidence {
	switch p := p.(type) {
	case event.HealthCheck:
		return p.Evidence
	case event.WatcherNudge:
		return p.Evidence
	case event.WatcherEscalate:
		return p.Evidence
	case event.WatcherPause:
		return p.Evidence
	case event.WatcherAbort:
		return p.Evidence
	}
	return nil
}

// healthCheckLine: "watcher: stuck (failing, tier 1): the same call failed
// 3 times in a row … → nudge (hint)".
func healthCheckLine(p event.HealthCheck) string {
	var about []string
	if p.Check != "" {
		about = append(about, p.Check)
	}
	if p.Tier > 0 {
		about = append(about, fmt.Sprintf("tier %d", p.Tier))
	}
	if p.Tier >= 2 {
		about = append(about, fmt.Sprintf("confidence %.2f", p.Confidence))
	}
	s := "watcher: " + dash(p.Status)
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	if p.Diagnosis != "" {
		s += ": " + truncate(p.Diagnosis, 100)
	}
	if step := ladderAction(p.Ladder); step != "" {
		s += " → " + step
	}
	if p.Degraded {
		s += " [degraded: tier 1 alone]"
	}
	return s
}

// ladderAction names what a step of the intervention ladder does: "nudge
// (hint)", "escalate", "pause"; "" for none.
func ladderAction(ladder string) string {
	switch ladder {
	case "", "none":
		return ""
	case "hint", "warning", "critical":
		return "nudge (" + ladder + ")"
	case "escalated":
		return "escalate"
	case "paused":
		return "pause"
	case "aborted":
		return "abort"
	}
	return ladder
}

// watcherNudgeLine: "watcher: nudge #12 (warning, failing, tier 1; 1
// unheeded before): the same call failed …". The nudge's text is on the
// task.message line of the same injection.
func watcherNudgeLine(p event.WatcherNudge) string {
	s := "watcher: nudge"
	if p.InjectionID != 0 {
		s += fmt.Sprintf(" #%d", p.InjectionID)
	}
	about := nonEmpty(p.Severity, p.Check)
	if p.Tier > 0 {
		about = append(about, fmt.Sprintf("tier %d", p.Tier))
	}
	paren := strings.Join(about, ", ")
	if p.Unheeded > 0 {
		paren += fmt.Sprintf("; %d unheeded before", p.Unheeded)
	}
	if paren != "" {
		s += " (" + strings.TrimPrefix(paren, "; ") + ")"
	}
	what := p.Diagnosis
	if what == "" {
		what = p.Message
	}
	if what != "" {
		s += ": " + truncate(what, 100)
	}
	return s
}

// watcherEscalateLine: "watcher: escalate mid → senior (failing): …", or
// "watcher: escalation from architect refused: … (failing: …)".
func watcherEscalateLine(p event.WatcherEscalate) string {
	if p.Refused != "" {
		s := "watcher: escalation refused"
		if p.From != "" {
			s = "watcher: escalation from " + p.From + " refused"
		}
		s += ": " + truncate(p.Refused, 80)
		if why := strings.Join(nonEmpty(p.Check, truncate(p.Diagnosis, 60)), ": "); why != "" {
			s += " (" + why + ")"
		}
		return s
	}
	s := fmt.Sprintf("watcher: escalate %s → %s", dash(p.From), dash(p.To))
	if p.Check != "" {
		s += " (" + p.Check + ")"
	}
	if p.Diagnosis != "" {
		s += ": " + truncate(p.Diagnosis, 100)
	}
	return s
}

// evidenceLine renders one step of evidence: "step 4 result bash: bash
// {…} → error: FAIL (exact)".
func evidenceLine(ev event.Evidence) string {
	s := fmt.Sprintf("step %d %s", ev.Step, dash(ev.Kind))
	if ev.Tool != "" {
		s += " " + ev.Tool
	}
	s += ": " + truncate(ev.What, evidenceWidth)
	if ev.Exact {
		s += " (exact)"
	}
	return s
}

// writeEvidence writes evidence one step a line after indent, at most
// limit of them (0: all), the newest kept.
func writeEvidence(out io.Writer, indent string, evs []event.Evidence, limit int) {
	if more := len(evs) - limit; limit > 0 && more > 0 {
		fmt.Fprintf(out, "%s… %d earlier step%s\n", indent, more, plural(more))
		evs = evs[more:]
	}
	for _, ev := range evs {
		fmt.Fprintln(out, indent+evidenceLine(ev))
	}
}

// writeTimelineEvent writes an event as writeEventLine does; a watcher.*
// event gets its own line with its evidence under it.
func writeTimelineEvent(out io.Writer, e event.Event, loc *time.Location) {
	if s, ok := describeWatcher(e.Payload); ok {
		fmt.Fprintf(out, "%s%s\n", eventPrefix(e, loc), s)
		writeEvidence(out, evidenceIndent, watcherEvidence(e.Payload), evidenceLines)
		return
	}
	writeEventLine(out, e, loc)
}

// writeWatcherObservation writes a watcher.* event in a transcript (task
// attach) as "⚑ watcher: …" with its evidence, and reports whether e was
// one.
func writeWatcherObservation(out io.Writer, e event.Event) bool {
	s, ok := describeWatcher(e.Payload)
	if !ok {
		return false
	}
	fmt.Fprintf(out, "⚑ %s\n", s)
	writeEvidence(out, evidenceIndent, watcherEvidence(e.Payload), evidenceLines)
	return true
}
