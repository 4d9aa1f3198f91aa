package stuck

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

// The masks were regular expressions; the scanners that replaced them must
// mean exactly the same. These are the expressions and the functions as
// they were, and the tests that hold the scanners to them.

// The volatile parts of tool output and errors, masked before results are
// compared: a rerun that differs only in these is the same result.
var (
	maskTemp = regexp.MustCompile(`(^|[^\w.\-/])(?:/tmp|/var/folders|/private/var|/var/tmp)/[^\s:'"]*`)
	maskTime = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b`)
	maskUUID = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
)

// maskResultRegexp is MaskResult as it was, with regular expressions: it
// replaces the noise in a successful result: temporary paths,
// times, UUIDs and hex ids, durations (0.412s, 41s, 3m2s) and source
// positions (pay.go:88:5). Other numbers stay: the step a command printed,
// the line range a page showed, the counts of a CI run are what the result
// says, and a result whose numbers moved is a new result.
func maskResultRegexp(s string) string {
	if s == "" {
		return ""
	}
	if strings.Contains(s, "/tmp/") || strings.Contains(s, "/var/") || strings.Contains(s, "/private/") {
		s = maskTemp.ReplaceAllString(s, "$1<tmp>")
	}
	if !strings.ContainsAny(s, "0123456789") {
		return words.OneLine(s)
	}
	// The expressions are the cost: each runs only on text that can hold
	// what it matches.
	if mayHoldTime(s) {
		s = maskTime.ReplaceAllString(s, "<time>")
	}
	if mayHoldPos(s) {
		s = maskPos.ReplaceAllString(s, "$1:#")
	}
	if mayHoldUUID(s) {
		s = maskUUID.ReplaceAllString(s, "<id>")
	}
	s = maskHex(s)
	if mayHoldDur(s) {
		s = maskDur.ReplaceAllString(s, "<dur>")
	}
	return words.OneLine(s)
}

// mayHoldTime: a digit, ":" and two digits (h:mm, hh:mm:ss), or a date's
// dddd-dd-dd.
func mayHoldTime(s string) bool {
	for i := 1; i+2 < len(s); i++ {
		switch s[i] {
		case ':':
			if isDigit(s[i-1]) && isDigit(s[i+1]) && isDigit(s[i+2]) {
				return true
			}
		case '-':
			if i >= 4 && isDigit(s[i-1]) && isDigit(s[i-4]) && isDigit(s[i+1]) && isDigit(s[i+2]) {
				return true
			}
		}
	}
	return false
}

// mayHoldUUID: four hex digits, "-", four hex digits.
func mayHoldUUID(s string) bool {
	for i := 4; i+4 < len(s); i++ {
		if s[i] == '-' && isHex(s[i-1]) && isHex(s[i-2]) && isHex(s[i-3]) && isHex(s[i-4]) &&
			isHex(s[i+1]) && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) {
			return true
		}
	}
	return false
}

// mayHoldPos: a letter or digit, ":" and a digit (file.go:88).
func mayHoldPos(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == ':' && isDigit(s[i+1]) {
			c := s[i-1]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' {
				return true
			}
		}
	}
	return false
}

// mayHoldDur: a digit followed by a unit's first letter.
func mayHoldDur(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if isDigit(s[i]) {
			switch s[i+1] {
			case 'n', 'u', 'm', 's', 'h', 0xc2: // 0xc2: µ
				return true
			}
		}
	}
	return false
}

var (
	maskDur = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m))*\b`)
	maskPos = regexp.MustCompile(`(\.[A-Za-z]\w*):\d+(?::\d+)?`)
)

// maskRegexp is Mask as it was, with regular expressions: it replaces the volatile parts of a text (temporary paths, times,
// UUIDs and hex ids, numbers) with placeholders and collapses whitespace.
func maskRegexp(s string) string {
	if s == "" {
		return ""
	}
	if strings.Contains(s, "/tmp/") || strings.Contains(s, "/var/") || strings.Contains(s, "/private/") {
		s = maskTemp.ReplaceAllString(s, "$1<tmp>")
	}
	if !strings.ContainsAny(s, "0123456789") {
		return words.OneLine(s) // times, ids, hex and numbers all hold a digit
	}
	if mayHoldTime(s) {
		s = maskTime.ReplaceAllString(s, "<time>")
	}
	if mayHoldUUID(s) {
		s = maskUUID.ReplaceAllString(s, "<id>")
	}
	return words.OneLine(maskDigits(maskHex(s)))
}

