package knowledge

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// discover applies the discovery rule to a successful glob or grep: a
// search that names one to three files located something. A result cut
// in its middle (only its preview and tail are known) may name more, and
// is passed over.
func (st *taskState) discover(c toolCall, r event.ToolResult) []Candidate {
	if (c.family != "glob" && c.family != "grep") || c.target == "" {
		return nil
	}
	if c.family == "glob" && !strings.ContainsAny(c.target, "*?[{") {
		return nil // a literal path: the agent knew where to look
	}
	text, whole := wholeResult(r)
	if !whole {
		return nil
	}
	var files []string
	if c.family == "glob" {
		files, whole = globFiles(text)
	} else {
		files, whole = grepFiles(text)
	}
	if !whole || len(files) == 0 || len(files) > maxDiscoveries {
		return nil
	}
	sorted := slices.Sorted(slices.Values(files))
	if !st.remember("discovery\x00" + c.family + "\x00" + c.target + "\x00" + strings.Join(sorted, "\x00")) {
		return nil
	}
	pat := words.Clip(strings.ReplaceAll(words.OneLine(c.target), "`", "'"), 79)
	var sum, detail string
	if c.family == "glob" {
		sum = fmt.Sprintf("files matching `%s`: %s", pat, strings.Join(files, ", "))
		detail = fmt.Sprintf("glob `%s` matched only %s.", pat, strings.Join(files, ", "))
	} else {
		sum = fmt.Sprintf("`%s` is in %s", pat, strings.Join(files, ", "))
		where := ""
		if p := str(c.args, "path"); p != "" {
			where += " under " + p
		}
		if g := str(c.args, "glob", "include"); g != "" {
			where += " in files matching " + g
		}
		detail = fmt.Sprintf("grep `%s`%s found:\n%s", pat, where, strings.TrimSpace(text))
	}
	return []Candidate{{
		Kind:    Discovery,
		Summary: words.Clip(sum, maxSummary-1),
		Detail:  words.Clip(detail, maxDetail-1),
		Tags:    []string{"location"},
		Files:   files,
		Turn:    c.turn,
	}}
}

// wholeResult returns a result's text and whether it is all of it: the
// preview alone, or the preview and the tail when together they cover
// the result (a few bytes of trimmed space aside).
func wholeResult(r event.ToolResult) (string, bool) {
	if r.Tail == "" {
		return r.Preview, true
	}
	p := strings.TrimSuffix(r.Preview, "…")
	t := strings.TrimPrefix(r.Tail, "…")
	if len(p)+len(t)+4 < r.Size {
		return "", false
	}
	return p + t, true
}

// globFiles reads the paths a glob printed, one a line. Headers ("Found 2
// files") and notes are skipped; a note that more were not shown makes
// the list partial.
func globFiles(text string) (files []string, whole bool) {
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		low := strings.ToLower(l)
		switch {
		case l == "" || strings.HasPrefix(low, "found ") || l == "---":
			continue
		case strings.HasPrefix(l, "["):
			if strings.Contains(low, "more") || strings.Contains(low, "not shown") {
				return nil, false
			}
			continue
		case strings.HasPrefix(low, "no files") || strings.Contains(l, ": ") || !utf8.ValidString(l):
			return nil, false // a message, not a list
		}
		files = addFile(files, l)
	}
	return files, true
}

// grepFiles reads the files a grep named: the "path:line:text" prefix of
// each match, the bare paths of a files-only listing, or the "File: path"
// headers of gemini's search_file_content.
func grepFiles(text string) (files []string, whole bool) {
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimRight(l, "\r")
		low := strings.ToLower(strings.TrimSpace(l))
		switch {
		case low == "" || low == "---" || strings.HasPrefix(low, "found "):
			continue
		case strings.HasPrefix(low, "no matches") || strings.HasPrefix(low, "no files"):
			return nil, false
		case strings.HasPrefix(low, "["):
			if strings.Contains(low, "more") || strings.Contains(low, "not shown") {
				return nil, false
			}
			continue
		case strings.HasPrefix(l, "File: "):
			files = addFile(files, strings.TrimSpace(l[len("File: "):]))
			continue
		case lineMarker(l):
			continue // gemini's "L12: text" under a File: header
		}
		if p, ok := matchPath(l); ok {
			files = addFile(files, p)
		} else if !strings.ContainsAny(l, " \t:") {
			files = addFile(files, l) // a files-only listing
		} else {
			return nil, false
		}
	}
	return files, true
}

// matchPath returns the path of a "path:line:text" (or "path:line-text")
// grep line.
func matchPath(l string) (string, bool) {
	for i := 0; i < len(l); i++ {
		if l[i] != ':' {
			continue
		}
		j := i + 1
		for j < len(l) && l[j] >= '0' && l[j] <= '9' {
			j++
		}
		if j > i+1 && (j == len(l) || l[j] == ':' || l[j] == '-') && i > 0 {
			return l[:i], true
		}
	}
	return "", false
}

