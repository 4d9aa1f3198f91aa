package stuck

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// oldShellWords is the rune-by-rune splitter shellWords replaced; the two
// agree on every valid UTF-8 command without non-ASCII white space (on
// invalid UTF-8 the new one keeps the bytes).

// comparison: quotes group and are dropped, operators are words of their own.
func oldShellWords(s string) []string {
	var (
		words []string
		cur   strings.Builder
		quote rune
		have  bool
	)
	end := func() {
		if have {
			words = append(words, cur.String())
			cur.Reset()
			have = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, have = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			have = true
		case unicode.IsSpace(r):
			end()
		case r == '|' || r == '&' || r == ';':
			end()
			op := string(r)
			if (r == '|' || r == '&') && i+1 < len(rs) && rs[i+1] == r {
				op += string(r)
				i++
			}
			words = append(words, op)
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	end()
	return words
}

func FuzzShellWords(f *testing.F) {
	for _, s := range []string{`go test -run 'A|B' ./...`, `echo "a b" 'c'\ d && ls||x;y & z`, `''`, `a"b"c`, `'unterminated`, "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return r > 127 && unicode.IsSpace(r) }) >= 0 {
			return
		}
		if got, want := shellWords(nil, s), oldShellWords(s); !slices.Equal(got, want) {
			t.Errorf("shellWords(%q) = %q, want %q", s, got, want)
		}
	})
}
