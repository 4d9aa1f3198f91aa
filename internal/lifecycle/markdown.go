package lifecycle

import (
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Markdown renders r as seed 003's summary. What the task, its agent or
// its files said is untrusted: it is kept on one line where it stands in
// the report's own lines, file names sit in code spans that they cannot
// close, and the summary is quoted, so that none of it can fake a section
// of the report. (Terminal escapes are the printer's: the CLI escapes
// everything it prints.)
func Markdown(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Task %s: %s (%s)\n\n", heading(r.Status), inline(words.Clip(words.OneLine(r.Description), 100)), r.ID)
	status := statusWord(r.Status)
	if r.Duration > 0 {
		status += " (" + Duration(r.Duration) + ")"
	}
	fmt.Fprintf(&b, "**Status:** %s\n", status)
	if r.Reason != "" && r.Status != task.Completed {
		fmt.Fprintf(&b, "**Reason:** %s\n", inline(words.Clip(words.OneLine(r.Reason), 300)))
	}
	if r.PR != "" {
		fmt.Fprintf(&b, "**PR:** %s\n", inline(words.OneLine(r.PR)))
	}
	if r.Landed != "" {
		fmt.Fprintf(&b, "**Landed:** %s on %s\n", words.ShortCommit(r.Landed), code(r.Base))
	} else if r.Branch != "" {
		fmt.Fprintf(&b, "**Branch:** %s\n", code(r.Branch))
	}
	b.WriteString("\n### Changes\n")
	switch {
	case len(r.Files) > 0:
		for _, f := range r.Files {
			if f.Binary {
				fmt.Fprintf(&b, "- %s (binary)\n", code(f.Path))
				continue
			}
			fmt.Fprintf(&b, "- %s (+%d, -%d)\n", code(f.Path), f.Added, f.Deleted)
		}
	case r.Note != "":
		fmt.Fprintf(&b, "None counted: %s\n", inline(r.Note))
	default:
		b.WriteString("No files changed.\n")
	}
	b.WriteString("\n### Summary\n")
	if s := strings.TrimSpace(r.Summary); s != "" {
		for line := range strings.SplitSeq(words.Clip(s, 4000), "\n") {
			b.WriteString(strings.TrimRight("> "+line, " ") + "\n")
		}
	} else {
		b.WriteString("None yet.\n")
	}
	b.WriteString("\n### Logs\n")
	for _, l := range r.Logs {
		fmt.Fprintf(&b, "- %s\n", inline(l))
	}
	return b.String()
}

func heading(s task.Status) string {
	switch s {
	case task.Completed:
		return "complete"
	case task.Failed:
		return "failed"
	case task.Cancelled:
		return "cancelled"
	}
	return string(s)
}

func statusWord(s task.Status) string {
	switch s {
	case task.Completed:
		return "Success"
	case task.Failed:
		return "Failed"
	}
	if s == "" {
		return "Unknown"
	}
	return strings.ToUpper(string(s[:1])) + string(s[1:])
}

// Duration renders d as the seed does: "3m 42s", "1h 5m", "12s".
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// inline keeps untrusted text on its line: newlines become spaces.
func inline(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// code puts s in a code span it cannot close: fenced with one backtick
// more than its longest run of them, on one line.
func code(s string) string {
	s = inline(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
