package stuck

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// The fast path of CanonicalCall: a tool call's arguments are nearly always
// a JSON object of strings. flatStrings parses that shape without
// reflection and canonFlat writes the key exactly as the general path
// (json.Unmarshal, canonValue, json.Marshal) would; anything else takes the
// general path. FuzzCanonicalCallFastPath holds the two paths equal.

type keyValue struct{ k, v string }

// flatStrings parses a JSON object whose values are all strings; ok is
// false for any other input, valid or not.
func flatStrings(b []byte) (kvs []keyValue, ok bool) {
	return appendFlatStrings(nil, b)
}

// appendFlatStrings is flatStrings appending to kvs (a caller's buffer).
func appendFlatStrings(kvs []keyValue, b []byte) ([]keyValue, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil, skipSpace(b, i+1) == len(b)
	}
	if kvs == nil {
		kvs = make([]keyValue, 0, 4)
	}
	for {
		k, j, ok := jsonString(b, i)
		if !ok {
			return nil, false
		}
		j = skipSpace(b, j)
		if j >= len(b) || b[j] != ':' {
			return nil, false
		}
		v, j, ok := jsonString(b, skipSpace(b, j+1))
		if !ok {
			return nil, false
		}
		kvs = append(kvs, keyValue{k, v})
		j = skipSpace(b, j)
		if j >= len(b) {
			return nil, false
		}
		switch b[j] {
		case ',':
			i = skipSpace(b, j+1)
		case '}':
			return kvs, skipSpace(b, j+1) == len(b)
		default:
			return nil, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonString reads the JSON string starting at b[i]; it returns the string
// and the index after it.
func jsonString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	plain := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			raw := b[i+1 : j]
			if plain && utf8.Valid(raw) {
				return knownKey(raw), j + 1, true
			}
			var s string // escapes or invalid UTF-8: as encoding/json reads them
			if json.Unmarshal(b[i:j+1], &s) != nil {
				return "", 0, false
			}
			return s, j + 1, true
		case c == '\\':
			plain = false
			j++
		case c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}

// knownKey returns raw as a string, without allocating for the argument
// names tools use.
func knownKey(raw []byte) string {
	switch string(raw) {
	case "command":
		return "command"
	case "path":
		return "path"
	case "file_path":
		return "file_path"
	case "pattern":
		return "pattern"
	case "old":
		return "old"
	case "new":
		return "new"
	case "old_string":
		return "old_string"
	case "new_string":
		return "new_string"
	case "content":
		return "content"
	case "glob":
		return "glob"
	}
	return string(raw)
}

// canonFlat canonicalizes flat string arguments and writes the key.
func canonFlat(tool string, kvs []keyValue, root string) string {
	// Duplicate keys: the last wins, as in encoding/json.
	slices.SortStableFunc(kvs, func(a, b keyValue) int { return strings.Compare(a.k, b.k) })
	out := kvs[:0]
	for _, kv := range kvs {
		if n := len(out); n > 0 && out[n-1].k == kv.k {
			out[n-1] = kv
			continue
		}
		out = append(out, kv)
	}
	var buf [256]byte // most keys: built without a heap buffer
	b := append(buf[:0], tool...)
	b = append(b, " {"...)
	for i, kv := range out {
		v := kv.v
		if kv.k == "command" {
			v = CanonicalCommand(strings.TrimSpace(v), root)
		} else {
			v = canonPath(words1(v), root)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, kv.k)
		b = append(b, ':')
		b = appendJSONString(b, v)
	}
	b = append(b, '}')
	return string(b)
}

// words1 collapses white space as words.OneLine does, without allocating
// when there is nothing to collapse.
func words1(s string) string {
	clean := len(s) > 0 && !isSpaceByte(s[0]) && !isSpaceByte(s[len(s)-1])
	for i := 0; clean && i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c != ' ' && isSpaceByte(c) || c == ' ' && i+1 < len(s) && s[i+1] == ' ' {
			clean = false
		}
	}
	if clean {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as encoding/json writes a string (HTML
// characters escaped, invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
