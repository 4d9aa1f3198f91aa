package knowledge

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// colonMarkers are the leading labels Normalize drops while the colon that
// makes them labels is still there ("Note: x" is x; "note the x" keeps its
// verb).
var colonMarkers = []string{"note:", "important:", "gotcha:"}

// wordMarkers are the leading phrases Normalize drops from the normalized
// text, longest first: they say how a fact was found, not what it is.
var wordMarkers = []string{
	"it turns out that", "i discovered that", "we discovered that",
	"turns out that", "discovered that", "i found that", "we found that",
	"it turns out", "found that", "turns out",
}

// Normalize returns the canonical form of s for exact deduplication:
// lowercase; a leading marker ("Note:", "Important:", "I found that",
// "it turns out that", …) dropped; quotes and backticks removed;
// punctuation turned into spaces except '.', '/' and '-' between word
// characters, so identifiers such as src/auth/jwt.go, v1.2, user_id and
// x-request-id stay whole; apostrophes inside words dropped (doesn't is
// doesnt); spaces collapsed. The result is valid UTF-8 and Normalize of it
// is itself.
func Normalize(s string) string {
	s = toLower(strings.ToValidUTF8(s, " "))
	s = stripColonMarkers(s)
	s = tidyPunctuation(s)
	for again := true; again; {
		again = false
		for _, m := range wordMarkers {
			if rest, ok := strings.CutPrefix(s, m+" "); ok {
				s, again = rest, true
				break
			}
		}
	}
	return s
}

// toLower lowercases s until it is stable, which a single pass is not for a
// few Unicode letters.
func toLower(s string) string {
	for range 4 {
		l := strings.ToLower(s)
		if l == s {
			break
		}
		s = l
	}
	return s
}

// stripColonMarkers drops leading "note:"-style labels and what precedes
// them that is not a word (markdown emphasis, bullets).
func stripColonMarkers(s string) string {
	for {
		t := strings.TrimLeftFunc(s, func(r rune) bool { return !isWord(r) })
		cut := false
		for _, m := range colonMarkers {
			if rest, ok := strings.CutPrefix(t, m); ok {
				s, cut = rest, true
				break
			}
		}
		if !cut {
			return s
		}
	}
}

// isWord reports whether r belongs to a word: letters, numbers, combining
// marks and '_'.
func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// isApostrophe reports the characters that join contractions.
func isApostrophe(r rune) bool { return r == '\'' || r == '’' || r == 'ʼ' }

