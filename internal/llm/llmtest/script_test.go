package llmtest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

func TestLoadExampleScript(t *testing.T) {
	t.Parallel()
	s, err := llmtest.LoadScript("testdata/example.yaml")
	if err != nil {
		t.Fatalf("LoadScript: %v", err)
	}
	if len(s.Conversations) != 2 || s.Default == nil {
		t.Fatalf("got %d conversations, default %v", len(s.Conversations), s.Default)
	}
	c := s.Conversations[0]
	if c.Name != "token-expiry" || c.Match.User != "(?i)token expiry" || len(c.Steps) != 3 {
		t.Errorf("first conversation = %+v", c)
	}
	st := c.Steps[1]
	if len(st.ToolCalls) != 2 || st.ToolCalls[1].Input["pattern"] != "ExpiresAt" || st.Fault == nil || st.Fault.Kind != llmtest.FaultOverloaded {
		t.Errorf("step 1 = %+v", st)
	}
	if u := c.Steps[2].Usage; u == nil || u.InputTokens != 5200 || u.CacheReadTokens != 4800 {
		t.Errorf("step 2 usage = %+v", u)
	}
}

func TestParseScriptErrorsNameLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"unknown top-level key", "conversation: []\n", []string{`s.yaml:1: script: unknown key "conversation"`}},
		{"unknown step key", "default:\n  steps:\n    - text: hi\n      tools: []\n", []string{`s.yaml:4: default.steps[0]: unknown key "tools"`}},
		{"bad regexp", "conversations:\n  - name: x\n    match: {user: \"(\"}\n    steps: [{text: a}]\n", []string{`s.yaml:2: conversation "x": match.user: error parsing regexp`}},
		{"unknown fault", "default:\n  steps:\n    - text: a\n      fault: {kind: explode}\n", []string{`s.yaml:4: fault.kind: unknown kind "explode"`}},
		{"bad stop", "default:\n  steps:\n    - {text: a, stop: halt}\n", []string{`s.yaml:3: stop: unknown stop reason "halt"`}},
		{"no steps", "conversations:\n  - name: empty\n", []string{`s.yaml:2: conversation "empty" has no steps`}},
		{"wrong type", "default:\n  steps:\n    - {text: a, latency_ms: soon}\n", []string{`s.yaml:3: default.steps[0].latency_ms: cannot unmarshal`}},
		{"tool without name", "default:\n  steps:\n    - tool_calls:\n        - input: {a: 1}\n", []string{`s.yaml:4: tool_calls[0]: name must be set`}},
		{"input not a mapping", "default:\n  steps:\n    - tool_calls:\n        - {name: t, input: [1]}\n", []string{`s.yaml:4: default.steps[0].tool_calls[0].input must be a mapping`}},
		{"yaml syntax", "default: [\n", []string{`s.yaml:`}},
		{"empty", "", []string{`s.yaml: script is empty`}},
		{"several errors", "default:\n  steps:\n    - {text: a, stop: x}\n    - {text: b, stop: y}\n", []string{`s.yaml:3:`, `s.yaml:4:`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := llmtest.ParseScript("s.yaml", []byte(tc.src))
			if err == nil {
				t.Fatal("ParseScript succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadScriptMissingFile(t *testing.T) {
	t.Parallel()
	_, err := llmtest.LoadScript(filepath.Join(t.TempDir(), "nope.yaml"))
	if !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("LoadScript(missing) = %v, want a not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func FuzzParseScript(f *testing.F) {
	example, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	for _, s := range []string{
		"", "default: {steps: [{text: hi}]}", "conversations: [{name: a, steps: []}]",
		"default:\n  steps:\n    - tool_calls: [{name: t, input: {a: [1, {b: .nan}]}}]\n",
		"a: &x [*x]", "default: {steps: [{fault: {kind: reset, times: -1}}]}", "- - -", "default: !!binary aGk=",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := llmtest.ParseScript("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Errorf("parsed script does not validate: %v", err)
		}
	})
}
