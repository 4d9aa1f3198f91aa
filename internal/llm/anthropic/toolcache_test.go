package anthropic

import (
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// sdkParams converts req whole into the SDK's parameters, with no cache:
// the request the body must equal once the SDK encodes it.
func sdkParams(t testing.TB, c *Client, req *llm.Request) sdk.MessageNewParams {
	t.Helper()
	p := sdk.MessageNewParams{Model: sdk.Model(c.opts.Model), MaxTokens: int64(c.opts.MaxTokens)}
	if req.Model != "" {
		p.Model = sdk.Model(req.Model)
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.System != "" {
		p.System = systemParam(req.System)
	}
	for i, td := range req.Tools {
		tp, err := toolParam(td, i == len(req.Tools)-1)
		if err != nil {
			t.Fatal(err)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	for i := range req.Messages {
		if m, ok := messageParam(&req.Messages[i]); ok {
			p.Messages = append(p.Messages, m)
		}
	}
	return p
}

// checkBody asserts that the body c builds for req is byte for byte what
// the SDK encodes from sdkParams, on a first call and on a second.
func checkBody(t *testing.T, c *Client, what string, req *llm.Request) {
	t.Helper()
	want, err := sdkParams(t, c, req).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := c.encode(req, false)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s, call %d:\n got %s\nwant %s", what, i+1, got, want)
		}
	}
}

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
	check := func(what string, tools []llm.ToolDef) {
		t.Helper()
		checkBody(t, c, what, &llm.Request{Tools: tools})
	}
	check("three tools", tools)
	check("reordered: another tool is last", []llm.ToolDef{tools[2], tools[0], tools[1]})
	changed := append([]llm.ToolDef(nil), tools...)
	changed[0].Schema = json.RawMessage(`{"type":"object","properties":{"glob":{"type":"string"}}}`)
	changed[1].Description = "Run a command."
	check("definitions changed under the same names", changed)
	check("back to the first", tools)
	if _, err := c.encode(&llm.Request{Tools: []llm.ToolDef{{Name: "bad", Schema: json.RawMessage(`[1]`)}}}, false); err == nil {
		t.Error("a schema that is not an object: no error")
	}
}
