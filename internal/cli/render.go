package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newTable(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
}

// truncate cuts s to n runes on one line.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// age renders how long ago t was, coarsely.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func tokens(u task.Usage) string {
	n := u.InputTokens + u.OutputTokens
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// describeEvent renders an event's payload as one readable line.
func describeEvent(e event.Event) string {
	switch p := e.Payload.(type) {
	case event.TaskCreated:
		s := fmt.Sprintf("created (%s, priority %d): %s", p.Status, p.Priority, truncate(p.Description, 60))
		if len(p.Tags) > 0 {
			s += " [" + strings.Join(p.Tags, ",") + "]"
		}
		return s
	case event.TaskStatus:
		s := fmt.Sprintf("%s → %s", p.From, p.To)
		if p.Reason != "" {
			s += ": " + p.Reason
		}
		return s
	case event.TaskMessage:
		return fmt.Sprintf("message #%d from %s queued: %s", p.InjectionID, p.Source, truncate(p.Text, 60))
	case event.TaskDependency:
		return "now waits for " + string(p.Blocker)
	case event.DaemonStarted:
		return fmt.Sprintf("daemon started (pid %d, %s)", p.PID, p.Version)
	case event.DaemonStopping:
		return "daemon stopping: " + p.Reason
	case event.DaemonRecovered:
		return fmt.Sprintf("recovered %d running task(s) to resume", len(p.ResumePending))
	case event.Unknown:
		return truncate(string(p.Raw), 80)
	}
	b, _ := json.Marshal(e.Payload)
	return truncate(string(b), 80)
}

// printEvent writes one event line.
func printEvent(out io.Writer, e event.Event) {
	id := "-"
	if e.ID != 0 {
		id = fmt.Sprint(e.ID)
	}
	fmt.Fprintf(out, "%-6s %s  %-8s %-16s %s\n", id, e.Time.Local().Format("15:04:05.000"), dash(string(e.TaskID)), e.Kind, describeEvent(e))
}
