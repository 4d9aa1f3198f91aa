package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// describePersona renders a persona, hook or workflow observation as one
// line.
func describePersona(p event.Payload) (string, bool) {
	switch p := p.(type) {
	case event.PersonaSelected:
		return personaSelected(p), true
	case event.PersonaEscalated:
		return personaEscalated(p), true
	case event.EscalationRefused:
		s := "escalation refused"
		if p.To != "" {
			s = fmt.Sprintf("escalation %s → %s refused", dash(p.From), p.To)
		} else if p.From != "" {
			s = fmt.Sprintf("escalation from %s refused", p.From)
		}
		if p.By != "" {
			s += " (asked by " + p.By + ")"
		}
		return s + ": " + truncate(p.Reason, 100), true
	case event.HookActed:
		s := fmt.Sprintf("hook %s %s", p.Point, dash(p.Action))
		if p.Reason != "" {
			s += ": " + truncate(p.Reason, 80)
		}
		return s + hookCommand(p.Command), true
	case event.HookFailed:
		return fmt.Sprintf("hook %s failed: %s%s", p.Point, truncate(p.Error, 80), hookCommand(p.Command)), true
	case event.PhaseStarted:
		return phaseStarted(p), true
	case event.PhaseFinished:
		return phaseFinished(p), true
	}
	return "", false
}

// personaSelected: "persona senior on claude-opus (router: category
// refactoring is assigned to senior)".
func personaSelected(p event.PersonaSelected) string {
	s := "persona " + dash(p.Persona)
	if p.Model != "" {
		s += " on " + p.Model
	}
	why := dash(p.Method)
	if p.Reason != "" {
		why += ": " + truncate(p.Reason, 80)
	}
	return s + " (" + why + ")"
}

// personaEscalated: "escalated mid → senior by user: the tests keep failing".
func personaEscalated(p event.PersonaEscalated) string {
	s := fmt.Sprintf("escalated %s → %s by %s", dash(p.From), p.To, dash(p.By))
	if p.ToModel != "" && p.ToModel != p.FromModel {
		s += fmt.Sprintf(" (model %s → %s)", dash(p.FromModel), p.ToModel)
	}
	if p.Reason != "" {
		s += ": " + truncate(p.Reason, 80)
	}
	return s
}

// hookCommand names the hook's command after its line: " (./pick.sh)".
func hookCommand(cmd string) string {
	if cmd == "" {
		return ""
	}
	return " (" + truncate(cmd, 40) + ")"
}

// phaseStarted: "phase 3 review started: reviewer t-a, senior t-b".
func phaseStarted(p event.PhaseStarted) string {
	var who []string
	if len(p.Personas) == len(p.Tasks) {
		for i, per := range p.Personas {
			who = append(who, per+" "+p.Tasks[i])
		}
	} else {
		who = append(append(who, p.Personas...), p.Tasks...)
	}
	return fmt.Sprintf("phase %d %s started: %s", p.Index+1, p.Phase, dash(strings.Join(who, ", ")))
}

// phaseFinished: "phase 3 review done by reviewer t-y: changes, 2 findings
// (1 critical, 1 nitpick)", or the summary's start for a phase that is no
// review.
func phaseFinished(p event.PhaseFinished) string {
	verb := "done by"
	if p.Status != "" && p.Status != "completed" {
		verb = p.Status + ":"
	}
	s := fmt.Sprintf("phase %d %s %s %s %s", p.Index+1, p.Phase, verb, dash(p.Persona), dash(p.Task))
	switch {
	case p.Verdict != "" || len(p.Findings) > 0:
		s += ": " + dash(p.Verdict) + fmt.Sprintf(", %d finding%s", len(p.Findings), plural(len(p.Findings)))
		if sev := severities(p.Findings); sev != "" {
			s += " (" + sev + ")"
		}
	case p.Summary != "":
		s += ": " + truncate(p.Summary, 70)
	}
	return s
}

// severities counts findings by severity, most severe first, then any
// other severity in the order met: "1 critical, 2 nitpick".
func severities(fs []event.Finding) string {
	known := []string{"critical", "important", "nitpick"}
	order := slices.Clone(known)
	n := map[string]int{}
	for _, f := range fs {
		sev := cmp.Or(f.Severity, "unrated")
		if !slices.Contains(order, sev) {
			order = append(order, sev)
		}
		n[sev]++
	}
	var parts []string
	for _, sev := range order {
		if n[sev] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[sev], sev))
		}
	}
	return strings.Join(parts, ", ")
}
