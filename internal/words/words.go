// Package words shortens and tidies text for people and models to read: a
// clipped message, one line out of many, the end of a long error output, a
// default for a blank value, a commit id as users see it, text made safe to
// print on a terminal (Printable). Every package that
// shows or stores such text uses these, so the same cut looks the same
// everywhere. The functions are pure and safe for concurrent use.
package words

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks where Clip or Tail cut text away.
const Ellipsis = "…"

// ShortCommitLen is how many characters of a commit id users see.
const ShortCommitLen = 10

// Clip returns s when it is at most n bytes long; otherwise its longest
// prefix of at most n bytes that ends on a rune boundary, followed by
// Ellipsis. A clipped text is at most n+len(Ellipsis) bytes; a caller with a
// hard byte limit asks for limit-len(Ellipsis). Valid UTF-8 stays valid.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + Ellipsis
}

// Tail returns the end of s with surrounding space trimmed: all of it when it
// is at most n bytes long, otherwise Ellipsis followed by its last bytes,
// at most n of them, starting on a rune boundary. Used for the end of a
// command's output, where the error usually is.
func Tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	i := len(s) - max(n, 0)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return Ellipsis + s[i:]
}

// OneLine returns s with every run of white space (line breaks included)
// turned into one space, and none at either end.
func OneLine(s string) string {
	clean := true // single spaces between words: s itself
	for i := 0; i < len(s) && clean; {
		if c := s[i]; c > ' ' && c < utf8.RuneSelf {
			i++ // the common case, without a call
			continue
		}
		n := SpaceAt(s, i)
		switch {
		case n == 0:
			i++
			if s[i-1] >= utf8.RuneSelf {
				_, w := utf8.DecodeRuneInString(s[i-1:])
				i += w - 1
			}
			continue
		case n == 1 && s[i] == ' ':
			clean = i > 0 && i+1 < len(s) && SpaceAt(s, i+1) == 0
		default:
			clean = false
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		for i < len(s) {
			n := SpaceAt(s, i)
			if n == 0 {
				break
			}
			i += n
		}
		j := i
		for j < len(s) {
			if c := s[j]; c > ' ' && c < utf8.RuneSelf {
				j++ // the common case, without a call
				continue
			}
			if SpaceAt(s, j) != 0 {
				break
			}
			j++
		}
		if j > i {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}

// SpaceAt returns the length of the white space rune at s[i] (as
// strings.Fields sees it: unicode.IsSpace), or 0 when there is none. A byte
// inside a multi-byte rune is no space.
func SpaceAt(s string, i int) int {
	c := s[i]
	if c < utf8.RuneSelf {
		if c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' {
			return 1
		}
		return 0
	}
	if !utf8.RuneStart(c) {
		return 0
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if unicode.IsSpace(r) {
		return w
	}
	return 0
}

// FirstLine returns the first line of s with surrounding space trimmed first,
// so leading blank lines are skipped.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Or returns s, or def when s is empty or only white space.
func Or(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// ShortCommit returns the first ShortCommitLen characters of a commit id,
// the form shown in every message, log line and listing; a shorter id is
// returned as it is.
func ShortCommit(id string) string {
	if len(id) > ShortCommitLen {
		return id[:ShortCommitLen]
	}
	return id
}
