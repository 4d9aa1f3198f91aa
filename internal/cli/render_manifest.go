package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// writeManifest prints a task's sandbox manifest under task show, one
// line per part (docs/lifecycle.md); nothing before the task first starts.
func writeManifest(out io.Writer, m *task.Manifest) {
	if m == nil {
		return
	}
	line := func(k, v string) { fmt.Fprintf(out, "%-12s %s\n", k+":", v) }
	list := func(l []string, none string) string {
		if len(l) == 0 {
			return none
		}
		return strings.Join(l, ", ")
	}
	src := m.Source
	if m.Escalations > 0 {
		src += fmt.Sprintf(", widened %d time%s", m.Escalations, plural(m.Escalations))
	}
	line("manifest", fmt.Sprintf("%s complexity (%s)", m.Complexity, src))
	pad := strings.Repeat(" ", 13)
	sub := func(k, v string) { fmt.Fprintf(out, "%s%-9s %s\n", pad, k+":", v) }
	sub("tools", list(m.Tools, "none"))
	sub("commands", list(m.Commands, "any the deny-list allows"))
	sub("reads", list(m.Readable, "nothing"))
	sub("writes", list(m.Writable, "nothing"))
	if len(m.Env) > 0 {
		sub("env", list(m.Env, ""))
	}
	if len(m.Secrets) > 0 {
		sub("secrets", list(m.Secrets, "")+" (by name)")
	}
	sub("timeouts", fmt.Sprintf("idle %s, total %s", secs(m.IdleTimeoutSecs), secs(m.TotalTimeoutSecs)))
	if m.Note != "" {
		sub("note", m.Note)
	}
}

// secs renders a timeout in seconds: "15m", "2h", "off".
func secs(n int) string {
	switch {
	case n <= 0:
		return "off"
	case n%3600 == 0:
		return fmt.Sprintf("%dh", n/3600)
	case n%60 == 0:
		return fmt.Sprintf("%dm", n/60)
	}
	return fmt.Sprintf("%ds", n)
}
