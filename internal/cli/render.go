package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// writeJSON writes v as indented JSON, around the terminal escaping: JSON
// escaping already covers control characters.
func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(jsonOut(out))
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newTable(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
}

// truncate cuts s to n runes on one line.
func truncate(s string, n int) string {
	return fitWidth(words.OneLine(s), n)
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

func tokens(u task.Usage) string { return count(u.InputTokens + u.OutputTokens) }

// count renders a number of tokens coarsely: 950, 12.3k, 1.2M.
func count(n int64) string {
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
		return describeMessage(p)
	case event.TaskReturned:
		ids := make([]string, len(p.InjectionIDs))
		for i, id := range p.InjectionIDs {
			ids[i] = fmt.Sprintf("#%d", id)
		}
		s := fmt.Sprintf("%d message(s) returned undelivered (%s): the task %s first", len(ids), strings.Join(ids, ", "), p.Status)
		if len(p.Texts) > 0 {
			s += ": " + truncate(p.Texts[0], 50)
		}
		return s
	case event.TaskDependency:
		return "now waits for " + string(p.Blocker)
	case event.DaemonStarted:
		return fmt.Sprintf("daemon started (pid %d, %s)", p.PID, p.Version)
	case event.DaemonStopping:
		return "daemon stopping: " + p.Reason
	case event.DiskFull:
		if p.Recovered {
			return fmt.Sprintf("space returned after %s: %d task(s) that waited went on", time.Duration(p.WaitedMs)*time.Millisecond, len(p.Tasks))
		}
		return "the data disk is full: the run waits in memory and retries its write until space returns (" + truncate(p.Err, 80) + ")"
	case event.ProcLeftoverStopped:
		return describeLeftover(p)
	case event.DaemonRecovered:
		return fmt.Sprintf("recovered %d running task(s) to resume", len(p.ResumePending))
	case event.DaemonPermissions:
		return permissions(p)
	case event.TaskSandbox:
		return "sandbox: " + p.Note
	case event.Unknown:
		return truncate(string(p.Raw), 80)
	}
	if s, ok := describeObservation(e.Payload); ok {
		return s
	}
	if s, ok := describeGit(e.Payload); ok {
		return s
	}
	if s, ok := describePersona(e.Payload); ok {
		return s
	}
	if s, ok := describeWatcher(e.Payload); ok {
		return s
	}
	if s, ok := describeSync(e.Payload); ok {
		return s
	}
	if s, ok := describeLifecycle(e.Payload); ok {
		return s
	}
	b, _ := json.Marshal(e.Payload)
	return truncate(string(b), 80)
}

// permissions renders the daemon's corrected modes as a sentence.
func permissions(p event.DaemonPermissions) string {
	if len(p.Corrected) == 0 {
		return "private state: nothing to restrict"
	}
	parts := make([]string, len(p.Corrected))
	for i, c := range p.Corrected {
		parts[i] = fmt.Sprintf("%s (%s → %s)", c.Path, c.From, c.To)
	}
	return fmt.Sprintf("restricted %d path(s) readable by others to their owner: %s", len(p.Corrected), strings.Join(parts, ", "))
}

// describeMessage renders a queued injection: its kind, number, sender,
// attributes and the start of its text. A plain message reads
// "message #1 from user queued: …".
func describeMessage(p event.TaskMessage) string {
	kind := p.Kind
	if kind == "" {
		kind = "message"
	}
	var extra []string
	for _, k := range slices.Sorted(maps.Keys(p.Attrs)) {
		extra = append(extra, k+"="+p.Attrs[k])
	}
	if p.Urgent {
		extra = append(extra, "urgent")
	}
	s := fmt.Sprintf("%s #%d from %s queued", kind, p.InjectionID, p.Source)
	if len(extra) > 0 {
		s += " [" + strings.Join(extra, ", ") + "]"
	}
	return s + ": " + truncate(p.Text, 60)
}

