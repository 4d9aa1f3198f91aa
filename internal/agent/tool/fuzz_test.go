package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecode: model input never panics the decoder, and what it accepts
// satisfies the schema's requirements.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"path":"a","offset":1}`, `{"path":1}`, `[]`, `null`, `{"path":"a","offset":-1}`,
		`{"path":"a","limit":1e99}`, `{"command":"ls","timeout":3}`, `{"summary":"x","tags":["a",null]}`, `"x"`, `{"path":"\u0000"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		if p, err := decode[readFileParams](json.RawMessage(input)); err == nil {
			if strings.TrimSpace(p.Path) == "" || p.Offset < 0 || p.Limit < 0 {
				t.Fatalf("accepted %q as %+v", input, p)
			}
		}
		if p, err := decode[bashParams](json.RawMessage(input)); err == nil && strings.TrimSpace(p.Command) == "" {
			t.Fatalf("accepted %q as %+v", input, p)
		}
		if p, err := decode[recordLearningParams](json.RawMessage(input)); err == nil && strings.TrimSpace(p.Summary) == "" {
			t.Fatalf("accepted %q as %+v", input, p)
		}
	})
}

// FuzzPolicy: any command line is judged without panicking, and an output
// redirection to /etc is never allowed.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{"rm -rf /", "echo a > b", `echo "a > b" > 'c'`, "a | tee -a x", "cmd 2>&1 >&-", "x\\", `"unterminated`, "'", "$(", "#", "a <<EOF\nb\nEOF"} {
		f.Add(s)
	}
	p := DefaultPolicy()
	f.Fuzz(func(t *testing.T, command string) {
		_ = p.Check(command, "/work")
		if strings.ContainsAny(command, "'\"\\#`") {
			return // quoting, escapes or comments may hide the redirection
		}
		if err := p.Check(command+" > /etc/passwd", "/work"); err == nil && !strings.Contains(command, "<<") {
			t.Fatalf("allowed %q > /etc/passwd", command)
		}
	})
}

// FuzzGlob: any pattern parses or is refused without panicking, and
// matching stays cheap enough to finish.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"**/*.go", "{a,{b,c}}/*", "[", "a/**/**/b", "{", "}", "../x", "/abs", "**/[a-"} {
		f.Add(s, "a/b/c.go")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := parseGlob(pattern)
		if err != nil {
			return
		}
		_ = g.match(name)
		_ = g.mayContain(name)
		_ = g.base()
	})
}
