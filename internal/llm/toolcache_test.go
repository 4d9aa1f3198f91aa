package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestToolCacheChecksTheDefinition(t *testing.T) {
	var c ToolCache
	calls := 0
	enc := func(v int) func(ToolDef) ([]byte, error) {
		return func(d ToolDef) ([]byte, error) {
			calls++
			return fmt.Appendf(nil, "%d:%s:%s:%s", v, d.Name, d.Description, d.Schema), nil
		}
	}
	get := func(d ToolDef, v int) string {
		t.Helper()
		raw, err := c.Encoded(d, v, enc(v))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	d := ToolDef{Name: "read", Description: "reads", Schema: json.RawMessage(`{"type":"object"}`)}
	first := get(d, 0)
	if again := get(d, 0); again != first || calls != 1 {
		t.Fatalf("the same tool again: %q after %q, %d encodings, want 1", again, first, calls)
	}
	if other := get(d, 1); !strings.HasPrefix(other, "1:") || calls != 2 {
		t.Errorf("another variant: %q (%d encodings), want its own encoding", other, calls)
	}
	d2 := d
	d2.Schema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	if got := get(d2, 0); !strings.Contains(got, "path") {
		t.Errorf("a schema changed under the same name encodes as %q, the old one", got)
	}
	d3 := d2
	d3.Description = "reads a file"
	if got := get(d3, 0); !strings.Contains(got, "reads a file") {
		t.Errorf("a description changed under the same name encodes as %q", got)
	}
	for i := range maxCachedTools + 10 {
		get(ToolDef{Name: fmt.Sprint("t", i)}, 0)
	}
	if n := len(c.m); n > maxCachedTools {
		t.Errorf("%d entries, want at most %d", n, maxCachedTools)
	}
}

func TestObjectSchema(t *testing.T) {
	if s, err := ObjectSchema(ToolDef{Name: "x"}, ProviderGemini); err != nil || string(s) != `{"type":"object","properties":{}}` {
		t.Errorf("no schema: %s, %v", s, err)
	}
	for _, bad := range []string{`[]`, `null`, `"s"`, `{`} {
		_, err := ObjectSchema(ToolDef{Name: "x", Schema: json.RawMessage(bad)}, ProviderGemini)
		var le *Error
		if err == nil || !strings.Contains(err.Error(), "not a JSON object") {
			t.Errorf("schema %s: %v, want a bad request", bad, err)
		} else if !errors.As(err, &le) || le.Class != ClassBadRequest {
			t.Errorf("schema %s: %v, want class bad request", bad, err)
		}
	}
}
