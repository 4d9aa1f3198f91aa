package config

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/words"
	"gopkg.in/yaml.v3"
)

// maxVisits bounds the nodes the decoder visits, so that aliases which expand
// a small file into a huge tree ("billion laughs") fail instead of hanging.
const maxVisits = 100_000

// decode stores the value of node n into v, whose dotted key is key. Null
// values leave v unchanged, so absent or empty settings keep their defaults.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, key string) error {
	if d.visits++; d.visits > maxVisits {
		return d.errorf(n, key, "document too large (aliases expand to over %d nodes)", maxVisits)
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return d.errorf(n, key, "alias *%s has no anchor", n.Value)
		}
		n = n.Alias
	}
	if isNull(n) {
		return nil
	}
	if decodesItself(v.Type()) {
		return d.decodeWithYAML(n, v, key)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.decode(n, v.Elem(), key)
	case reflect.Struct:
		return d.decodeStruct(n, v, key)
	case reflect.Map:
		return d.decodeMap(n, v, key)
	case reflect.Slice:
		return d.decodeSlice(n, v, key)
	case reflect.Interface:
		return d.decodeWithYAML(n, v, key)
	}
	return d.decodeScalar(n, v, key)
}

// decodeStruct decodes mapping n field by field, rejecting unknown and
// duplicate keys.
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind != yaml.MappingNode {
		return d.typeError(n, v, key)
	}
	fields := fieldsOf(v.Type())
	return d.eachPair(n, key, func(kn, vn *yaml.Node, name, full string) error {
		f, ok := findField(fields, name)
		if !ok {
			return d.unknownKey(kn, key, name, fields)
		}
		return d.decode(vn, v.FieldByIndex(f.index), full)
	})
}

// decodeMap decodes mapping n into a map with string keys, merging into the
// entries already there (the defaults).
func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind != yaml.MappingNode {
		return d.typeError(n, v, key)
	}
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		return d.errorf(n, key, "unsupported map key type %s (want string keys)", t.Key())
	}
	if v.IsNil() && len(n.Content) > 0 {
		// An empty mapping merges nothing, so a nil map stays nil: Marshal
		// renders nil as {}, which must load back unchanged.
		v.Set(reflect.MakeMap(t))
	}
	return d.eachPair(n, key, func(_, vn *yaml.Node, name, full string) error {
		k := reflect.ValueOf(name).Convert(t.Key())
		elem := reflect.New(t.Elem()).Elem()
		if old := v.MapIndex(k); old.IsValid() {
			elem.Set(old)
		}
		if err := d.decode(vn, elem, full); err != nil {
			return err
		}
		v.SetMapIndex(k, elem)
		return nil
	})
}

// eachPair calls fn for every key/value pair of mapping n, after checking that
// the key is a plain, unique scalar and recording its line.
func (d *decoder) eachPair(n *yaml.Node, key string, fn func(kn, vn *yaml.Node, name, full string) error) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			return d.errorf(kn, key, "want a plain key, got %s", describe(kn))
		}
		if kn.ShortTag() == "!!merge" {
			return d.errorf(kn, key, "merge keys (<<) are not supported")
		}
		name := kn.Value
		full := join(key, name)
		if first, dup := seen[name]; dup {
			return d.errorf(kn, full, "duplicate key (first set at line %d)", first)
		}
		seen[name] = kn.Line
		d.lines[full] = kn.Line
		if err := fn(kn, vn, name, full); err != nil {
			return err
		}
	}
	return nil
}

// decodeSlice decodes sequence n into a new slice that replaces v. An empty
// sequence leaves an already empty v as it is, nil or not: Marshal renders a
// nil slice as [], which must load back unchanged.
func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind != yaml.SequenceNode {
		return d.typeError(n, v, key)
	}
	if len(n.Content) == 0 && v.Len() == 0 {
		return nil
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, en := range n.Content {
		full := join(key, strconv.Itoa(i))
		d.lines[full] = en.Line
		if err := d.decode(en, out.Index(i), full); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

// decodeScalar decodes scalar n into a bool, number or string.
func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind != yaml.ScalarNode {
		return d.typeError(n, v, key)
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		// yaml.v3 would truncate 1.5 to 1; accept only integers.
		if n.ShortTag() != "!!int" {
			return d.typeError(n, v, key)
		}
	}
	if err := n.Decode(v.Addr().Interface()); err != nil {
		if n.ShortTag() == "!!int" {
			return d.errorf(n, key, "want %s, got %s (out of range)", want(v.Type()), describe(n))
		}
		return d.typeError(n, v, key)
	}
	return nil
}

// decodeWithYAML lets yaml.v3 decode n into v: for types with their own
// unmarshalling, durations and interfaces.
func (d *decoder) decodeWithYAML(n *yaml.Node, v reflect.Value, key string) error {
	if err := n.Decode(v.Addr().Interface()); err != nil {
		if _, ok := err.(*yaml.TypeError); ok {
			return d.typeError(n, v, key)
		}
		e := d.typeError(n, v, key)
		e.Msg += ": " + err.Error()
		e.Err = err
		return e
	}
	return nil
}

// typeError reports that n does not fit v's type.
func (d *decoder) typeError(n *yaml.Node, v reflect.Value, key string) *Error {
	return d.errorf(n, key, "want %s, got %s", want(v.Type()), describe(n))
}

// unknownKey reports key name, not among fields, in the section at prefix.
func (d *decoder) unknownKey(kn *yaml.Node, prefix, name string, fields []field) *Error {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	var b strings.Builder
	b.WriteString("unknown key")
	if near := closest(name, names); len(near) > 0 {
		fmt.Fprintf(&b, "; did you mean %s?", quoteAll(near))
	}
	where := "at the top level"
	if prefix != "" {
		where = "in " + prefix
	}
	valid := strings.Join(names, ", ")
	if valid == "" {
		valid = "none"
	}
	fmt.Fprintf(&b, "; valid keys %s: %s", where, valid)
	return &Error{File: d.file, Line: kn.Line, Key: join(prefix, name), Msg: b.String()}
}

var (
	durationType        = reflect.TypeFor[time.Duration]()
	yamlUnmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether yaml.v3 should decode values of type t whole.
func decodesItself(t reflect.Type) bool {
	if t == durationType {
		return true
	}
	p := reflect.PointerTo(t)
	return p.Implements(yamlUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// isNull reports whether n is an explicit or implicit YAML null.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// want describes the YAML values that type t accepts.
func want(t reflect.Type) string {
	switch t {
	case durationType:
		return `a duration such as "30s"`
	case networkType:
		return networkWant
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Pointer:
		return want(t.Elem())
	}
	return "a value of type " + t.String()
}

// describe renders node n for an error message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		if n.Alias != nil {
			return describe(n.Alias)
		}
		return "*" + n.Value
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 60 {
			v = words.Clip(v, 57)
		}
		switch n.ShortTag() {
		case "!!str", "!!binary", "!!timestamp":
			return strconv.Quote(v)
		case "!!null":
			return "null"
		}
		return v
	}
	return "an empty document"
}
