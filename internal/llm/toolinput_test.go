package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

func TestParseToolInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"", "{}", true},
		{"  \n", "{}", true},
		{`{"path": "a.go",  "n": 1}`, `{"path":"a.go","n":1}`, true},
		{`{"nested": {"x": [1, 2]}}`, `{"nested":{"x":[1,2]}}`, true},
		{`[1,2]`, "", false},
		{`"str"`, "", false},
		{`{"path": "a.go"`, "", false},
		{`{} {}`, "", false},
	} {
		got, err := llm.ParseToolInput([]byte(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("ParseToolInput(%q) error = %v, want ok=%t", tc.in, err, tc.ok)
			continue
		}
		if !tc.ok {
			if llm.ClassOf(err) != llm.ClassMalformed {
				t.Errorf("ParseToolInput(%q) class = %v, want malformed", tc.in, llm.ClassOf(err))
			}
			continue
		}
		if string(got) != tc.want {
			t.Errorf("ParseToolInput(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func FuzzParseToolInput(f *testing.F) {
	for _, s := range []string{"", "{}", `{"a":1}`, `{"a":`, `[]`, `null`, `{"a":"\u00e9"}`, "{\"a\":\"\xff\"}", `{"a":1}{"b":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := llm.ParseToolInput(in)
		if err != nil {
			if llm.ClassOf(err) != llm.ClassMalformed {
				t.Fatalf("error %v is not ClassMalformed", err)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(got, &obj); err != nil {
			t.Fatalf("ParseToolInput(%q) = %q, which is not a JSON object: %v", in, got, err)
		}
	})
}
