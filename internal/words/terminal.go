package words

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Printable returns s made safe to print on a terminal: nothing in it can
// move the cursor, clear the screen, set the window title, ring the bell or
// reorder the text around it. Newline and tab are kept; everything else a
// terminal would act on is shown visibly, in Go's escape notation:
//
//   - C0 controls (U+0000–U+001F but newline and tab) and DEL become \xNN, so
//     ESC is \x1b and an escape sequence such as ESC[2J reads \x1b[2J;
//   - C1 controls (U+0080–U+009F, where a terminal may read U+009B as CSI
//     and U+009D as OSC) become \uNNNN;
//   - bidirectional embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069), which can make a line read differently from what it
//     holds, become \uNNNN;
//   - bytes that are not valid UTF-8 become \xNN.
//
// The result is valid UTF-8 even when s is not; text with nothing to escape
// is returned as it is. Backslashes are not escaped, so the form is for
// reading, not for parsing back.
func Printable(s string) string {
	if isPrintable(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < utf8.RuneSelf && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPrintable reports whether Printable leaves s as it is.
func isPrintable(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeRune(rune(c)) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || unsafeRune(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafeRune reports whether a terminal would act on r rather than show it.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n', r == '\t':
		return false
	case r < 0x20, r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
