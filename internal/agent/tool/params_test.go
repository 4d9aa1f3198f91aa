package tool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type testParams struct {
	Name  string   `json:"name" desc:"A name." min:"1"`
	Count int      `json:"count,omitempty" min:"1"`
	Tags  []string `json:"tags,omitempty"`
	Flag  bool     `json:"flag,omitempty"`
	Body  string   `json:"body"`
}

func TestSchemaOf(t *testing.T) {
	t.Parallel()
	var got, want any
	if err := json.Unmarshal(schemaOf[testParams](), &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(`{
		"type": "object",
		"additionalProperties": false,
		"properties": {
			"name": {"type": "string", "description": "A name.", "minLength": 1},
			"count": {"type": "integer", "minimum": 1},
			"tags": {"type": "array", "items": {"type": "string"}},
			"flag": {"type": "boolean"},
			"body": {"type": "string"}
		},
		"required": ["name", "body"]
	}`), &want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		want    testParams
		wantErr string
	}{
		{name: "all fields", input: `{"name":"n","count":2,"tags":["a"],"flag":true,"body":""}`, want: testParams{Name: "n", Count: 2, Tags: []string{"a"}, Flag: true}},
		{name: "optional null", input: `{"name":"n","body":"b","count":null}`, want: testParams{Name: "n", Body: "b"}},
		{name: "empty input", input: ``, wantErr: `missing required field "name" (string)`},
		{name: "null input", input: `null`, wantErr: `missing required field "name"`},
		{name: "missing required", input: `{"name":"n"}`, wantErr: `missing required field "body" (string)`},
		{name: "required null", input: `{"name":null,"body":""}`, wantErr: `missing required field "name"`},
		{name: "not an object", input: `["x"]`, wantErr: `the input must be a JSON object with the fields name (string, required), count (integer), tags (array of strings), flag (boolean), body (string, required)`},
		{name: "invalid JSON", input: `{"name":`, wantErr: `must be a JSON object`},
		{name: "unknown field", input: `{"name":"n","body":"","nmae":"x"}`, wantErr: `unknown field "nmae"; the fields are name (string, required)`},
		{name: "string for integer", input: `{"name":"n","body":"","count":"3"}`, wantErr: `field "count" must be an integer, not a string`},
		{name: "fraction for integer", input: `{"name":"n","body":"","count":1.5}`, wantErr: `field "count" must be an integer, not the number 1.5`},
		{name: "number for string", input: `{"name":1,"body":""}`, wantErr: `field "name" must be a string, not a number`},
		{name: "wrong array items", input: `{"name":"n","body":"","tags":[1]}`, wantErr: `field "tags" must be an array of strings, not an array`},
		{name: "empty required string", input: `{"name":"  ","body":""}`, wantErr: `field "name" must not be empty`},
		{name: "integer below minimum", input: `{"name":"n","body":"","count":0}`, wantErr: `field "count" must be at least 1, not 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := decode[testParams](json.RawMessage(tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuiltin(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tl := range Builtin() {
		d := tl.Def()
		names = append(names, d.Name)
		if strings.TrimSpace(d.Description) == "" {
			t.Errorf("%s has no description", d.Name)
		}
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(d.Schema, &s); err != nil || s.Type != "object" || len(s.Properties) == 0 {
			t.Errorf("%s has schema %s (%v), want an object with properties", d.Name, d.Schema, err)
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("%s requires %q, which is not a property", d.Name, r)
			}
		}
		// Every tool answers input that is not an object with an error
		// result, not a panic.
		if res := call(t, tl, &Env{Dir: t.TempDir()}, `"nonsense"`); !res.IsError || !strings.Contains(res.Content, "must be a JSON object") {
			t.Errorf("%s given a string: %+v", d.Name, res)
		}
	}
	want := []string{"read_file", "write_file", "edit_file", "glob", "grep", "bash", "ask_user", "complete_task", "fail_task", "record_learning"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Builtin names (-want +got):\n%s", diff)
	}
}

func TestFindAndCall(t *testing.T) {
	t.Parallel()
	tools := Builtin()
	if tl, ok := Find(tools, "grep"); !ok || tl.Def().Name != "grep" {
		t.Errorf("Find(grep) = %v, %v", tl, ok)
	}
	if _, ok := Find(tools, "nope"); ok {
		t.Error("Find(nope) found something")
	}
	res := Call(t.Context(), tools, &Env{Dir: t.TempDir()}, "read_fiel", json.RawMessage(`{}`))
	if !res.IsError || !strings.Contains(res.Content, `unknown tool "read_fiel"`) || !strings.Contains(res.Content, "read_file, write_file") {
		t.Errorf("unknown tool: %+v", res)
	}
	res = Call(t.Context(), tools, &Env{Dir: t.TempDir()}, "ask_user", json.RawMessage(`{"question":"why?"}`))
	if res.IsError || res.Control == nil || res.Control.Text != "why?" {
		t.Errorf("ask_user through Call: %+v", res)
	}
}
