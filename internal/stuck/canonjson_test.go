package stuck

import (
	"encoding/json"
	"testing"
)

// slowCanonicalCall is CanonicalCall's general path only.
func slowCanonicalCall(tool string, args json.RawMessage, root string) string {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return "error"
	}
	b, _ := json.Marshal(canonValue(v, root))
	key := tool + " " + string(b)
	if len(key) > 0 {
		key = maskTemp.ReplaceAllString(key, "$1<tmp>")
	}
	return key
}

func FuzzCanonicalCallFastPath(f *testing.F) {
	for _, s := range []string{
		`{"command":"go test -race ./..."}`,
		`{"path":"/home/dev/.neuraphage/worktrees/t-abcde/a.go","content":"x <&> \u2028 \t\n\"q\""}`,
		`{"a":"1","a":"2"}`, `{}`, ` { "b" : "\u00e9\/" , "a":"\ud800" } `, `{"x":"` + "\xff" + `"}`,
		`{"command":"echo step-1 && sleep 1"}`, `{"old_text":"a  b\n","new_text":"c"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kvs, ok := flatStrings([]byte(s))
		if !ok {
			return
		}
		fast := canonFlat("t", kvs, testRoot)
		fast = maskTemp.ReplaceAllString(fast, "$1<tmp>")
		if slow := slowCanonicalCall("t", json.RawMessage(s), testRoot); fast != slow {
			t.Errorf("args %q: fast path %q, general path %q", s, fast, slow)
		}
	})
}