// describeObservation renders an agent observation as one line.
func describeObservation(p event.Payload) (string, bool) {
	switch p := p.(type) {
	case event.TurnStarted:
		s := fmt.Sprintf("turn %d started", p.Turn)
		if on := nonEmpty(p.Engine, p.Model); len(on) > 0 {
			s += " (" + strings.Join(on, ", ") + ")"
		}
		if p.Resumed {
			s += ", resumed from the stored conversation"
		}
		return s, true
	case event.TurnEnded:
		return fmt.Sprintf("turn %d ended: %s", p.Turn, turnEnd(p)), true
	case event.Text:
		return fmt.Sprintf("turn %d: %s", p.Turn, truncate(p.Text, 70)), true
	case event.TextDelta:
		if p.Reset {
			return fmt.Sprintf("turn %d: retried; the text so far is discarded", p.Turn), true
		}
		return fmt.Sprintf("turn %d: %s", p.Turn, truncate(p.Text, 70)), true
	case event.ToolCall:
		return fmt.Sprintf("turn %d → %s %s", p.Turn, p.Name, compactArgs(p.Args, 60)), true
	case event.ToolResult:
		return fmt.Sprintf("turn %d ← %s %s", p.Turn, p.Name, toolOutcome(p.Error, p.Size, p.DurationMs)), true
	case event.Usage:
		return fmt.Sprintf("turn %d: %s", p.Turn, usageLine(p)), true
	case event.FileChanged:
		return fileChange(p), true
	case event.NeedsInput:
		return fmt.Sprintf("turn %d asks: %s", p.Turn, truncate(p.Question, 70)), true
	case event.Completed:
		return "completed: " + truncate(p.Summary, 70), true
	case event.Failed:
		return "failed: " + truncate(p.Reason, 70), true
	case event.Delivered:
		return fmt.Sprintf("turn %d took in %s", p.Turn, deliveries(p)), true
	case event.Interrupted:
		return interruption(p), true
	case event.Learning:
		return learning(p), true
	case event.ModelRetry:
		return fmt.Sprintf("turn %d: %s", p.Turn, retryLine(p)), true
	case event.ModelError:
		return fmt.Sprintf("turn %d: model call failed (%s): %s", p.Turn, strings.ReplaceAll(p.Class, "_", " "), truncate(p.Message, 70)), true
	}
	return "", false
}

// retryLine renders a retry of a model call as it happens: "model call
// failed (529 overloaded); retry 2 of 5 in 4s" (the attempt about to start
// of at most so many, and the wait before it).
func retryLine(p event.ModelRetry) string {
	var why []string
	if p.Status != 0 {
		why = append(why, fmt.Sprint(p.Status))
	}
	if p.Class != "" {
		why = append(why, strings.ReplaceAll(p.Class, "_", " "))
	}
	s := "model call failed"
	if len(why) > 0 {
		s += " (" + strings.Join(why, " ") + ")"
	}
	s += fmt.Sprintf("; retry %d", p.Attempt)
	if p.MaxAttempts > 0 {
		s += fmt.Sprintf(" of %d", p.MaxAttempts)
	}
	if p.WaitMs > 0 {
		s += " in " + (time.Duration(p.WaitMs) * time.Millisecond).Round(100*time.Millisecond).String()
	}
	return s
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func turnEnd(p event.TurnEnded) string {
	s := fmt.Sprintf("%s, %s", dash(p.StopReason), millis(p.DurationMs))
	if p.Attempts > 1 {
		s += fmt.Sprintf(", %d attempts", p.Attempts)
	}
	return s
}

// millis renders a duration given in milliseconds: 850ms, 3.2s, 2m05s.
func millis(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// toolOutcome renders how a tool call went: "ok (2345 bytes, 12ms)".
func toolOutcome(failed bool, size int, durationMs int64) string {
	s := "ok"
	if failed {
		s = "error"
	}
	return fmt.Sprintf("%s (%d bytes, %s)", s, size, millis(durationMs))
}

func usageLine(p event.Usage) string {
	s := fmt.Sprintf("%s in / %s out tokens", count(p.InputTokens), count(p.OutputTokens))
	var cache []string
	if p.CacheReadTokens > 0 {
		cache = append(cache, count(p.CacheReadTokens)+" read")
	}
	if p.CacheWriteTokens > 0 {
		cache = append(cache, count(p.CacheWriteTokens)+" written")
	}
	if len(cache) > 0 {
		s += " (cache " + strings.Join(cache, ", ") + ")"
	}
	return s + fmt.Sprintf(", $%.4f; task total %s tokens, $%.4f", p.CostUSD, count(p.TotalTokens), p.TotalCostUSD)
}

func fileChange(p event.FileChanged) string {
	s := dash(p.Op) + " " + p.Path
	if p.Tool != "" {
		s += " (" + p.Tool + ")"
	}
	return s
}

func deliveries(p event.Delivered) string {
	parts := make([]string, len(p.InjectionIDs))
	for i, id := range p.InjectionIDs {
		kind := "message"
		if i < len(p.Kinds) && p.Kinds[i] != "" {
			kind = p.Kinds[i]
		}
		parts[i] = fmt.Sprintf("%s #%d", kind, id)
		if i < len(p.LatencyMs) {
			parts[i] += " after " + millis(p.LatencyMs[i])
		}
	}
	return strings.Join(parts, ", ")
}

func interruption(p event.Interrupted) string {
	s := fmt.Sprintf("turn %d interrupted by an urgent message", p.Turn)
	if len(p.Dropped) > 0 {
		s += "; dropped " + strings.Join(p.Dropped, ", ")
	}
	return s
}

func learning(p event.Learning) string {
	s := fmt.Sprintf("learning #%d: %s", p.LearningID, truncate(p.Summary, 70))
	if len(p.Tags) > 0 {
		s += " [" + strings.Join(p.Tags, ",") + "]"
	}
	return s
}

// describeSync renders a sync.* event (the Syncer's: a learning stored,
// relayed, taken in, not relayed, forgotten) as one line. A relay's events
// belong to its recipient, so they name the task the learning came from.
func describeSync(p event.Payload) (string, bool) {
	switch p := p.(type) {
	case event.LearningExtracted:
		s := fmt.Sprintf("learning #%d (%s): %s", p.LearningID, dash(p.Kind), truncate(p.Summary, 70))
		if len(p.Tags) > 0 {
			s += " [" + strings.Join(p.Tags, ",") + "]"
		}
		if p.Merged {
			s += fmt.Sprintf(" — merged, %d source%s", p.Sources, plural(p.Sources))
		}
		return s, true
	case event.SyncMessageSent:
		about := dash(p.Urgency)
		if p.DecidedBy != "" {
			about += ", decided by " + p.DecidedBy
		}
		s := fmt.Sprintf("sync from %s (%s) #%d: %q", dash(p.From), about, p.LearningID, truncate(p.Message, 90))
		if p.LatencyMs > 0 {
			s += "; queued " + millis(p.LatencyMs) + " after the learning"
		}
		return s, true
	case event.SyncDelivered:
		return fmt.Sprintf("took in sync message from %s (#%d, %s) after %s", dash(p.From), p.LearningID, dash(p.Urgency), millis(p.LatencyMs)), true
	case event.SyncIgnored:
		s := fmt.Sprintf("learning #%d not relayed", p.LearningID)
		if p.To != "" {
			s += " to " + p.To
		}
		s += ": " + dash(p.Reason)
		if p.Detail != "" {
			s += ": " + truncate(p.Detail, 80)
		}
		return s, true
	case event.KnowledgeForgot:
		return fmt.Sprintf("learning #%d forgotten: %s", p.LearningID, truncate(p.Summary, 70)), true
	}
	return "", false
}

var htmlUnescaper = strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">")

// compactArgs renders a tool call's JSON input on one line, cut to n runes.
func compactArgs(raw json.RawMessage, n int) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return truncate(string(raw), n)
	}
	// The API's JSON encoding escapes &, < and > inside strings; they mean
	// the same unescaped, and commands read better that way.
	return fitWidth(htmlUnescaper.Replace(b.String()), n)
}

