package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Set edits the file at path so that the leaf key has value, keeping
// comments, key order and every other setting. A missing file (and its
// directory, mode 0700) is created. value is parsed for the key's type: a
// string is taken literally; ints, floats and bools are parsed as YAML
// scalars; a list is a YAML flow sequence ("[a, b]") or a comma-separated
// list ("a, b"; "" is the empty list).
//
// The edited file must pass the same checks as [Load] before it is written;
// on any error the file is left untouched. The write is atomic (a temporary
// file in the same directory, then a rename) and keeps the file's mode, 0600
// for a new file; a symlink is followed and the file it names is replaced.
// The file is re-rendered with 2-space indentation. Errors are *Error.
func Set(path, key, value string) error {
	t, err := leafType(key)
	if err != nil {
		return err
	}
	val, err := valueNode(key, t, value)
	if err != nil {
		return err
	}
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	data, mode, err := readForEdit(target)
	if err != nil {
		return err
	}
	doc, err := parseDocument(target, data)
	if err != nil {
		return err
	}
	out, err := edit(doc, data, key, val)
	if err != nil {
		if _, _, ferr := parse(target, data); ferr != nil {
			return ferr // the file was broken before the edit
		}
		return err
	}
	if _, _, err := parse(target, out); err != nil {
		return setError(target, data, key, err)
	}
	return writeAtomic(target, out, mode)
}

// setError explains why the edited file does not load: the new value, or a
// problem that the file already had (reported at its real line).
func setError(target string, data []byte, key string, err error) error {
	var ce *Error
	if !errors.As(err, &ce) {
		return err
	}
	related := ce.Key == key || strings.HasPrefix(ce.Key, key+".") || strings.HasPrefix(key, ce.Key+".")
	if !related {
		if _, _, ferr := parse(target, data); ferr != nil {
			return ferr
		}
	}
	// Lines would refer to text that was never written.
	return &Error{Key: ce.Key, Msg: ce.Msg, Err: ce.Err}
}

// leafType returns the type of the settable field at dotted key.
func leafType(key string) (reflect.Type, error) {
	t := reflect.TypeFor[Config]()
	parent := ""
	for seg := range strings.SplitSeq(key, ".") {
		if !isSection(t) {
			if parent != "" && !isLeaf(t) {
				// A list of sections or a map: its entries are edited in the file.
				return nil, &Error{Key: key, Msg: fmt.Sprintf("is inside %s, which cannot be set from the command line; edit the file", parent)}
			}
			return nil, unknownKeyError(key)
		}
		parent = join(parent, seg)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		f, ok := findField(fieldsOf(t), seg)
		if !ok {
			return nil, unknownKeyError(key)
		}
		t = f.typ
	}
	if isSection(t) {
		var sub []string
		for _, k := range Keys() {
			if strings.HasPrefix(k, key+".") {
				sub = append(sub, k)
			}
		}
		return nil, &Error{Key: key, Msg: "is a section, not a setting; set one of: " + strings.Join(sub, ", ")}
	}
	if !isLeaf(t) {
		return nil, &Error{Key: key, Msg: "cannot be set from the command line; edit the file"}
	}
	return t, nil
}

// valueNode parses value for a field of type t and returns the node to
// store in the file.
func valueNode(key string, t reflect.Type, value string) (*yaml.Node, error) {
	src, err := sourceNode(t, value)
	if err != nil {
		return nil, &Error{Key: key, Msg: fmt.Sprintf("want %s, got %q", want(t), value)}
	}
	if isNull(src) {
		return nil, &Error{Key: key, Msg: fmt.Sprintf("want %s, got %q", want(t), value)}
	}
	v := reflect.New(t).Elem()
	d := decoder{lines: map[string]int{}}
	if err := d.decode(src, v, key); err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			return nil, &Error{Key: ce.Key, Msg: ce.Msg, Err: ce.Err}
		}
		return nil, err
	}
	var n yaml.Node
	if err := n.Encode(v.Interface()); err != nil {
		return nil, &Error{Key: key, Msg: "encoding value: " + err.Error(), Err: err}
	}
	if n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	return &n, nil
}

