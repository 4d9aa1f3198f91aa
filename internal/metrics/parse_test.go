package metrics

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// This file is a strict reader of the Prometheus text format (0.0.4), so
// the tests check what a scraper would read, not what the writer meant.

var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// key is the series' identity: name and sorted labels.
func (s sample) key() string {
	names := make([]string, 0, len(s.labels))
	for n := range s.labels {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(s.name)
	for _, n := range names {
		fmt.Fprintf(&b, "|%s=%q", n, s.labels[n])
	}
	return b.String()
}

type scrape struct {
	types   map[string]string
	help    map[string]string
	samples []sample
}

// parseText reads text strictly, returning the first violation as an error.
func parseText(text string) (scrape, error) {
	sc := scrape{types: map[string]string{}, help: map[string]string{}}
	if !utf8.ValidString(text) {
		return sc, fmt.Errorf("not UTF-8")
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		return sc, fmt.Errorf("does not end with a line feed")
	}
	seen := map[string]bool{}
	done := map[string]bool{} // families whose samples ended
	current := ""
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		n := i + 1
		switch {
		case strings.HasPrefix(line, "# HELP "), strings.HasPrefix(line, "# TYPE "):
			rest := line[len("# HELP "):]
			name, arg, ok := strings.Cut(rest, " ")
			if !ok || !metricName.MatchString(name) {
				return sc, fmt.Errorf("line %d: bad metadata line %q", n, line)
			}
			if strings.HasPrefix(line, "# TYPE ") {
				if _, dup := sc.types[name]; dup {
					return sc, fmt.Errorf("line %d: second TYPE for %s", n, name)
				}
				switch arg {
				case "counter", "gauge", "histogram", "summary", "untyped":
				default:
					return sc, fmt.Errorf("line %d: unknown type %q", n, arg)
				}
				if done[name] || current == name {
					return sc, fmt.Errorf("line %d: TYPE of %s after its samples", n, name)
				}
				sc.types[name] = arg
			} else {
				h, err := unescape(arg, false)
				if err != nil {
					return sc, fmt.Errorf("line %d: HELP: %v", n, err)
				}
				sc.help[name] = h
			}
		case strings.HasPrefix(line, "#"), line == "":
			// a comment or an empty line
		default:
			s, err := parseSample(line)
			if err != nil {
				return sc, fmt.Errorf("line %d: %v", n, err)
			}
			if _, ok := sc.types[s.name]; !ok {
				return sc, fmt.Errorf("line %d: sample of %s before its TYPE", n, s.name)
			}
			if s.name != current {
				if done[s.name] {
					return sc, fmt.Errorf("line %d: samples of %s are not together", n, s.name)
				}
				done[current] = true
				current = s.name
			}
			if seen[s.key()] {
				return sc, fmt.Errorf("line %d: series %s twice", n, s.key())
			}
			seen[s.key()] = true
			if sc.types[s.name] == "counter" && (!strings.HasSuffix(s.name, "_total") || s.value < 0) {
				return sc, fmt.Errorf("line %d: counter %s must end in _total and not be negative", n, s.name)
			}
			sc.samples = append(sc.samples, s)
		}
	}
	return sc, nil
}

func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return s, fmt.Errorf("no value in %q", line)
	}
	s.name = line[:end]
	if !metricName.MatchString(s.name) {
		return s, fmt.Errorf("bad metric name %q", s.name)
	}
	rest := line[end:]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for !strings.HasPrefix(rest, "}") {
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return s, fmt.Errorf("bad labels in %q", line)
			}
			name := rest[:eq]
			if !labelName.MatchString(name) {
				return s, fmt.Errorf("bad label name %q", name)
			}
			rest = rest[eq+2:]
			// The value runs to the first quote not escaped.
			j := 0
			for ; j < len(rest); j++ {
				if rest[j] == '\\' {
					j++
					continue
				}
				if rest[j] == '"' {
					break
				}
			}
			if j >= len(rest) {
				return s, fmt.Errorf("unterminated label value in %q", line)
			}
			v, err := unescape(rest[:j], true)
			if err != nil {
				return s, err
			}
			if _, dup := s.labels[name]; dup {
				return s, fmt.Errorf("label %s twice", name)
			}
			s.labels[name] = v
			rest = rest[j+1:]
			if strings.HasPrefix(rest, ",") {
				rest = rest[1:]
			} else if !strings.HasPrefix(rest, "}") {
				return s, fmt.Errorf("bad label separator in %q", line)
			}
		}
		rest = rest[1:]
	}
	if !strings.HasPrefix(rest, " ") {
		return s, fmt.Errorf("no space before the value in %q", line)
	}
	fields := strings.Fields(rest)
	if len(fields) != 1 {
		return s, fmt.Errorf("want one value (no timestamps) in %q", line)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("bad value in %q: %v", line, err)
	}
	s.value = v
	return s, nil
}

// unescape undoes the format's escapes: \\ and \n, and \" in label values.
func unescape(s string, label bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if label && c == '"' {
			return "", fmt.Errorf("bare quote in %q", s)
		}
		if c == '\n' {
			return "", fmt.Errorf("bare line feed in %q", s)
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			return "", fmt.Errorf("trailing backslash in %q", s)
		}
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case '"':
			if !label {
				return "", fmt.Errorf(`\" outside a label value in %q`, s)
			}
			b.WriteByte('"')
		default:
			return "", fmt.Errorf("unknown escape \\%c in %q", s[i], s)
		}
	}
	return b.String(), nil
}

// mustParse parses text or fails the test, showing it.
func mustParse(t testing.TB, text string) scrape {
	t.Helper()
	sc, err := parseText(text)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, text)
	}
	return sc
}

// value returns the sample of name whose labels are exactly kv (name,
// value pairs), and whether there is one.
func (sc scrape) value(name string, kv ...string) (float64, bool) {
	want := sample{name: name, labels: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		want.labels[kv[i]] = kv[i+1]
	}
	for _, s := range sc.samples {
		if s.key() == want.key() {
			return s.value, true
		}
	}
	return 0, false
}

// must returns value's sample or fails the test.
func (sc scrape) must(t testing.TB, name string, kv ...string) float64 {
	t.Helper()
	v, ok := sc.value(name, kv...)
	if !ok {
		t.Fatalf("no sample %s%v", name, kv)
	}
	return v
}

func TestParserRejectsBrokenText(t *testing.T) {
	for _, bad := range []string{
		"x 1\n",                                           // no TYPE
		"# TYPE x gauge\nx{a=\"1\\q\"} 1\n",               // unknown escape
		"# TYPE x gauge\nx{a=\"1\"\"} 1\n",                // bare quote
		"# TYPE x gauge\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n",    // duplicate series
		"# TYPE x counter\nx 1\n",                         // counter without _total
		"# TYPE x gauge\n# TYPE y gauge\nx 1\ny 1\nx 2\n", // family split
		"# TYPE x gauge\nx{a=\"1\"} one\n",                // bad value
		"# TYPE x gauge\nx 1",                             // no final line feed
	} {
		if _, err := parseText(bad); err == nil {
			t.Errorf("parsed %q; want an error", bad)
		}
	}
	sc := mustParse(t, "# HELP x a \\\\ b\\nc\n# TYPE x gauge\nx{a=\"q\\\"\\\\\\n\",b=\"\"} +Inf\n")
	if v := sc.must(t, "x", "a", "q\"\\\n", "b", ""); v <= 0 {
		t.Errorf("x = %v", v)
	}
	if sc.help["x"] != "a \\ b\nc" {
		t.Errorf("help = %q", sc.help["x"])
	}
}