// maskInputs are texts the masks meet: every string of the replay corpus
// and of the benchmark mix, and texts made to sit on the expressions' edges.
func maskInputs(t testing.TB) []string {
	out := []string{
		"", "x", "/tmp/", "/tmp/a", " /tmp/a:b /tmp/c", "x/tmp/a", "-/tmp/a", "é/tmp/a b", "\xff/var/tmp/q'r",
		"/var/folders/ab/T/x.y\n/private/var/z", "a//tmp/b", "/tmpx/", "//tmp/a", "(/tmp/a)",
		"2026-11-21T09:00:12Z", "2026-11-21 09:00", "12026-11-21T09:00:12.5+05:30x", "2026-11-21T09:00:12+05:3",
		"2026-11-21T09:00:12-0530", "1:02:03", "01:02:03.456", "123:45:67", "1:02:03x", "1:02:03.4x", "1:02:03.",
		"a1:02:03", "_1:02:03", "é1:02:03", "12:34:567", "12:34", "at 9:15:00, then 10:00:01.5Z",
		"123e4567-e89b-12d3-a456-426614174000", "x123e4567-e89b-12d3-a456-426614174000",
		"123E4567-E89B-12D3-A456-426614174000a", "-123e4567-e89b-12d3-a456-4266141740000",
		"pay.go:88", "pay.go:88:5", "pay.test.go:88:5:3", "a.go:", "a.go:x", ".5:3", "x.a_b9:1", "..go:1", ".é:1",
		"ok 0.412s", "41s", "3m2s", "3m2.5s7ms", "5min", "5m3", "1.5sx", "5µs", "5µ", "10ms;", "2h30m", "2h3h",
		"9ns 8us 7ms", "x5s", "5s_", "5s.", "1.2.3s", "0x1f2e3d4c", "deadbeef12", "--- FAIL: TestX (0.00s)",
		"FAIL\tgithub.com/acme/pay\t0.412s", "exit status 1 at 2026-01-02T03:04:05.678Z in /tmp/go-build123/b001",
	}
	add := func(v any) {
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				out = append(out, x)
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	}
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			var v any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			add(v)
		}
	}
	for _, e := range benchMix() {
		b, err := json.Marshal(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		add(v)
	}
	return out
}

// randomMaskText strings together pieces of what the masks look for.
func randomMaskText(r *rand.Rand) string {
	pieces := []string{"0", "1", "12", "2026", "123", "9", ":", "-", ".", " ", "\n", "\t", "\v", "T", "Z", "+", "/", "_",
		"a", "f", "E", "x", "s", "m", "h", "n", "u", "ms", "µs", "µ", "é", "\xff", "\xc2", "/tmp/", "/var/tmp/",
		"/var/folders/", "/private/var/", "'", "\"", "go", ".go:", "0x", "deadbeef", "e89b", "-12d3-", "2026-11-21",
		"T09:00", ":12", ".5", "+05:30", "1:02:03", "3m2s", "0.412s", "123e4567-e89b-12d3-a456-426614174000"}
	var b strings.Builder
	for range r.IntN(24) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func checkMasks(t *testing.T, s string) {
	t.Helper()
	if got, want := Mask(s), maskRegexp(s); got != want {
		t.Errorf("Mask(%q) = %q, the expressions give %q", s, got, want)
	}
	if got, want := MaskResult(s), maskResultRegexp(s); got != want {
		t.Errorf("MaskResult(%q) = %q, the expressions give %q", s, got, want)
	}
	if got, want := maskTemps(s), maskTemp.ReplaceAllString(s, "$1<tmp>"); got != want {
		t.Errorf("maskTemps(%q) = %q, the expression gives %q", s, got, want)
	}
	if got, want := maskTimes(s), maskTime.ReplaceAllString(s, "<time>"); got != want {
		t.Errorf("maskTimes(%q) = %q, the expression gives %q", s, got, want)
	}
	if got, want := maskPositions(s), maskPos.ReplaceAllString(s, "$1:#"); got != want {
		t.Errorf("maskPositions(%q) = %q, the expression gives %q", s, got, want)
	}
	if got, want := maskUUIDs(s), maskUUID.ReplaceAllString(s, "<id>"); got != want {
		t.Errorf("maskUUIDs(%q) = %q, the expression gives %q", s, got, want)
	}
	if got, want := maskDurations(s), maskDur.ReplaceAllString(s, "<dur>"); got != want {
		t.Errorf("maskDurations(%q) = %q, the expression gives %q", s, got, want)
	}
}

func TestMasksEqualTheExpressionsOnTheCorpus(t *testing.T) {
	t.Parallel()
	in := maskInputs(t)
	if len(in) < 500 {
		t.Fatalf("only %d inputs", len(in))
	}
	for _, s := range in {
		checkMasks(t, s)
	}
}

func TestMasksEqualTheExpressionsOnRandomText(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(20, 26))
	for range 10000 {
		checkMasks(t, randomMaskText(r))
		if t.Failed() {
			return
		}
	}
}

func FuzzMasks(f *testing.F) {
	for _, s := range maskInputs(f) {
		if len(s) < 300 {
			f.Add(s)
		}
	}
	f.Fuzz(checkMasks)
}
