package knowledge

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

var fuzzTexts = []string{
	"", "The JWT library rejects tokens without an `iat` claim.",
	"Note: the JWT library rejects tokens that have no iat claim",
	`a AND b OR NOT c NEAR(d, 2) "e" *f ^g:h {x y}: -z + (`,
	"src/auth/jwt.go's v1.2 user_id x-request-id ./a ../b",
	"**Important:** it turns out that found that note: x",
	"don't 'quoted' ‘curly’ “double” `tick` ʼ",
	"a..b a/-b -a- _ __ _x_ .x. /x/", "\xff\xfe İ ǅ ß ẞ Σ ς",
	"one. two! three? e.g. four\nfive", "\"\"\"\"", "OR OR OR",
}

// FuzzNormalize: Normalize is idempotent and yields valid UTF-8 words
// separated by single spaces.
func FuzzNormalize(f *testing.F) {
	for _, s := range fuzzTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if !utf8.ValidString(n) {
			t.Fatalf("Normalize(%q) = %q: invalid UTF-8", s, n)
		}
		if again := Normalize(n); again != n {
			t.Fatalf("not idempotent: %q → %q → %q", s, n, again)
		}
		if strings.HasPrefix(n, " ") || strings.HasSuffix(n, " ") || strings.Contains(n, "  ") {
			t.Fatalf("Normalize(%q) = %q: stray spaces", s, n)
		}
		if Fingerprint(s) != Fingerprint(n) {
			t.Fatalf("Fingerprint differs for %q and its normal form", s)
		}
		for _, term := range Terms(s) {
			if term == "" || strings.Contains(term, " ") || stopwords[term] {
				t.Fatalf("Terms(%q) holds %q", s, term)
			}
		}
	})
}

// FuzzFTSQuery: the query is quoted strings joined by " OR ", nothing else.
func FuzzFTSQuery(f *testing.F) {
	for _, s := range fuzzTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := FTSQuery(s)
		if err := checkFTS(q); err != "" {
			t.Fatalf("FTSQuery(%q) = %s: %s", s, q, err)
		}
	})
}

// checkFTS returns what is wrong with q's grammar, or "".
func checkFTS(q string) string {
	if q == "" {
		return ""
	}
	terms := 0
	for i := 0; i < len(q); {
		if terms > 0 {
			if !strings.HasPrefix(q[i:], " OR ") {
				return "terms not joined by \" OR \""
			}
			i += len(" OR ")
		}
		if i >= len(q) || q[i] != '"' {
			return "a term does not open with a quote"
		}
		i++
		content := 0
		for {
			if i >= len(q) {
				return "an unclosed quote"
			}
			if q[i] == '"' {
				if i+1 < len(q) && q[i+1] == '"' {
					i += 2
					content++
					continue
				}
				i++
				break
			}
			i++
			content++
		}
		if content == 0 {
			return "an empty term"
		}
		terms++
	}
	if terms > maxQueryTerms {
		return "too many terms"
	}
	if !utf8.ValidString(q) {
		return "invalid UTF-8"
	}
	return ""
}

// FuzzSimilarity: a similarity is in [0, 1], symmetric, and 1 for a text
// with terms and itself.
func FuzzSimilarity(f *testing.F) {
	for i := range fuzzTexts {
		f.Add(fuzzTexts[i], fuzzTexts[(i+1)%len(fuzzTexts)])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		s := Similarity(a, b)
		if s < 0 || s > 1 || s != Similarity(b, a) {
			t.Fatalf("Similarity(%q, %q) = %v (reverse %v)", a, b, s, Similarity(b, a))
		}
		if len(Terms(a)) > 0 && Similarity(a, a) != 1 {
			t.Fatalf("Similarity(%q, itself) = %v", a, Similarity(a, a))
		}
	})
}

// FuzzParseModelLearnings: any reply is read or refused, and what is read
// keeps the limits.
func FuzzParseModelLearnings(f *testing.F) {
	f.Add(`{"learnings": []}`)
	f.Add("```json\n{\"learnings\": [{\"summary\": \"x\", \"tags\": [\"A\"], \"files\": [\"./a.go\"]}]}\n```")
	f.Add(`{"learnings": [{"summary": "` + strings.Repeat("é", 250) + `", "detail": "d"}]}`)
	f.Add(`{"learnings": null}`)
	f.Add("not json")
	f.Fuzz(func(t *testing.T, reply string) {
		cs, err := ParseModelLearnings(reply)
		if err != nil {
			return
		}
		if len(cs) > maxModelLearnings {
			t.Fatalf("%d learnings", len(cs))
		}
		for _, c := range cs {
			checkCandidate(t, c)
			if c.Kind != Model || len(c.Tags) > maxTags {
				t.Fatalf("bad candidate %+v", c)
			}
			for _, tag := range c.Tags {
				if tag == "" || tag != strings.ToLower(tag) || utf8.RuneCountInString(tag) > maxTagLen {
					t.Fatalf("bad tag %q", tag)
				}
			}
		}
	})
}

// FuzzObserve feeds arbitrary assistant text and tool output through the
// rules: whatever they find keeps the Candidate limits, and the digest
// its size.
func FuzzObserve(f *testing.F) {
	f.Add("Note: the cache lives in internal/cache/lru.go.", "glob", `{"pattern":"**/*.go"}`, "a.go\nb.go\n", false)
	f.Add("I found that x", "grep", `{"pattern":"x"}`, "a.go:1:x\nb.go:2:y\n", false)
	f.Add("turns out", "bash", `{"command":"go test ./..."}`, goTestFailure, true)
	f.Add("", "Bash", `{"command":["bash","-lc","make"]}`, "", true)
	f.Fuzz(func(t *testing.T, text, name, args, output string, failed bool) {
		x := NewExtractor(all)
		var got []Candidate
		observe := func(p event.Payload) { got = append(got, x.Observe("t", p)...) }
		observe(event.TurnStarted{Turn: 1})
		observe(event.Text{Turn: 1, Text: text})
		observe(event.ToolCall{Turn: 1, CallID: "1", Name: name, Args: json.RawMessage(args)})
		observe(toolResult(1, "1", name, failed, output))
		observe(event.FileChanged{Turn: 1, Path: "a.go", Op: "modified"})
		observe(event.ToolCall{Turn: 1, CallID: "2", Name: name, Args: json.RawMessage(args)})
		observe(toolResult(1, "2", name, false, output))
		for _, c := range got {
			checkCandidate(t, c)
		}
		if d := x.TurnDigest("t"); len(d) > maxDigest {
			t.Fatalf("digest of %d bytes", len(d))
		}
	})
}

func checkCandidate(t *testing.T, c Candidate) {
	t.Helper()
	if strings.TrimSpace(c.Summary) == "" || utf8.RuneCountInString(c.Summary) > maxSummary || strings.Contains(c.Summary, "\n") {
		t.Fatalf("bad summary %q", c.Summary)
	}
	if utf8.RuneCountInString(c.Detail) > maxDetail {
		t.Fatalf("detail of %d runes", utf8.RuneCountInString(c.Detail))
	}
}
