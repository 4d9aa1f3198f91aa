package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ParseToolInput checks the accumulated arguments of a tool call and
// returns them as a compact JSON object. Empty or whitespace-only input
// (models send it for tools without parameters) becomes "{}". Anything that
// is not a JSON object is an error of ClassMalformed.
func ParseToolInput(raw []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, &Error{Class: ClassMalformed, Message: fmt.Sprintf("tool input is not a JSON object: %.80q", trimmed)}
	}
	var buf bytes.Buffer
	buf.Grow(len(trimmed))
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, &Error{Class: ClassMalformed, Message: "compacting tool input", Err: err}
	}
	return json.RawMessage(buf.Bytes()), nil
}
