package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// A tool's input is a params struct: its exported fields, with their json
// names, are the input's properties. A field is required unless its json tag
// says omitempty; `desc:"..."` describes it to the model and `min:"n"` sets
// the least value of an integer or the least length of a string. The same
// struct yields the schema sent to the model (schemaOf) and checks what the
// model sent (decode), so the two cannot disagree.

// param is one field of a params struct.
type param struct {
	name     string
	index    int
	typ      reflect.Type
	required bool
	min      *int
	desc     string
}

func params(t reflect.Type) []param {
	var ps []param
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := param{name: name, index: i, typ: f.Type, required: !strings.Contains(opts, "omitempty"), desc: f.Tag.Get("desc")}
		if m, ok := f.Tag.Lookup("min"); ok {
			n, err := strconv.Atoi(m)
			if err != nil {
				panic(fmt.Sprintf("tool params %s.%s: bad min tag %q", t.Name(), f.Name, m))
			}
			p.min = &n
		}
		ps = append(ps, p)
	}
	return ps
}

// jsonType is the JSON schema type of a Go type used in params.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "integer"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		return "array"
	default:
		panic("tool params: unsupported field type " + t.String())
	}
}

// schema is the subset of JSON schema the params use.
type schema struct {
	Type                 string             `json:"type"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	Minimum              *int               `json:"minimum,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
}

// schemaOf returns the JSON schema of the params struct P.
func schemaOf[P any]() json.RawMessage {
	t := reflect.TypeFor[P]()
	if b, ok := schemas.Load(t); ok {
		return b.(json.RawMessage)
	}
	b := slices.Clip(buildSchema(t)) // shared: an append copies
	schemas.Store(t, b)
	return b
}

// schemas holds each params type's schema, built once: a tool's Def is
// asked for on every turn.
var schemas sync.Map // reflect.Type → json.RawMessage

func buildSchema(t reflect.Type) json.RawMessage {
	no := false
	s := schema{Type: "object", Properties: map[string]*schema{}, AdditionalProperties: &no}
	for _, p := range params(t) {
		ps := &schema{Type: jsonType(p.typ), Description: p.desc}
		if p.typ.Kind() == reflect.Slice {
			ps.Items = &schema{Type: jsonType(p.typ.Elem())}
		}
		if p.min != nil {
			if ps.Type == "string" {
				ps.MinLength = p.min
			} else {
				ps.Minimum = p.min
			}
		}
		s.Properties[p.name] = ps
		if p.required {
			s.Required = append(s.Required, p.name)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a schema of strings, ints and bools always marshals
	}
	return b
}

// def builds a tool's definition from its name, description and params.
func def[P any](name, description string) llm.ToolDef {
	return llm.ToolDef{Name: name, Description: strings.TrimSpace(description), Schema: schemaOf[P]()}
}

// decode checks the model's input against the params struct P and fills one
// in. Its error is written for the model: it names the field and says what
// was expected.
func decode[P any](input json.RawMessage) (P, error) {
	var p P
	t := reflect.TypeFor[P]()
	ps := params(t)
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return p, fmt.Errorf("the input must be a JSON object with the fields %s", describeParams(ps))
	}
	known := map[string]param{}
	for _, f := range ps {
		known[f.name] = f
	}
	for name := range raw {
		if _, ok := known[name]; !ok {
			return p, fmt.Errorf("unknown field %q; the fields are %s", name, describeParams(ps))
		}
	}
	v := reflect.ValueOf(&p).Elem()
	for _, f := range ps {
		r, ok := raw[f.name]
		if !ok || bytes.Equal(bytes.TrimSpace(r), []byte("null")) {
			if f.required {
				return p, fmt.Errorf("missing required field %q (%s)", f.name, typeName(f.typ))
			}
			continue
		}
		if err := json.Unmarshal(r, v.Field(f.index).Addr().Interface()); err != nil {
			return p, fmt.Errorf("field %q must be %s, not %s", f.name, article(typeName(f.typ)), jsonKind(r))
		}
		if f.min != nil {
			if err := checkMin(f, v.Field(f.index)); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

func checkMin(f param, v reflect.Value) error {
	switch v.Kind() {
	case reflect.String:
		if len(strings.TrimSpace(v.String())) < *f.min {
			if *f.min == 1 {
				return fmt.Errorf("field %q must not be empty", f.name)
			}
			return fmt.Errorf("field %q must be at least %d characters", f.name, *f.min)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if v.Int() < int64(*f.min) {
			return fmt.Errorf("field %q must be at least %d, not %d", f.name, *f.min, v.Int())
		}
	}
	return nil
}

func describeParams(ps []param) string {
	var parts []string
	for _, p := range ps {
		s := p.name + " (" + typeName(p.typ)
		if p.required {
			s += ", required"
		}
		parts = append(parts, s+")")
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, ", ")
}

func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Slice {
		return "array of " + jsonType(t.Elem()) + "s"
	}
	return jsonType(t)
}

func article(s string) string {
	if strings.IndexByte("aeiou", s[0]) >= 0 {
		return "an " + s
	}
	return "a " + s
}

// jsonKind names the kind of a JSON value for an error message.
func jsonKind(r json.RawMessage) string {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return "empty"
	}
	switch r[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	var n json.Number
	if json.Unmarshal(r, &n) == nil {
		if _, err := n.Int64(); err != nil {
			return "the number " + string(n)
		}
		return "a number"
	}
	return "invalid JSON"
}
