package config

import (
	"bytes"
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// field is a struct field as the YAML file names it.
type field struct {
	name  string
	index []int // for reflect.Value.FieldByIndex; longer than 1 for inlined structs
	typ   reflect.Type
}

// fieldsOf lists the YAML fields of struct type t in declaration order,
// following yaml.v3's rules: the name comes from the `yaml` tag or is the
// lowercased field name, "-" and unexported fields are skipped, and ",inline"
// struct fields contribute their own fields.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if slices.Contains(strings.Split(opts, ","), "inline") && sf.Type.Kind() == reflect.Struct {
			for _, f := range fieldsOf(sf.Type) {
				f.index = append([]int{i}, f.index...)
				out = append(out, f)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		out = append(out, field{name: name, index: []int{i}, typ: sf.Type})
	}
	return out
}

// findField returns the field called name.
func findField(fields []field, name string) (field, bool) {
	i := slices.IndexFunc(fields, func(f field) bool { return f.name == name })
	if i < 0 {
		return field{}, false
	}
	return fields[i], true
}

// structValue returns the addressable struct that p points to.
func structValue(p *Config) reflect.Value { return reflect.ValueOf(p).Elem() }

// isSection reports whether values of type t are written as a mapping of
// fixed keys, i.e. are a struct the walker descends into.
func isSection(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !decodesItself(t)
}

// isLeaf reports whether a value of type t can be set from one command-line
// argument: a scalar, a type that decodes itself, or a list of scalars.
func isLeaf(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if decodesItself(t) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Interface, reflect.Array, reflect.Chan, reflect.Func:
		return false
	case reflect.Slice:
		e := t.Elem()
		return !isSection(e) && e.Kind() != reflect.Slice && isLeaf(e)
	}
	return true
}

// Keys lists every key that [Set] accepts, dotted, in declaration order:
// "log.level", "daemon.shutdown_timeout_secs", ... Maps and lists of sections
// are edited in the file and are not listed.
func Keys() []string {
	var out []string
	walkKeys(reflect.TypeFor[Config](), "", func(key string, t reflect.Type) {
		if isLeaf(t) {
			out = append(out, key)
		}
	})
	return out
}

// walkKeys calls fn for every field under struct type t, sections before
// their fields.
func walkKeys(t reflect.Type, prefix string, fn func(key string, t reflect.Type)) {
	for _, f := range fieldsOf(t) {
		key := join(prefix, f.name)
		fn(key, f.typ)
		if isSection(f.typ) {
			ft := f.typ
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			walkKeys(ft, key, fn)
		}
	}
}

// Get returns the value at dotted key rendered as YAML without the trailing
// newline: scalars plainly ("info", "10", "true"), a section or list as a
// YAML block. An unknown key is an *Error whose message suggests close
// matches or lists the valid keys.
func Get(c Config, key string) (string, error) {
	v, err := lookup(reflect.ValueOf(c), key)
	if err != nil {
		return "", err
	}
	out, err := encode(v.Interface())
	if err != nil {
		return "", &Error{Key: key, Msg: "rendering value: " + err.Error(), Err: err}
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

// lookup finds dotted key under v, following struct fields, map keys and list
// indexes.
func lookup(v reflect.Value, key string) (reflect.Value, error) {
	if key == "" {
		return reflect.Value{}, unknownKeyError(key)
	}
	for seg := range strings.SplitSeq(key, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v = reflect.Zero(v.Type().Elem())
				continue
			}
			v = v.Elem()
		}
		switch {
		case isSection(v.Type()):
			f, ok := findField(fieldsOf(v.Type()), seg)
			if !ok {
				return reflect.Value{}, unknownKeyError(key)
			}
			v = v.FieldByIndex(f.index)
		case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
			e := v.MapIndex(reflect.ValueOf(seg).Convert(v.Type().Key()))
			if !e.IsValid() {
				return reflect.Value{}, unknownKeyError(key)
			}
			v = e
		case v.Kind() == reflect.Slice:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= v.Len() {
				return reflect.Value{}, unknownKeyError(key)
			}
			v = v.Index(i)
		default:
			return reflect.Value{}, unknownKeyError(key)
		}
	}
	return v, nil
}

// unknownKeyError reports a dotted key that Config does not have.
func unknownKeyError(key string) *Error {
	var all []string
	walkKeys(reflect.TypeFor[Config](), "", func(k string, _ reflect.Type) { all = append(all, k) })
	if near := closest(key, all); len(near) > 0 {
		return &Error{Key: key, Msg: fmt.Sprintf("unknown key; did you mean %s?", quoteAll(near))}
	}
	return &Error{Key: key, Msg: "unknown key; valid keys: " + strings.Join(Keys(), ", ")}
}

// Marshal renders the whole configuration as YAML with 2-space indentation.
func Marshal(c Config) ([]byte, error) {
	return encode(c)
}

// encode renders v as YAML with 2-space indentation.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding YAML: %w", err)
	}
	return buf.Bytes(), nil
}

// closest returns up to three candidates that look like what name meant: a
// small edit away, starting with it, or with the same last dotted segment.
func closest(name string, candidates []string) []string {
	type match struct {
		s    string
		dist int
	}
	var ms []match
	limit := 2 + len(name)/10
	last := name[strings.LastIndexByte(name, '.')+1:]
	for _, c := range candidates {
		d := editDistance(name, c)
		cLast := c[strings.LastIndexByte(c, '.')+1:]
		if d <= limit || (len(name) >= 3 && strings.HasPrefix(c, name)) ||
			(last != "" && cLast == last) {
			ms = append(ms, match{c, d})
		}
	}
	slices.SortStableFunc(ms, func(a, b match) int { return cmp.Compare(a.dist, b.dist) })
	out := make([]string, 0, 3)
	for _, m := range ms[:min(3, len(ms))] {
		out = append(out, m.s)
	}
	return out
}

// quoteAll renders strings as `"a", "b" or "c"`.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
