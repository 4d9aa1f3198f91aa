package workflow

import (
	"strings"
	"testing"
)

func TestParseReview(t *testing.T) {
	for _, c := range []struct {
		name, in, verdict string
		findings          int
		first             string // severity file:line of the first finding
	}{
		{"plain", `{"verdict": "approve", "findings": []}`, "approve", 0, ""},
		{"fenced", "```json\n{\"verdict\": \"changes\", \"findings\": [{\"severity\": \"critical\", \"file\": \"a.go\", \"line\": 3, \"message\": \"nil map\"}]}\n```", "changes", 1, "critical a.go:3"},
		{"after prose", `Done. {"verdict": "lgtm"}`, "approve", 0, ""},
		{"severity mapped", `{"verdict": "changes", "findings": [{"severity": "nit", "message": "typo"}, {"severity": "weird", "message": "x"}, {"message": ""}]}`, "changes", 2, "nitpick :0"},
		{"findings imply changes", `{"findings": [{"message": "race"}]}`, "changes", 1, "important :0"},
		{"not json", "Looks good to me.", "unknown", 0, ""},
		{"broken json", `{"verdict": "approve",`, "unknown", 0, ""},
		{"bad line", `{"verdict": "changes", "findings": [{"file": "b.go", "line": "ten", "message": "m"}]}`, "changes", 1, "important b.go:0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ParseReview(c.in)
			if r.Verdict != c.verdict || len(r.Findings) != c.findings {
				t.Fatalf("ParseReview = %+v, want verdict %s with %d findings", r, c.verdict, c.findings)
			}
			if c.first != "" {
				f := r.Findings[0]
				got := f.Severity + " " + f.File + ":" + itoa(f.Line)
				if got != c.first {
					t.Errorf("first finding %q, want %q", got, c.first)
				}
			}
			if r.Verdict == "unknown" && r.Summary != strings.TrimSpace(c.in) {
				t.Errorf("an unparsed report is not kept whole: %q", r.Summary)
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func FuzzParseReview(f *testing.F) {
	for _, s := range []string{`{"verdict":"approve"}`, "```json\n{}\n```", "x {", `{"findings":[{"message":"m","line":1e20}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := ParseReview(s)
		switch r.Verdict {
		case "approve", "changes", "unknown":
		default:
			t.Fatalf("verdict %q", r.Verdict)
		}
		if len(r.Findings) > maxFindings {
			t.Fatalf("%d findings", len(r.Findings))
		}
		for _, fd := range r.Findings {
			if fd.Message == "" || fd.Line < 0 || len(fd.Message) > maxFindingLen {
				t.Fatalf("finding %+v", fd)
			}
			switch fd.Severity {
			case "critical", "important", "nitpick":
			default:
				t.Fatalf("severity %q", fd.Severity)
			}
		}
	})
}
