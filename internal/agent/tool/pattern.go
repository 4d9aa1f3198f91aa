package tool

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// A glob pattern, as glob and grep take it: slash-separated segments
// matched with path.Match, where a segment "**" matches any number of
// directories (none included) and {a,b} offers alternatives.

// maxAlternatives bounds what brace expansion may produce.
const maxAlternatives = 64

// globPattern is a parsed pattern: its alternatives, each split into
// segments.
type globPattern [][]string

// parseGlob checks a pattern relative to the working directory and parses
// it. Its errors are written for the model.
func parseGlob(pattern string) (globPattern, error) {
	pattern = strings.TrimPrefix(strings.TrimSpace(pattern), "./")
	if pattern == "" {
		return nil, errors.New("the pattern is empty")
	}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	var g globPattern
	for _, alt := range alts {
		if strings.HasPrefix(alt, "/") {
			return nil, fmt.Errorf("pattern %q is absolute; give it relative to the working directory", pattern)
		}
		var segs []string
		for _, s := range strings.Split(alt, "/") {
			switch s {
			case "", ".":
				continue
			case "..":
				return nil, fmt.Errorf("pattern %q leaves the working directory; patterns are relative to it and may not use ..", pattern)
			}
			if s != "**" {
				if strings.Contains(s, "**") {
					return nil, fmt.Errorf("pattern %q: ** must be a whole path segment, as in src/**/*.go", pattern)
				}
				if _, err := path.Match(s, ""); err != nil {
					return nil, fmt.Errorf("pattern %q: segment %q is malformed", pattern, s)
				}
			}
			segs = append(segs, s)
		}
		if len(segs) == 0 {
			return nil, fmt.Errorf("pattern %q names no files", pattern)
		}
		g = append(g, segs)
	}
	return g, nil
}

// expandBraces expands {a,b} alternatives (nested ones too).
func expandBraces(s string) ([]string, error) {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return []string{s}, nil
	}
	depth, end := 0, -1
	var commas []int
	for i := open; i < len(s) && end < 0; i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				end = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if end < 0 {
		return nil, fmt.Errorf("pattern %q has a { without its }", s)
	}
	if len(commas) == 0 {
		// A lone {x} is literal text to path.Match; keep it.
		rest, err := expandBraces(s[end+1:])
		if err != nil {
			return nil, err
		}
		var out []string
		for _, r := range rest {
			out = append(out, s[:end+1]+r)
		}
		return out, nil
	}
	var parts []string
	from := open + 1
	for _, c := range commas {
		parts = append(parts, s[from:c])
		from = c + 1
	}
	parts = append(parts, s[from:end])
	var out []string
	for _, part := range parts {
		alts, err := expandBraces(s[:open] + part + s[end+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, alts...)
		if len(out) > maxAlternatives {
			return nil, fmt.Errorf("pattern %q expands to more than %d alternatives", s, maxAlternatives)
		}
	}
	return out, nil
}

// match reports whether the slash-separated relative path matches.
func (g globPattern) match(rel string) bool {
	name := strings.Split(rel, "/")
	for _, segs := range g {
		if matchSegments(segs, name) {
			return true
		}
	}
	return false
}

// mayContain reports whether a directory at rel may hold matching paths, so
// that a walk can skip directories that cannot.
func (g globPattern) mayContain(rel string) bool {
	if rel == "." || rel == "" {
		return true
	}
	name := strings.Split(rel, "/")
	for _, segs := range g {
		if prefixMatch(segs, name) {
			return true
		}
	}
	return false
}

// base returns the longest leading directory all alternatives share that has
// no pattern characters: where a walk can start.
func (g globPattern) base() string {
	var common []string
	for i, segs := range g {
		var lit []string
		for _, s := range segs[:len(segs)-1] {
			if strings.ContainsAny(s, `*?[\`) {
				break
			}
			lit = append(lit, s)
		}
		if i == 0 {
			common = lit
			continue
		}
		n := 0
		for n < len(common) && n < len(lit) && common[n] == lit[n] {
			n++
		}
		common = common[:n]
	}
	if len(common) == 0 {
		return "."
	}
	return strings.Join(common, "/")
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// prefixMatch reports whether name can be the leading directories of a path
// matching pat.
func prefixMatch(pat, name []string) bool {
	for len(name) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(pat) > 0
}
