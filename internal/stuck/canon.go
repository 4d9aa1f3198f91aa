package stuck

import (
	"encoding/json"
	"hash/fnv"
	"path"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

// CanonicalCall returns the shape of a tool call, so that calls a person
// would call the same compare equal: JSON keys sorted, whitespace and shell
// quoting normalized, short flags that take no value in sorted order, and
// paths made relative to root (the task's worktree).
//
// Numbers, paths and ranges stay: they are what makes two calls two.
func CanonicalCall(tool string, args json.RawMessage, root string) string {
	var key string
	var buf [6]keyValue
	if kvs, ok := appendFlatStrings(buf[:0], args); ok {
		key = canonFlat(tool, kvs, root) // nearly every call: no reflection
	} else {
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			return tool + " " + words.OneLine(string(args))
		}
		b, _ := json.Marshal(canonValue(v, root)) // sorted keys
		key = tool + " " + string(b)
	}
	if strings.Contains(key, "/tmp/") || strings.Contains(key, "/var/") || strings.Contains(key, "/private/") {
		key = maskTemps(key) // a fresh temp dir each run is the same call
	}
	return key
}

// canonValue cleans every string that looks like a path.
func canonValue(v any, root string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if cmd, ok := e.(string); ok && k == "command" {
				x[k] = CanonicalCommand(strings.TrimSpace(cmd), root)
				continue
			}
			x[k] = canonValue(e, root)
		}
	case []any:
		for i, e := range x {
			x[i] = canonValue(e, root)
		}
	case string:
		return canonPath(words.OneLine(x), root) // whitespace is cosmetic; numbers and paths stay
	}
	return v
}

// replaceRoot replaces root by "." where it stands as a whole path: at the
// start or after white space, a quote, "=", ":" or "(", and before "/", the
// end, white space, a quote or a shell operator.
func replaceRoot(cmd, root string) string {
	var b strings.Builder
	last := 0
	for i := 0; ; {
		j := strings.Index(cmd[i:], root)
		if j < 0 {
			break
		}
		j += i
		end := j + len(root)
		before := j == 0 || strings.IndexByte(" \t\n\r\v\f'\"=:(", cmd[j-1]) >= 0
		after := end == len(cmd) || strings.IndexByte("/ \t\n\r\v\f'\";)|&", cmd[end]) >= 0
		if before && after {
			b.WriteString(cmd[last:j])
			b.WriteByte('.')
			last = end
		}
		i = j + 1
	}
	if last == 0 {
		return cmd
	}
	b.WriteString(cmd[last:])
	return b.String()
}

// canonPath makes a path relative to root and clean; other text is left.
func canonPath(s, root string) string {
	if s == "" || strings.ContainsAny(s, " \n\t") || strings.Contains(s, "...") || !strings.Contains(s, "/") && !strings.HasPrefix(s, ".") {
		return s // ./... is a Go package pattern, not a path to clean
	}
	if root = strings.TrimSuffix(root, "/"); root != "" && strings.HasPrefix(s, root) && (len(s) == len(root) || s[len(root)] == '/') {
		s = "." + s[len(root):]
	}
	return path.Clean(s)
}

// CanonicalCommand normalizes a shell command: quotes removed, whitespace
// collapsed, the worktree's path made relative, and within each simple
// command the flags that take no value sorted (a flag is movable when it is
// --name=value, or when the next word is another flag or the end: then it
// cannot be taking that word as its value).
func CanonicalCommand(cmd, root string) string {
	if root = strings.TrimSuffix(root, "/"); root != "" && strings.Contains(cmd, root) {
		cmd = replaceRoot(cmd, root)
	}
	var wbuf, obuf [16]string // most commands: no allocation for the words
	words := shellWords(wbuf[:0], cmd)
	for i, w := range words {
		switch w {
		case "|", "||", "&&", ";", "&":
		default:
			words[i] = canonPath(w, "")
		}
	}
	out := obuf[:0]
	start := 0
	for i, w := range words {
		switch w {
		case "|", "||", "&&", ";", "&":
			out = appendSortedFlags(out, words[start:i])
			out = append(out, w)
			start = i + 1
		}
	}
	out = appendSortedFlags(out, words[start:])
	return strings.Join(out, " ")
}

// appendSortedFlags appends a simple command's words to out: the fixed
// words in their order, then the movable flags sorted.
func appendSortedFlags(out, seg []string) []string {
	isFlag := func(w string) bool { return len(w) > 1 && w[0] == '-' && w != "--" }
	var buf [8]string
	movable := buf[:0]
	for i, w := range seg {
		next := ""
		if i+1 < len(seg) {
			next = seg[i+1]
		}
		if i > 0 && isFlag(w) && (strings.Contains(w, "=") || next == "" || isFlag(next)) {
			movable = append(movable, w)
			continue
		}
		out = append(out, w)
	}
	slices.Sort(movable)
	return append(out, movable...)
}

