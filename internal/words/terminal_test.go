package words

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain stays", "hello, wörld 日本", "hello, wörld 日本"},
		{"newline and tab stay", "a\n\tb", "a\n\tb"},
		{"empty", "", ""},
		{"clear screen", "before\x1b[2Jafter", `before\x1b[2Jafter`},
		{"OSC title with BEL", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"OSC title with ST", "\x1b]2;pwned\x1b\\", `\x1b]2;pwned\x1b\`},
		{"carriage return", "ok\rFAIL", `ok\x0dFAIL`},
		{"NUL and backspace", "a\x00b\x08", `a\x00b\x08`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
		{"C1 NEL", "a\u0085b", `a\u0085b`},
		{"C1 OSC", "\u009d0;t\u009c", `\u009d0;t\u009c`},
		{"right-to-left override", "file\u202egnp.exe", `file\u202egnp.exe`},
		{"bidi isolates", "\u2066x\u2069", `\u2066x\u2069`},
		{"LRE to PDF", "\u202a\u202c", `\u202a\u202c`},
		{"other bidi marks stay", "a\u200fb\u2028c", "a\u200fb\u2028c"},
		{"raw C1 byte is invalid UTF-8", "a\x9b2J", `a\x9b2J`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"backslash stays", `C:\x1b`, `C:\x1b`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("%s: Printable(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "plain", "a\n\tb", "\x1b[2J", "\x1b]0;title\x07", "\u009b", "\u202e", "\xff\xc3", "日本\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Printable(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Printable(%q) = %q is not valid UTF-8", s, got)
		}
		for _, r := range got {
			if unsafeRune(r) {
				t.Fatalf("Printable(%q) = %q holds %U", s, got, r)
			}
		}
		if strings.ContainsRune(got, 0x1b) {
			t.Fatalf("Printable(%q) = %q holds ESC", s, got)
		}
		if strings.Count(got, "\n") != strings.Count(s, "\n") || strings.Count(got, "\t") != strings.Count(s, "\t") {
			t.Fatalf("Printable(%q) = %q changed its newlines or tabs", s, got)
		}
		if isPrintable(s) != (got == s) {
			t.Fatalf("Printable(%q) = %q, but isPrintable says %v", s, got, isPrintable(s))
		}
		if Printable(got) != got {
			t.Fatalf("Printable is not idempotent on %q", s)
		}
	})
}