// sourceNode turns the command-line value into a YAML node for type t.
func sourceNode(t reflect.Type, value string) (*yaml.Node, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	switch {
	case base.Kind() == reflect.String && !decodesItself(base):
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}, nil
	case base.Kind() == reflect.Slice && !strings.HasPrefix(strings.TrimSpace(value), "["):
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if strings.TrimSpace(value) == "" {
			return seq, nil
		}
		for part := range strings.SplitSeq(value, ",") {
			n, err := sourceNode(base.Elem(), strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			seq.Content = append(seq.Content, n)
		}
		return seq, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}, nil
	}
	return doc.Content[0], nil
}

// readForEdit returns the file's contents and mode; a missing file is empty
// with mode 0600.
func readForEdit(path string) ([]byte, fs.FileMode, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o600, nil
	}
	if err != nil {
		return nil, 0, &Error{File: path, Msg: "reading config file: " + causeText(err), Err: err}
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, 0, &Error{File: path, Msg: "reading config file: " + causeText(err), Err: err}
	}
	return data, info.Mode().Perm(), nil
}

// edit stores val at dotted key in doc (nil for a file without a YAML
// document) and renders the result. data is the original text, kept as is
// when it holds only comments.
func edit(doc *yaml.Node, data []byte, key string, val *yaml.Node) ([]byte, error) {
	var prefix []byte
	if doc == nil {
		doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{mappingNode(nil)}}
		if len(strings.TrimSpace(string(data))) > 0 {
			prefix = data
			if !strings.HasSuffix(string(prefix), "\n") {
				prefix = append(prefix, '\n')
			}
		}
	}
	if isNull(doc.Content[0]) {
		doc.Content[0] = mappingNode(doc.Content[0])
	}
	if err := setNode(doc.Content[0], key, val); err != nil {
		return nil, err
	}
	out, err := encode(doc)
	if err != nil {
		return nil, &Error{Key: key, Msg: "rendering the edited file: " + err.Error(), Err: err}
	}
	return append(prefix, out...), nil
}

// setNode stores val at dotted key under mapping m, adding missing sections
// at the end of their parent.
func setNode(m *yaml.Node, key string, val *yaml.Node) error {
	segs := strings.Split(key, ".")
	for i, seg := range segs {
		last := i == len(segs)-1
		if m.Kind != yaml.MappingNode {
			return &Error{Key: strings.Join(segs[:i], "."), Msg: fmt.Sprintf("want a mapping, got %s", describe(m))}
		}
		j := -1
		for k := 0; k+1 < len(m.Content); k += 2 {
			if m.Content[k].Kind == yaml.ScalarNode && m.Content[k].Value == seg {
				j = k + 1
			}
		}
		if j < 0 {
			next := val
			if !last {
				next = mappingNode(nil)
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg}, next)
			m = next
			continue
		}
		old := m.Content[j]
		switch {
		case last:
			m.Content[j] = replacement(old, val)
		case old.Kind == yaml.AliasNode:
			return &Error{Key: strings.Join(segs[:i+1], "."), Msg: "is an alias of another section; edit the file"}
		case isNull(old):
			m.Content[j] = mappingNode(old)
		}
		m = m.Content[j]
	}
	return nil
}

// replacement returns val dressed as old was: same comments and anchor, and
// for strings and lists the same quoting or flow style.
func replacement(old, val *yaml.Node) *yaml.Node {
	n := *val
	n.HeadComment, n.LineComment, n.FootComment = old.HeadComment, old.LineComment, old.FootComment
	n.Anchor = old.Anchor
	switch {
	case old.Kind == yaml.SequenceNode && n.Kind == yaml.SequenceNode:
		n.Style = old.Style
	case old.Kind == yaml.ScalarNode && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		if quoted := old.Style & (yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle); quoted != 0 {
			n.Style = quoted
		}
	}
	return &n
}

// mappingNode returns an empty block mapping carrying the comments of the
// null node it replaces, if any.
func mappingNode(old *yaml.Node) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if old != nil {
		n.HeadComment, n.LineComment, n.FootComment = old.HeadComment, old.LineComment, old.FootComment
	}
	return n
}

// writeAtomic replaces path with data: it writes a temporary file in the
// same directory with the given mode, syncs it and renames it over path.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	fail := func(err error) error {
		return &Error{File: path, Msg: "writing config file: " + causeText(err), Err: err}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fail(err)
	}
	return nil
}
