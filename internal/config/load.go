package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads the configuration file at path. A missing file yields [Default]
// and nil; an empty file is fine; keys absent from the file keep their
// defaults. Every error is an [*Error] naming the file and, when known, the
// line and the dotted key: unknown keys (with the keys valid at that level),
// wrong types, values that fail [Config.Validate] (at the line of that key),
// YAML syntax errors (at the line yaml.v3 reports) and unreadable files.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return Config{}, &Error{File: path, Msg: "reading config file: " + causeText(err), Err: err}
	}
	c, _, err := parse(path, data)
	return c, err
}

// causeText drops the path that *fs.PathError repeats.
func causeText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// parse decodes data, the contents of file, over Default() and validates the
// result. It also returns the document node (nil when data holds no YAML
// document, e.g. only comments) for Set to edit.
func parse(file string, data []byte) (Config, *yaml.Node, error) {
	c := Default()
	doc, err := decodeFile(file, data, structValue(&c), func() error { return c.Validate() })
	if err != nil {
		return Config{}, nil, err
	}
	return c, doc, nil
}

// decodeFile decodes data into v, which holds the defaults, and then runs
// validate, giving its *Error the file and the line of its key. It knows
// nothing about Config, so tests can drive it with other types.
func decodeFile(file string, data []byte, v reflect.Value, validate func() error) (*yaml.Node, error) {
	doc, err := parseDocument(file, data)
	if err != nil {
		return nil, err
	}
	d := decoder{file: file, lines: map[string]int{}}
	if doc != nil && len(doc.Content) > 0 {
		if err := d.decode(doc.Content[0], v, ""); err != nil {
			return nil, err
		}
	}
	if err := validate(); err != nil {
		var ce *Error
		if !errors.As(err, &ce) {
			ce = &Error{Msg: err.Error(), Err: err}
		}
		ce.File = file
		ce.Line = d.lineOf(ce.Key)
		return nil, ce
	}
	return doc, nil
}

// DecodeYAML decodes data, the contents of file, into *v (which holds the
// defaults) with the rules of the configuration file: unknown and duplicate
// keys are errors, null values keep the defaults, and every error is an
// [*Error] with the file, line and dotted key. Then it runs validate (which
// may be nil), giving the *Error it returns the line of its Key. Other files
// of the configuration directory (personas.yaml) are read with it.
func DecodeYAML(file string, data []byte, v any, validate func() error) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("config.DecodeYAML: want a non-nil pointer, got %T", v)
	}
	if validate == nil {
		validate = func() error { return nil }
	}
	_, err := decodeFile(file, data, rv.Elem(), validate)
	return err
}

// parseDocument parses data into its single YAML document node.
func parseDocument(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &Error{File: file, Line: extra.Line, Msg: "a second YAML document; want exactly one"}
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(file, err)
	}
	return &doc, nil
}

// yamlLine matches the "yaml: line N: " prefix of yaml.v3's syntax errors.
// yaml.v3 exposes no typed syntax error, so its text is the only source of the
// line number.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parserProblems are the messages of yaml.v3's parser (as opposed to scanner)
// errors, copied from parserc.go of v3.0.1, which is frozen. yaml.v3 reports
// these with a 0-based line, and with none on the first line; syntaxError
// adds one. Scanner errors already carry a 1-based line.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected node content":     true,
	"did not find expected key":              true,
	"did not find expected '-' indicator":    true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
	"found undefined tag handle":             true,
}

// syntaxError turns a yaml.v3 parse error into an *Error with its line.
func syntaxError(file string, err error) *Error {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	if parserProblems[msg] {
		line++
	}
	return &Error{File: file, Line: line, Msg: "invalid YAML: " + msg, Err: err}
}

// decoder walks a yaml.Node tree together with a Go value, recording the line
// of every key it sees.
type decoder struct {
	file   string
	lines  map[string]int // dotted key -> line of the key in file
	visits int            // nodes visited, bounded by maxVisits
}

// lineOf returns the line of key, or of its deepest ancestor present in the
// file, or 0.
func (d *decoder) lineOf(key string) int {
	for key != "" {
		if line, ok := d.lines[key]; ok {
			return line
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// errorf returns an *Error at n's line about key.
func (d *decoder) errorf(n *yaml.Node, key, format string, args ...any) *Error {
	return &Error{File: d.file, Line: n.Line, Key: key, Msg: fmt.Sprintf(format, args...)}
}