// lineMarker reports gemini's "L12:" match lines.
func lineMarker(l string) bool {
	if len(l) < 3 || l[0] != 'L' {
		return false
	}
	i := 1
	for i < len(l) && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	return i > 1 && i < len(l) && l[i] == ':'
}

func addFile(files []string, p string) []string {
	p = strings.TrimPrefix(p, "./")
	if p == "" || slices.Contains(files, p) {
		return files
	}
	return append(files, p)
}

// statementMarkers are the phrases with which an agent says it found
// something out.
var statementMarkers = []string{
	"found that", "turns out", "note:", "important:", "discovered that", "gotcha:",
}

// statements applies the statement rule to an assistant text: each
// sentence holding a marker, not a question, not hypothetical ("if it
// turns out …") or negated ("haven't found that …"), with enough words
// once normalized. At most three per text, each once per task.
func (st *taskState) statements(p event.Text) []Candidate {
	var out []Candidate
	for _, s := range sentences(p.Text) {
		if len(out) == maxStatements {
			break
		}
		sum, ok := statement(s)
		if !ok || !st.remember("statement\x00"+Fingerprint(sum)) {
			continue
		}
		out = append(out, Candidate{
			Kind:    Statement,
			Summary: sum,
			Tags:    []string{"statement"},
			Files:   pathTokens(sum),
			Turn:    p.Turn,
		})
	}
	return out
}

// conditionals before a marker make a sentence hypothetical ("if it
// turns out …"); a negation just before it negates it ("I haven't found
// that …", "did not find that").
var (
	conditionals     = setOf("if", "whether", "unless", "case", "might", "may", "could", "would")
	nearNegations    = setOf("not", "never", "no", "cannot")
	negationDistance = 2 // words before the marker
)

// hedged reports whether the text before a marker hedges it.
func hedged(before string) bool {
	ws := strings.Fields(strings.ReplaceAll(before, "’", "'"))
	for i, w := range ws {
		w = strings.Trim(w, ",;:()\"'`")
		if conditionals[w] {
			return true
		}
		if i >= len(ws)-negationDistance && (nearNegations[w] || strings.HasSuffix(w, "n't")) {
			return true
		}
	}
	return false
}

// statement returns the summary of a sentence if it states a finding.
func statement(s sentence) (string, bool) {
	if s.end == '?' {
		return "", false
	}
	text := cleanSentence(s.text)
	low := strings.ToLower(text)
	at := -1
	for _, m := range statementMarkers {
		if i := strings.Index(low, m); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 || strings.HasSuffix(text, "?") {
		return "", false
	}
	if hedged(low[:at]) {
		return "", false
	}
	if s.end == '.' || s.end == '!' {
		text += string(s.end)
	}
	if utf8.RuneCountInString(Normalize(text)) < 15 {
		return "", false
	}
	return words.Clip(text, maxSummary-1), true
}

// cleanSentence drops markdown around a sentence: list bullets, quotes,
// headings, comment marks and emphasis.
func cleanSentence(s string) string {
	s = strings.NewReplacer("**", "", "__", "").Replace(s)
	s = strings.TrimLeft(strings.TrimSpace(s), "-*>#/ \t")
	return words.OneLine(s)
}

// sentence is a piece of text and the mark that ended it ('.', '!', '?',
// or 0 for a line end or the end of the text).
type sentence struct {
	text string
	end  byte
}

// sentences splits text at line ends and at '.', '!' and '?' followed by
// space or the end, so that paths (auth/jwt.go), versions (v1.2) and
// "e.g." do not end a sentence. Fenced code blocks are skipped.
func sentences(text string) []sentence {
	var out []sentence
	fenced := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c != '.' && c != '!' && c != '?' {
				continue
			}
			if i+1 < len(line) && line[i+1] != ' ' && line[i+1] != '\t' {
				continue
			}
			if c == '.' && abbreviation(line[start:i]) {
				continue
			}
			if t := strings.TrimSpace(line[start:i]); t != "" {
				out = append(out, sentence{text: t, end: c})
			}
			start = i + 1
		}
		if t := strings.TrimSpace(line[start:]); t != "" {
			out = append(out, sentence{text: t})
		}
	}
	return out
}

// abbreviation reports whether s ends in an abbreviation whose period does
// not end the sentence.
func abbreviation(s string) bool {
	low := strings.ToLower(s)
	for _, a := range []string{"e.g", "i.e", "etc", "vs", "cf"} {
		if low == a || strings.HasSuffix(low, " "+a) || strings.HasSuffix(low, "("+a) {
			return true
		}
	}
	return false
}
