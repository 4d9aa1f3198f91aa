package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
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

// secs renders a timeout in seconds: "15m", "2h", "7m30s", "off".
func secs(n int) string {
	if n <= 0 {
		return "off"
	}
	var b strings.Builder
	for _, u := range []struct {
		n    int
		unit string
	}{{n / 3600, "h"}, {n % 3600 / 60, "m"}, {n % 60, "s"}} {
		if u.n > 0 {
			fmt.Fprintf(&b, "%d%s", u.n, u.unit)
		}
	}
	return b.String()
}

// describeLifecycle renders the lifecycle's events (event/lifecycle.go).
func describeLifecycle(p event.Payload) (string, bool) {
	switch p := p.(type) {
	case event.SandboxCreated:
		s := fmt.Sprintf("sandbox manifest (%s): %s complexity, tools %s, writes %s, timeouts idle %s, total %s",
			p.Source, p.Complexity, strings.Join(p.Tools, ","), strings.Join(p.Writable, ","), secs(p.IdleSecs), secs(p.TotalSecs))
		if p.Note != "" {
			s += "; " + truncate(p.Note, 80)
		}
		return s, true
	case event.EngineStarted:
		s := "engine " + p.Engine + " started in " + p.Dir
		if p.Resumed {
			s = "engine " + p.Engine + " resumed in " + p.Dir
		}
		return s, true
	case event.Progress:
		return fmt.Sprintf("progress at turn %d: %d file(s) read, %d written, %d commit(s), %d output line(s), %d error(s), %d denial(s), %s in",
			p.Turn, p.FilesRead, p.FilesWritten, p.Commits, p.OutputLines, p.Errors, p.Denials, time.Duration(p.ElapsedMs)*time.Millisecond), true
	case event.Timeout:
		if p.Which == "idle" {
			return fmt.Sprintf("stopped by the idle timeout: nothing reported for %s", secs(p.LimitSecs)), true
		}
		return fmt.Sprintf("stopped by the total timeout: the run lasted %s", secs(p.LimitSecs)), true
	case event.PermissionDenied:
		what := p.Tool
		switch {
		case p.Command != "":
			what += ": " + truncate(p.Command, 60)
		case p.Path != "" && p.Write:
			what += ": write " + p.Path
		case p.Path != "":
			what += ": read " + p.Path
		}
		return "permission denied: " + what, true
	case event.PermissionError:
		if p.Fix == "" {
			return "permission error, no fix: " + truncate(p.Reason, 100), true
		}
		return "permission error, fix: " + p.Fix, true
	case event.RecoveryAttempt:
		s := fmt.Sprintf("recovery (%s): %s", p.Strategy, strings.ReplaceAll(p.Action, "_", " "))
		if p.Fix != "" {
			s += ": " + p.Fix
		}
		if p.Escalation > 0 {
			s += fmt.Sprintf(" (escalation %d)", p.Escalation)
		}
		return s, true
	}
	return "", false
}