// tidyPunctuation is the punctuation-and-space pass of Normalize.
func tidyPunctuation(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	lastWord, space, skip := false, false, false
	for i, r := range s {
		if skip {
			skip = false // the s of a possessive
			continue
		}
		next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
		switch {
		case isWord(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			lastWord = true
		case (r == '.' || r == '/' || r == '-') && lastWord && isWord(next):
			b.WriteRune(r)
			lastWord = false
		case isApostrophe(r) && lastWord && unicode.IsLetter(next):
			// dropped: the word goes on (doesn't → doesnt), or ends for a
			// possessive (jwt.go's → jwt.go)
			if rest := s[i+utf8.RuneLen(r):]; next == 's' {
				after, _ := utf8.DecodeRuneInString(rest[1:])
				if !isWord(after) {
					skip = true
				}
			}
		default:
			space, lastWord = true, false
		}
	}
	return b.String()
}

// stopwords are dropped by Terms. Negations are not: they are mapped to
// "not" instead, since "rejects tokens without iat" and "accepts tokens
// with iat" must not look alike.
var stopwords = setOf(
	"the", "a", "an", "is", "are", "to", "of", "in", "on", "for", "and", "or",
	"it", "its", "that", "this", "these", "those", "with", "be", "been", "as",
	"at", "by", "from", "was", "were", "has", "have", "had", "i", "we", "you",
	"they", "there", "so", "but", "if", "then", "than", "into", "do", "does",
	"did", "can", "will", "would", "should", "just", "also", "which", "when",
	"what", "where", "who", "our", "my", "your", "their", "here", "some", "any",
	"all", "very", "only", "now", "about",
	// How a location is said: "X lives in Y", "X is implemented in Y".
	"live", "located", "implemented", "defined", "reside", "sit",
)

// negations are the words Terms reads as "not".
var negations = setOf(
	"not", "no", "without", "lack", "lacks", "lacking", "never", "cannot", "cant", "dont", "doesnt",
	"didnt", "isnt", "arent", "wasnt", "werent", "wont", "wouldnt",
	"shouldnt", "couldnt", "hasnt", "havent", "none",
)

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// Terms returns the content words of Normalize(s), sorted and without
// duplicates: stopwords dropped, negations read as "not", and a trailing
// "s" cut from plain words longer than three letters (tokens → token).
// Identifiers such as src/auth/jwt.go are one term.
func Terms(s string) []string { return terms(Normalize(s)) }

// terms is Terms of a normalized text.
func terms(n string) []string {
	var out []string
	for w := range strings.FieldsSeq(n) {
		if stopwords[w] {
			continue
		}
		if negations[w] {
			w = "not"
		}
		if w = stem(w); !stopwords[w] {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stem cuts the plural "s" of a plain word longer than three letters.
func stem(w string) string {
	if !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "ss") || utf8.RuneCountInString(w) <= 3 {
		return w
	}
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return w
		}
	}
	return w[:len(w)-1]
}

// Similarity says how alike two texts are, from 0 to 1: the Jaccard index
// of their Terms, raised to 0.9 when the smaller set has at least four
// terms and nine tenths of them are in the larger one (one text restates
// the other with more words), and halved when only one of them is negated
// (has the term "not"), as they then likely say opposite things. Equal
// normalized texts are 1; a text with no terms is 0 to anything else.
func Similarity(a, b string) float64 {
	na, nb := Normalize(a), Normalize(b)
	if na != "" && na == nb {
		return 1
	}
	return similarity(terms(na), terms(nb))
}

// similarity is Similarity on two sorted term sets.
func similarity(ta, tb []string) float64 {
	if len(ta) == 0 || len(tb) == 0 {
		return 0
	}
	common := 0
	for i, j := 0, 0; i < len(ta) && j < len(tb); {
		switch c := strings.Compare(ta[i], tb[j]); {
		case c == 0:
			common++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	jac := float64(common) / float64(len(ta)+len(tb)-common)
	if negated(ta) != negated(tb) {
		// "accepts tabs" and "does not accept tabs" share most words and
		// say opposite things.
		return jac / 2
	}
	small := min(len(ta), len(tb))
	if small >= 4 && float64(common) >= 0.9*float64(small) {
		return max(jac, 0.9)
	}
	return jac
}

// negated reports whether a sorted term set holds "not".
func negated(ts []string) bool {
	_, ok := slices.BinarySearch(ts, "not")
	return ok
}

// maxQueryTerms caps the terms of an FTSQuery.
const maxQueryTerms = 16

// FTSQuery returns an SQLite FTS5 MATCH expression finding texts that share
// a term with s: its Terms (the longest sixteen, as longer words tend to be
// rarer), each a double-quoted string, joined by " OR ". It is "" when s has
// no terms. Outside its quoted strings there are only spaces and the word
// OR, so no input makes it an FTS5 syntax error.
func FTSQuery(s string) string {
	var ts []string
	for _, t := range Terms(s) {
		if strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
			ts = append(ts, t)
		}
	}
	slices.SortStableFunc(ts, func(a, b string) int {
		return cmp.Compare(utf8.RuneCountInString(b), utf8.RuneCountInString(a))
	})
	ts = ts[:min(len(ts), maxQueryTerms)]
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

// Fingerprint is the hash of Normalize(s) for a unique index: 16 hex
// digits (8 bytes) of its SHA-256.
func Fingerprint(s string) string {
	h := sha256.Sum256([]byte(Normalize(s)))
	return hex.EncodeToString(h[:8])
}

// sourceExts are the file extensions that make a word a path.
var sourceExts = setOf(
	"go", "ts", "tsx", "js", "jsx", "mjs", "py", "rs", "md", "yaml", "yml",
	"json", "toml", "sh", "ini", "mod", "sum", "c", "h", "cc", "cpp", "java",
	"kt", "rb", "sql", "proto", "css", "html", "lock", "cfg", "conf",
)

// notPaths are words with a slash or a source extension that are English
// or product names, not paths.
var notPaths = setOf(
	"and/or", "either/or", "i/o", "read/write", "input/output", "yes/no",
	"on/off", "true/false", "open/close", "client/server", "w/o", "n/a",
	"node.js", "next.js", "vue.js", "nuxt.js", "three.js", "d3.js",
	"chart.js", "express.js", "react.js", "deno.js",
)

// pathTokens returns the words of s that look like worktree paths (a slash,
// or a source file extension), cleaned of surrounding punctuation, a
// leading "./" and a ":line" suffix; absolute paths, home paths and URLs
// are left out. At most 8, in order of appearance.
func pathTokens(s string) []string {
	var out []string
	for w := range strings.FieldsSeq(s) {
		w = strings.Trim(w, "`'\"()[]{}<>,;!?*")
		w = strings.TrimRight(w, ".:")
		if i := strings.IndexByte(w, ':'); i > 0 {
			w = w[:i]
		}
		w = strings.TrimPrefix(w, "./")
		if p, ok := pathLike(w); ok && !slices.Contains(out, p) {
			out = append(out, p)
			if len(out) == 8 {
				break
			}
		}
	}
	return out
}

// pathLike reports whether w is a relative path, and returns it without a
// trailing slash.
func pathLike(w string) (string, bool) {
	if w == "" || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~") || strings.Contains(w, "//") || strings.HasPrefix(w, "-") {
		return "", false
	}
	letter := false
	for _, r := range w {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsNumber(r) || strings.ContainsRune("_.-/@+", r):
		default:
			return "", false
		}
	}
	if !letter || notPaths[strings.ToLower(w)] {
		return "", false
	}
	p := strings.TrimSuffix(w, "/")
	if strings.Contains(w, "/") {
		return p, p != "" && p != "." && p != ".."
	}
	if i := strings.LastIndexByte(p, '.'); i > 0 && sourceExts[strings.ToLower(p[i+1:])] {
		return p, true
	}
	return "", false
}
