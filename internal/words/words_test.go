package words

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short stays", "abc", 5, "abc"},
		{"exact stays", "abcde", 5, "abcde"},
		{"cut and marked", "abcdef", 3, "abc…"},
		{"space kept", "ab cdef", 3, "ab …"},
		{"never splits a rune", "ééé", 3, "é…"},
		{"rune that fits", "ééé", 4, "éé…"},
		{"zero", "abc", 0, "…"},
		{"negative", "abc", -2, "…"},
		{"empty", "", 0, ""},
	}
	for _, tt := range tests {
		if got := Clip(tt.s, tt.n); got != tt.want {
			t.Errorf("%s: Clip(%q, %d) = %q, want %q", tt.name, tt.s, tt.n, got, tt.want)
		}
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short stays, trimmed", "  boom\n", 10, "boom"},
		{"end kept", "first\nsecond\nboom", 4, "…boom"},
		{"never splits a rune", "aéé", 3, "…é"},
		{"zero", "abc", 0, "…"},
	}
	for _, tt := range tests {
		if got := Tail(tt.s, tt.n); got != tt.want {
			t.Errorf("%s: Tail(%q, %d) = %q, want %q", tt.name, tt.s, tt.n, got, tt.want)
		}
	}
}

func TestLines(t *testing.T) {
	t.Parallel()
	if got := OneLine("  moving\n\talong  fine "); got != "moving along fine" {
		t.Errorf("OneLine = %q", got)
	}
	if got := FirstLine("\n  subject line\nbody\n"); got != "subject line" {
		t.Errorf("FirstLine = %q", got)
	}
	if got := FirstLine("one"); got != "one" {
		t.Errorf("FirstLine = %q", got)
	}
}

func TestOr(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{"": "def", " \n\t": "def", "x": "x", " x ": " x "} {
		if got := Or(s, "def"); got != want {
			t.Errorf("Or(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestShortCommit(t *testing.T) {
	t.Parallel()
	if got := ShortCommit("0123456789abcdef"); got != "0123456789" {
		t.Errorf("ShortCommit = %q", got)
	}
	if got := ShortCommit("abc"); got != "abc" {
		t.Errorf("ShortCommit = %q", got)
	}
}

func FuzzClipTail(f *testing.F) {
	f.Add("hello, world", 5)
	f.Add("ééééé", 3)
	f.Add("日本語のテキスト", 7)
	f.Add("", 0)
	f.Add("a\xffb", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 1 << 12
		c := Clip(s, n)
		if len(s) <= n && c != s {
			t.Fatalf("Clip(%q, %d) = %q; a text that fits stays whole", s, n, c)
		}
		if len(s) > n {
			if len(c) > max(n, 0)+len(Ellipsis) || !strings.HasSuffix(c, Ellipsis) || !strings.HasPrefix(s, strings.TrimSuffix(c, Ellipsis)) {
				t.Fatalf("Clip(%q, %d) = %q; want a marked prefix of at most %d bytes", s, n, c, n)
			}
		}
		tl := Tail(s, n)
		if len(tl) > max(n, 0)+len(Ellipsis) && len(tl) > len(strings.TrimSpace(s)) {
			t.Fatalf("Tail(%q, %d) = %q is too long", s, n, tl)
		}
		if !strings.HasSuffix(strings.TrimSpace(s), strings.TrimPrefix(tl, Ellipsis)) {
			t.Fatalf("Tail(%q, %d) = %q is not the end of the text", s, n, tl)
		}
		if utf8.ValidString(s) && (!utf8.ValidString(c) || !utf8.ValidString(tl)) {
			t.Fatalf("Clip/Tail(%q, %d) = %q / %q; valid UTF-8 in, invalid out", s, n, c, tl)
		}
	})
}

// OneLine is strings.Fields joined by single spaces, without allocating
// when there is nothing to collapse.
func TestOneLineEqualsFieldsJoined(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "bc", " ", "  ", "\t", "\n", "\v", "\f", "\r", "\u00a0", "\u2028", "\u0085", "é", "\xff", "\x85", "\xc2", "\xe2\x80", "x y"}
	r := rand.New(rand.NewPCG(3, 5))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := OneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("OneLine(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestOneLineOfACleanLineDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(10, func() { OneLine("go test ./... passed") }); n != 0 {
		t.Errorf("OneLine of a clean line allocates %v times", n)
	}
}
