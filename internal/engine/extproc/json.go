package extproc

import (
	"bytes"
	"encoding/json"
)

// InputString is the string at key in a tool call's JSON input, "" when
// there is none.
func InputString(input json.RawMessage, key string) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

// Canonical re-encodes a JSON object with sorted keys and no space; "{}"
// for anything else.
func Canonical(raw json.RawMessage) json.RawMessage {
	var v any
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &v) != nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
