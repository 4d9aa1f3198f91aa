package stuck

import (
	"strings"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

// The volatile parts of tool output and errors, masked before results are
// compared: a rerun that differs only in these is the same result. Each is a
// hand-written scanner with the meaning of a regular expression (the
// expression is in its comment, and the tests hold the scanner to it on
// random and corpus text); the expressions were the watcher's main cost.

// replacer collects the output of one masking pass; it allocates only when
// a pass replaces something, once. With line set (the last pass), its
// output is also words.OneLine's: white space collapsed as it is copied.
type replacer struct {
	s    string
	out  lineWriter
	last int
	used bool
	line bool
}

// replace writes s[r.last:from], then with, and skips to to.
func (r *replacer) replace(from, to int, with string) {
	if !r.used {
		r.used = true
		r.out.b.Grow(len(r.s) + 8)
	}
	r.out.write(r.s[r.last:from], r.line)
	r.out.write(with, r.line)
	r.last = to
}

func (r *replacer) done() string {
	if !r.used {
		if r.line {
			return words.OneLine(r.s)
		}
		return r.s
	}
	r.out.write(r.s[r.last:], r.line)
	return r.out.b.String()
}

// lineWriter builds a string from pieces, as words.OneLine of their
// concatenation when asked: each run of white space one space, none at
// either end. A piece may end or start a run; no white space rune may be
// split between two pieces (the masks cut only next to ASCII bytes that
// are no space).
type lineWriter struct {
	b     strings.Builder
	space bool // white space since the last word written
}

func (w *lineWriter) write(s string, line bool) {
	if !line {
		w.b.WriteString(s)
		return
	}
	for i := 0; i < len(s); {
		if n := words.SpaceAt(s, i); n > 0 {
			w.space = true
			i += n
			continue
		}
		j := i + 1
		for j < len(s) {
			if c := s[j]; c > ' ' && c < utf8.RuneSelf {
				j++ // the common case, without a call
				continue
			}
			if words.SpaceAt(s, j) != 0 {
				break
			}
			j++
		}
		if w.space && w.b.Len() > 0 {
			w.b.WriteByte(' ')
		}
		w.space = false
		w.b.WriteString(s[i:j])
		i = j
	}
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// boundaryBefore is \b before s[i], a word byte: the start, or a byte
// before it that is no word character (bytes of a multi-byte rune are none).
func boundaryBefore(s string, i int) bool { return i == 0 || !isWordByte(s[i-1]) }

// boundaryAfter is \b after a word byte ending at i.
func boundaryAfter(s string, i int) bool { return i == len(s) || !isWordByte(s[i]) }

// digits returns the end of the run of ASCII digits at i.
func digits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// twoDigits reports whether s holds two digits at i.
func twoDigits(s string, i int) bool { return i+1 < len(s) && isDigit(s[i]) && isDigit(s[i+1]) }

// fraction returns the end of `\.\d+` at i, or i when there is none.
func fraction(s string, i int) int {
	if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
		return digits(s, i+1)
	}
	return i
}

// maskTemps is `(^|[^\w.\-/])(?:/tmp|/var/folders|/private/var|/var/tmp)/[^\s:'"]*`
// replaced by "$1<tmp>": a temporary path, at the start or after a rune that
// cannot continue a path.
func maskTemps(s string) string {
	r := replacer{s: s}
	for i := 0; i < len(s); {
		if i == 0 {
			if end := tempPath(s, 0); end > 0 {
				r.replace(0, end, "<tmp>")
				i = end
				continue
			}
		}
		c, w := s[i], 1
		if c >= utf8.RuneSelf {
			_, w = utf8.DecodeRuneInString(s[i:])
		}
		if c >= utf8.RuneSelf || !isWordByte(c) && c != '.' && c != '-' && c != '/' {
			if end := tempPath(s, i+w); end > 0 {
				r.replace(i+w, end, "<tmp>")
				i = end
				continue
			}
		}
		i += w
	}
	return r.done()
}

// tempPath returns the end of a temporary path starting at i, or 0.
func tempPath(s string, i int) int {
	rest := s[i:]
	var n int
	switch {
	case strings.HasPrefix(rest, "/tmp/"):
		n = len("/tmp/")
	case strings.HasPrefix(rest, "/var/folders/"):
		n = len("/var/folders/")
	case strings.HasPrefix(rest, "/private/var/"):
		n = len("/private/var/")
	case strings.HasPrefix(rest, "/var/tmp/"):
		n = len("/var/tmp/")
	default:
		return 0
	}
	j := i + n
	for j < len(s) {
		switch s[j] {
		case ' ', '\t', '\n', '\f', '\r', ':', '\'', '"': // \s is [\t\n\f\r ]
			return j
		}
		j++
	}
	return j
}

// maskTimes is
// `\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b`
// replaced by "<time>": a date and time, or a time of day with seconds.
func maskTimes(s string) string {
	r := replacer{s: s}
	for i := 0; i+6 < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		if end := dateTime(s, i); end > 0 {
			r.replace(i, end, "<time>")
			i = end
			continue
		}
		if end := clockTime(s, i); end > 0 {
			r.replace(i, end, "<time>")
			i = end
			continue
		}
		i++
	}
	return r.done()
}

