package anthropic

import (
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// The tools of a request are converted and encoded once and then reused;
// the request's body is byte for byte the one built without the cache, on
// the first call and on later ones, and a tool whose definition changes
// under the same name is converted again.
func TestCachedToolsEncodeAsConverted(t *testing.T) {
	t.Parallel()
	c, err := New(Options{APIKey: "k", Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	tools := []llm.ToolDef{
		{Name: "glob", Description: "Find files.", Schema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","minLength":1}},"required":["pattern"],"additionalProperties":false}`)},
		{Name: "bash", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		{Name: "read_file", Description: "Read <a> file & more.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	}
	uncached := func(tools []llm.ToolDef) string {
		t.Helper()
		p := sdk.MessageNewParams{Model: "claude-test", MaxTokens: int64(c.opts.MaxTokens)}
		for i, td := range tools {
			tp, err := toolParam(td, i == len(tools)-1)
			if err != nil {
				t.Fatal(err)
			}
			p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cached := func(tools []llm.ToolDef) string {
		t.Helper()
		p, err := c.params(&llm.Request{Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	check := func(what string, tools []llm.ToolDef) {
		t.Helper()
		want := uncached(tools)
		for i := range 2 {
			if got := cached(tools); got != want {
				t.Errorf("%s, call %d:\n got %s\nwant %s", what, i+1, got, want)
			}
		}
	}
	check("three tools", tools)
	check("reordered: another tool is last", []llm.ToolDef{tools[2], tools[0], tools[1]})
	changed := append([]llm.ToolDef(nil), tools...)
	changed[0].Schema = json.RawMessage(`{"type":"object","properties":{"glob":{"type":"string"}}}`)
	changed[1].Description = "Run a command."
	check("definitions changed under the same names", changed)
	check("back to the first", tools)
	if _, err := c.params(&llm.Request{Tools: []llm.ToolDef{{Name: "bad", Schema: json.RawMessage(`[1]`)}}}); err == nil {
		t.Error("a schema that is not an object: no error")
	}
}