// fitWidth cuts s to n characters, the last of them "…", keeping its
// spacing (truncate folds it). Unlike words.Clip it counts characters, not
// bytes: it fits text to terminal columns, where "…" or "é" takes one.
func fitWidth(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// writeBlock writes text line by line, the first line after first and the
// others after rest, at most maxLines of them (0: all) each cut to width runes
// (0: whole), then how many lines were left out.
func writeBlock(out io.Writer, first, rest, text string, maxLines, width int) {
	text = strings.TrimRight(text, " \t\r\n")
	lines := strings.Split(text, "\n")
	more := 0
	if maxLines > 0 && len(lines) > maxLines {
		lines, more = lines[:maxLines], len(lines)-maxLines
	}
	for i, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if width > 0 {
			l = fitWidth(l, width)
		}
		prefix := rest
		if i == 0 {
			prefix = first
		}
		if l == "" {
			prefix = strings.TrimRight(prefix, " ")
		}
		fmt.Fprintf(out, "%s%s\n", prefix, l)
	}
	if more > 0 {
		fmt.Fprintf(out, "%s… %d more line%s\n", rest, more, plural(more))
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// printEvent writes one event line.
func printEvent(out io.Writer, e event.Event) { writeEventLine(out, e, time.Local) }

// writeEventLine writes one event line with its time in loc.
func writeEventLine(out io.Writer, e event.Event, loc *time.Location) {
	fmt.Fprintf(out, "%s%s\n", eventPrefix(e, loc), describeEvent(e))
}

// eventPrefix is the start of an event line: id, time, task and kind.
func eventPrefix(e event.Event, loc *time.Location) string {
	id := "-"
	if e.ID != 0 {
		id = fmt.Sprint(e.ID)
	}
	return fmt.Sprintf("%-6s %s  %-8s %-18s ", id, e.Time.In(loc).Format("15:04:05.000"), dash(string(e.TaskID)), e.Kind)
}

// describeLeftover renders stopped leftover processes: how many, why, and
// their pids and command lines.
func describeLeftover(p event.ProcLeftoverStopped) string {
	ps := make([]string, len(p.Processes))
	for i, q := range p.Processes {
		ps[i] = fmt.Sprintf("%d %s", q.PID, q.Command)
	}
	s := fmt.Sprintf("stopped %d leftover process(es) of `%s` (%s): %s", len(p.Processes), truncate(words.OneLine(p.Command), 60), p.Reason, truncate(strings.Join(ps, "; "), 160))
	if len(p.Survivors) > 0 {
		s += fmt.Sprintf("; %d did not exit", len(p.Survivors))
	}
	return s
}