// dateTime returns the end of the expression's first branch at i, or 0.
func dateTime(s string, i int) int {
	if i+16 > len(s) || !twoDigits(s, i) || !twoDigits(s, i+2) || s[i+4] != '-' || !twoDigits(s, i+5) ||
		s[i+7] != '-' || !twoDigits(s, i+8) || s[i+10] != 'T' && s[i+10] != ' ' || !twoDigits(s, i+11) ||
		s[i+13] != ':' || !twoDigits(s, i+14) {
		return 0
	}
	j := i + 16
	if j+2 < len(s) && s[j] == ':' && twoDigits(s, j+1) {
		j = fraction(s, j+3)
	}
	if j < len(s) {
		switch s[j] {
		case 'Z':
			j++
		case '+', '-':
			switch {
			case twoDigits(s, j+1) && j+3 < len(s) && s[j+3] == ':' && twoDigits(s, j+4):
				j += 6
			case twoDigits(s, j+1) && twoDigits(s, j+3):
				j += 5
			}
		}
	}
	return j
}

// clockTime returns the end of the expression's second branch at i, or 0.
func clockTime(s string, i int) int {
	if !boundaryBefore(s, i) {
		return 0
	}
	j := i + 1
	if j < len(s) && isDigit(s[j]) {
		j++
	}
	if j+6 > len(s) || s[j] != ':' || !twoDigits(s, j+1) || s[j+3] != ':' || !twoDigits(s, j+4) {
		return 0
	}
	j += 6
	if f := fraction(s, j); f > j && boundaryAfter(s, f) {
		return f // the fraction's digits end at a boundary
	}
	if boundaryAfter(s, j) {
		return j
	}
	return 0
}

// maskUUIDs is
// `(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`
// replaced by "<id>".
func maskUUIDs(s string) string {
	r := replacer{s: s}
	for i := 0; i+36 <= len(s); {
		if isHex(s[i]) && boundaryBefore(s, i) && isUUID(s[i:i+36]) && boundaryAfter(s, i+36) {
			r.replace(i, i+36, "<id>")
			i += 36
			continue
		}
		i++
	}
	return r.done()
}

func isUUID(u string) bool {
	for k := range len(u) {
		switch k {
		case 8, 13, 18, 23:
			if u[k] != '-' {
				return false
			}
		default:
			if !isHex(u[k]) {
				return false
			}
		}
	}
	return true
}

// maskPositions is `(\.[A-Za-z]\w*):\d+(?::\d+)?` replaced by "$1:#": the
// line and column after a file name's extension (pay.go:88:5 → pay.go:#).
func maskPositions(s string) string {
	r := replacer{s: s}
	for i := 0; i+3 < len(s); {
		if s[i] != '.' || !isLetter(s[i+1]) {
			i++
			continue
		}
		j := i + 2
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if j+1 >= len(s) || s[j] != ':' || !isDigit(s[j+1]) {
			i = j // no word byte before j can start a match: none is '.'
			continue
		}
		end := digits(s, j+1)
		if end+1 < len(s) && s[end] == ':' && isDigit(s[end+1]) {
			end = digits(s, end+1)
		}
		r.replace(j, end, ":#")
		i = end
	}
	return r.done()
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// maskDurations is
// `\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m))*\b`
// replaced by "<dur>": 0.412s, 41s, 3m2s. A unit ends in a word character,
// so a shorter choice anywhere leaves a letter or digit before the final
// \b, and the first choice at each step is the only one that can match.
func maskDurations(s string) string { return maskDurationsTo(s, false) }

// maskDurationsTo is maskDurations, followed by words.OneLine when line is
// set, in one copy.
func maskDurationsTo(s string, line bool) string {
	r := replacer{s: s, line: line}
	for i := 0; i+1 < len(s); {
		if !isDigit(s[i]) || !boundaryBefore(s, i) {
			i++
			continue
		}
		j := durUnit(s, fraction(s, digits(s, i)), true)
		if j < 0 {
			i = digits(s, i) // a position inside the number has no \b
			continue
		}
		for j < len(s) && isDigit(s[j]) {
			k := durUnit(s, fraction(s, digits(s, j)), false)
			if k < 0 {
				break
			}
			j = k
		}
		if !boundaryAfter(s, j) {
			i = digits(s, i)
			continue
		}
		r.replace(i, j, "<dur>")
		i = j
	}
	return r.done()
}

// durUnit returns the end of a unit at i (h only when hours), or -1.
func durUnit(s string, i int, hours bool) int {
	if i >= len(s) {
		return -1
	}
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, "ns"), strings.HasPrefix(rest, "us"), strings.HasPrefix(rest, "ms"):
		return i + 2
	case strings.HasPrefix(rest, "µs"):
		return i + len("µs")
	case rest[0] == 's' || rest[0] == 'm' || hours && rest[0] == 'h':
		return i + 1
	}
	return -1
}
