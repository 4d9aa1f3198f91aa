package knowledge

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// resolve applies the error-resolution rule to a call's result: a failure
// is remembered under its (tool, target), replacing the one before; a later
// success of the same (tool, target) after files changed is a learning. A
// success with nothing changed in between is a flaky command, not a
// learning, and neither is a file call that works once its own file was
// written: the failure is forgotten silently.
func (st *taskState) resolve(c toolCall, r event.ToolResult) []Candidate {
	if c.family == "" || c.family == "record_learning" || c.target == "" {
		return nil
	}
	key := c.family + "\x00" + c.target
	if r.Error {
		if len(st.failures) >= maxFailures && st.failures[key] == nil {
			st.evictOldestFailure()
		}
		st.seq++
		c.args = nil // a write's content is not needed
		st.failures[key] = &failure{call: c, text: resultText(r), seq: st.seq}
		return nil
	}
	f := st.failures[key]
	if f == nil {
		return nil
	}
	delete(st.failures, key)
	if c.family != "bash" {
		// Reading or editing a file that was missing works once it is
		// written: that says nothing.
		f.changed = slices.DeleteFunc(f.changed, func(p string) bool { return p == c.target })
	}
	if len(f.changed) == 0 {
		return nil
	}
	line := tellingLine(f.text)
	files := fileList(f.changed)
	var sum string
	if line != "" {
		sum = fmt.Sprintf("`%s` failed (%s) until %s changed", f.call.display(), line, files)
	} else {
		sum = fmt.Sprintf("`%s` failed until %s changed", f.call.display(), files)
	}
	detail := fmt.Sprintf("`%s` failed in turn %d:\n%s\nIt succeeded in turn %d after these files changed: %s.",
		f.call.display(), f.call.turn, words.Clip(strings.TrimSpace(f.text), 599), c.turn, strings.Join(f.changed, ", "))
	return []Candidate{{
		Kind:    ErrorResolution,
		Summary: words.Clip(sum, maxSummary-1),
		Detail:  words.Clip(detail, maxDetail-1),
		Tags:    []string{c.family, "error"},
		Files:   slices.Clone(f.changed),
		Turn:    c.turn,
	}}
}

func (st *taskState) evictOldestFailure() {
	oldest := ""
	for k, f := range st.failures {
		if oldest == "" || f.seq < st.failures[oldest].seq {
			oldest = k
		}
	}
	delete(st.failures, oldest)
}

// noteChange adds a changed file to every open failure of the task.
func (st *taskState) noteChange(p string) {
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return
	}
	for _, f := range st.failures {
		if len(f.changed) < maxChanged && !slices.Contains(f.changed, p) {
			f.changed = append(f.changed, p)
		}
	}
}

// fileList names up to three files: "a.go, b.go, c.go and 2 more".
func fileList(files []string) string {
	if len(files) <= 3 {
		return strings.Join(files, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(files[:3], ", "), len(files)-3)
}

// resultText is what a ToolResult shows of its result: the preview and, for
// a long result, its tail, without the ellipses that mark the cuts.
func resultText(r event.ToolResult) string {
	p := strings.TrimSuffix(r.Preview, "…")
	if r.Tail == "" {
		return p
	}
	return p + "\n" + strings.TrimPrefix(r.Tail, "…")
}

// strongWords make a line the likely statement of an error.
var strongWords = []string{
	"error", "panic", "exception", "cannot", "can't", "denied", "missing",
	"not found", "no such", "invalid", "refuse", "reject", "undefined",
	"unexpected", "fatal", "undeclared", "unknown", "mismatch", "expected",
}

// tellingLine picks the line of a failed call's output that says what went
// wrong: the first line naming an error (error, panic, not found, …), else
// the first "file:line: message" line, else the first line saying it
// failed, else the last line. Bracketed notes ("[exit code 1]") and
// summaries that say nothing ("FAIL", "exit status 1", "make: *** …") are
// skipped. A "file:line:" location prefix is removed.
func tellingLine(text string) string {
	best, bestScore, last := "", 0, ""
	for l := range strings.SplitSeq(text, "\n") {
		l = cleanLine(l)
		if l == "" {
			continue
		}
		last = l
		if s := lineScore(l); s > bestScore {
			best, bestScore = l, s
		}
	}
	if best == "" {
		best = last
	}
	return words.Clip(strings.ReplaceAll(stripLocation(best), "`", "'"), 89)
}

// cleanLine trims a line and drops what is never the message: bracketed
// notes, exit-code suffixes, cut marks.
func cleanLine(l string) string {
	l = strings.TrimSpace(strings.Trim(strings.TrimSpace(l), "…"))
	if i := strings.LastIndex(l, "[exit code"); i >= 0 && strings.HasSuffix(l, "]") {
		l = strings.TrimSpace(l[:i])
	}
	if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") || l == "(no output)" {
		return ""
	}
	return l
}

// lineScore rates how well a line states an error: 3 names an error, 2 is
// a compiler or test message (file:line:), 1 says it failed, 0 is noise.
func lineScore(l string) int {
	low := strings.ToLower(l)
	switch {
	case low == "fail" || strings.HasPrefix(low, "fail\t") || strings.HasPrefix(low, "--- fail") ||
		strings.HasPrefix(low, "exit status") || strings.Contains(low, "***") ||
		strings.HasPrefix(low, "ok ") || strings.HasPrefix(low, "ok\t") || strings.HasPrefix(low, "=== "):
		return 0
	}
	for _, w := range strongWords {
		if strings.Contains(low, w) {
			return 3
		}
	}
	if locationEnd(l) > 0 {
		return 2
	}
	if strings.Contains(low, "fail") {
		return 1
	}
	return 0
}

// stripLocation removes a leading "file:line:" or "file:line:col:" from a
// compiler or test message.
func stripLocation(l string) string {
	if n := locationEnd(l); n > 0 {
		if rest := strings.TrimSpace(l[n:]); rest != "" {
			return rest
		}
	}
	return l
}

// locationEnd returns the length of a leading "file:line:" (or
// "file:line:col:") prefix of l, or 0: a word holding a dot, then one or
// two numbers, each followed by a colon.
func locationEnd(l string) int {
	i := strings.IndexByte(l, ':')
	if i <= 0 || strings.ContainsAny(l[:i], " \t") || !strings.Contains(l[:i], ".") {
		return 0
	}
	end := 0
	for n, rest := 0, l[i+1:]; n < 2; n++ {
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 || j == len(rest) || rest[j] != ':' {
			break
		}
		end = len(l) - len(rest) + j + 1
		rest = rest[j+1:]
	}
	if end > 0 && end < len(l) && !unicode.IsSpace(rune(l[end])) {
		return 0 // "a.b:1:2x" is not a location
	}
	return end
}