// shellWords splits a command into words the way a shell would for
// comparison: quotes group and are dropped, operators are words of their own.
// A word without quotes or escapes is a substring of s; only the others are
// built. The words are appended to words (a caller's buffer).
func shellWords(words []string, s string) []string {
	var (
		cur   []byte // the word being built, once it needed building
		built bool
		start = -1 // where the current word started, -1 between words
	)
	end := func(i int) {
		switch {
		case built:
			words = append(words, string(cur))
		case start >= 0:
			words = append(words, s[start:i])
		}
		cur, built, start = cur[:0], false, -1
	}
	build := func(i int) { // switch the word at i to building
		if !built {
			if start >= 0 {
				cur = append(cur[:0], s[start:i]...)
			}
			built = true
		}
		if start < 0 {
			start = i
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			build(i)
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				cur = append(cur, s[i+1:]...)
				i = len(s)
				break
			}
			cur = append(cur, s[i+1:i+1+j]...)
			i += 1 + j
		case c == '\\' && i+1 < len(s):
			build(i)
			i++
			cur = append(cur, s[i])
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			end(i)
		case c == '|' || c == '&' || c == ';':
			end(i)
			op := s[i : i+1]
			if c != ';' && i+1 < len(s) && s[i+1] == c {
				op = s[i : i+2]
				i++
			}
			words = append(words, op)
		default:
			if built {
				cur = append(cur, c)
			} else if start < 0 {
				start = i
			}
		}
	}
	end(len(s))
	return words
}

// MaskResult replaces the noise in a successful result: temporary paths,
// times, UUIDs and hex ids, durations (0.412s, 41s, 3m2s) and source
// positions (pay.go:88:5). Other numbers stay: the step a command printed,
// the line range a page showed, the counts of a CI run are what the result
// says, and a result whose numbers moved is a new result.
func MaskResult(s string) string {
	if s == "" {
		return ""
	}
	if !maskTempsAndSeeDigits(&s) {
		return words.OneLine(s)
	}
	s = maskTimes(s)
	s = maskPositions(s)
	s = maskUUIDs(s)
	s = maskHex(s)
	return maskDurationsTo(s, true) // and words.OneLine
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// maskTempsAndSeeDigits masks the temporary paths of *s and reports
// whether what is left holds a digit, scanning it once when it holds no
// path.
func maskTempsAndSeeDigits(s *string) bool {
	digit, slash := false, false
	for i := 0; i < len(*s) && !(digit && slash); i++ {
		switch c := (*s)[i]; {
		case isDigit(c):
			digit = true
		case c == '/':
			slash = true
		}
	}
	if slash && (strings.Contains(*s, "/tmp/") || strings.Contains(*s, "/var/") || strings.Contains(*s, "/private/")) {
		*s = maskTemps(*s)
		digit = strings.ContainsAny(*s, "0123456789")
	}
	return digit
}

// Mask replaces the volatile parts of a text (temporary paths, times,
// UUIDs and hex ids, numbers) with placeholders and collapses whitespace.
func Mask(s string) string {
	if s == "" {
		return ""
	}
	if !maskTempsAndSeeDigits(&s) {
		return words.OneLine(s) // times, ids, hex and numbers all hold a digit
	}
	return maskDigitsOneLine(maskHex(maskUUIDs(maskTimes(s))))
}

// maskDigitsOneLine is words.OneLine(maskDigits(s)) in one pass.
func maskDigitsOneLine(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		if n := words.SpaceAt(s, i); n > 0 {
			space = b.Len() > 0
			i += n
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if isDigit(s[i]) {
			i = fraction(s, digits(s, i))
			b.WriteByte('#')
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// maskHex replaces hex ids and addresses, words of 6 or more characters:
// hex digits holding both a digit and a letter, or 0x and hex digits.
// Shorter words ("dead", "a1", "0x1") stay.
func maskHex(s string) string {
	r := replacer{s: s}
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if isHexID(s[i:j]) {
			r.replace(i, j, "<hex>")
		}
		i = j
	}
	return r.done()
}

func isHexID(w string) bool {
	if len(w) < 6 {
		return false
	}
	if w[0] == '0' && (w[1] == 'x' || w[1] == 'X') {
		w = w[2:]
		for k := 0; k < len(w); k++ {
			if !isHex(w[k]) {
				return false
			}
		}
		return true
	}
	digit, letter := false, false
	for k := 0; k < len(w); k++ {
		c := w[k]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case isHex(c):
			letter = true
		default:
			return false
		}
	}
	return digit && letter
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// maskDigits replaces each number (digits, with one decimal part) by #.
func maskDigits(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] < '0' || s[i] > '9' {
			b.WriteByte(s[i])
			i++
			continue
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i+1 < len(s) && s[i] == '.' && s[i+1] >= '0' && s[i+1] <= '9' {
			for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			}
		}
		b.WriteByte('#')
	}
	return b.String()
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// Similar reports whether two masked texts are near-duplicates: equal, or
// sharing at least threshold of their words (Jaccard over word sets, with
// the lengths close enough to allow it).
func Similar(a, b string, threshold float64) bool {
	if a == b {
		return true
	}
	if threshold >= 1 || a == "" || b == "" || !closeLengths(len(a), len(b), threshold) {
		return false
	}
	return similarSets(wordSet(a), wordSet(b), threshold)
}

func closeLengths(la, lb int, threshold float64) bool {
	return float64(min(la, lb)) >= threshold*float64(max(la, lb))
}

// wordSet returns the hashes of a text's distinct words, sorted: two texts'
// sets compare by a merge, without maps.
func wordSet(s string) []uint64 {
	var buf [128]uint64 // most texts: hashed, sorted and deduplicated here
	out := buf[:0]
	const offset, prime = 14695981039346656037, 1099511628211
	h, in := uint64(offset), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isWordSep(c) {
			if in {
				out = append(out, h)
				h, in = offset, false
			}
			continue
		}
		h = (h ^ uint64(c)) * prime
		in = true
	}
	if in {
		out = append(out, h)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return nil
	}
	return slices.Clone(out) // kept at its size
}

func isWordSep(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// similarSets is Similar over two wordSets: the Jaccard index at least
// threshold.
func similarSets(a, b []uint64, threshold float64) bool {
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - inter
	return union > 0 && float64(inter)/float64(union) >= threshold
}
