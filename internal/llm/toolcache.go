package llm

import (
	"encoding/json"
	"fmt"
	"sync"
)

// ToolCache holds each tool definition a provider encoded once: a task sends
// the same tools with every call, and encoding (or converting) their schemas
// was most of the work of building a request. An entry is found by the
// tool's name and a variant the provider chooses (Anthropic's last tool
// carries the cache mark) and used only while the tool's description and
// schema are the ones it was made from. The zero value is ready; it is safe
// for concurrent use.
type ToolCache struct {
	mu sync.Mutex
	m  map[toolKey]*cachedTool
}

type toolKey struct {
	name    string
	variant int
}

type cachedTool struct {
	desc, schema string
	raw          []byte // the encoded definition, read only
}

// maxCachedTools bounds a ToolCache; past it, it starts again.
const maxCachedTools = 1024

// Encoded returns t's definition as encode encodes it, from the cache when
// t (its description and schema) is the one encoded before. The bytes are
// shared: the caller must not change them.
func (c *ToolCache) Encoded(t ToolDef, variant int, encode func(ToolDef) ([]byte, error)) ([]byte, error) {
	k := toolKey{t.Name, variant}
	c.mu.Lock()
	e := c.m[k]
	c.mu.Unlock()
	if e != nil && e.desc == t.Description && e.schema == string(t.Schema) {
		return e.raw, nil
	}
	raw, err := encode(t)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedTools {
		c.m = map[toolKey]*cachedTool{}
	}
	c.m[k] = &cachedTool{desc: t.Description, schema: string(t.Schema), raw: raw}
	return raw, nil
}

// ObjectSchema is t's parameter schema as a provider sends it: an empty
// object schema when t has none, a bad request for one that is not a JSON
// object.
func ObjectSchema(t ToolDef, provider string) (json.RawMessage, error) {
	if len(t.Schema) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	var v map[string]any
	if json.Unmarshal(t.Schema, &v) != nil || v == nil {
		return nil, &Error{Class: ClassBadRequest, Provider: provider, Message: fmt.Sprintf("tool %q: schema is not a JSON object", t.Name)}
	}
	return t.Schema, nil
}
