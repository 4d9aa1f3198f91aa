package workflow

import (
	"encoding/json"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Review is what a review phase reported.
type Review struct {
	// Verdict is approve, changes, or unknown when the report was not the
	// JSON asked for (then Summary holds it and it is passed on as it is).
	Verdict  string
	Findings []event.Finding
	Summary  string
}

// Limits of a review report.
const (
	maxFindings   = 50
	maxFindingLen = 2000
)

// ParseReview reads a reviewer's complete_task summary: one JSON object
// (alone, in a code fence, or after some prose) with verdict and findings
// as ReviewInstructions ask. It never fails: a report that is not that
// JSON is kept whole as the summary with verdict unknown, and findings
// with unknown severities or no message are normalized or dropped.
func ParseReview(summary string) Review {
	s := strings.TrimSpace(summary)
	raw, ok := jsonObject(s)
	if !ok {
		return Review{Verdict: "unknown", Summary: s}
	}
	var r struct {
		Verdict  string `json:"verdict"`
		Summary  string `json:"summary"`
		Findings []struct {
			Severity string `json:"severity"`
			File     string `json:"file"`
			Line     any    `json:"line"`
			Message  string `json:"message"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return Review{Verdict: "unknown", Summary: s}
	}
	out := Review{Summary: words.Clip(strings.TrimSpace(r.Summary), maxFindingLen-len(words.Ellipsis))}
	switch v := strings.ToLower(strings.TrimSpace(r.Verdict)); v {
	case "approve", "approved", "lgtm":
		out.Verdict = "approve"
	case "changes", "request-changes", "changes-requested", "reject":
		out.Verdict = "changes"
	default:
		out.Verdict = "unknown"
	}
	for _, f := range r.Findings {
		msg := strings.TrimSpace(f.Message)
		if msg == "" {
			continue
		}
		sev := strings.ToLower(strings.TrimSpace(f.Severity))
		switch sev {
		case "critical", "important", "nitpick":
		case "high", "blocker", "major":
			sev = "critical"
		case "low", "minor", "nit":
			sev = "nitpick"
		default:
			sev = "important"
		}
		line := 0
		if n, ok := f.Line.(float64); ok && n > 0 && n < 1e9 {
			line = int(n)
		}
		out.Findings = append(out.Findings, event.Finding{Severity: sev, File: words.Clip(strings.TrimSpace(f.File), 500), Line: line, Message: words.Clip(msg, maxFindingLen-len(words.Ellipsis))})
		if len(out.Findings) == maxFindings {
			break
		}
	}
	if out.Verdict == "unknown" && len(out.Findings) > 0 {
		out.Verdict = "changes"
	}
	return out
}

// jsonObject finds the JSON object in s: s itself, a fenced block, or the
// span from the first "{" to the last "}".
func jsonObject(s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		if inner, ok := strings.CutSuffix(strings.TrimSpace(rest), "```"); ok {
			s = strings.TrimSpace(inner)
		}
	}
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return "", false
	}
	cand := s[i : j+1]
	if !json.Valid([]byte(cand)) {
		return "", false
	}
	return cand, true
}
