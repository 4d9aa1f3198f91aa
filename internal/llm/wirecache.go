package llm

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"sync"
)

// WireCache holds the wire encoding of conversation messages, each encoded
// once and keyed by its content: a task sends its whole conversation with
// every call, and all of it but the newest messages was sent, and encoded,
// the call before. A provider builds a request body from the cached pieces.
//
// A hit needs the message to equal, part for part, the one that was encoded:
// the hash only finds the candidate, so a collision or a message changed in
// place costs an encoding, never a wrong body. The cache keeps the message's
// strings (shared with the conversation, not copied) and copies of its tool
// inputs, the only bytes a caller could change under it.
//
// A cache serves one encoding: each client has its own.
//
// It is bounded by two generations: entries used since the current one began
// stay, the rest are dropped when it fills.
type WireCache struct {
	seed     maphash.Seed
	mu       sync.Mutex
	cur, old map[uint64]*wireEntry
	curSize  int
}

// maxWireCacheBytes is the size of a generation, in encoded bytes.
const maxWireCacheBytes = 16 << 20

type wireEntry struct {
	msg Message
	raw []byte
}

// NewWireCache returns an empty cache.
func NewWireCache() *WireCache { return &WireCache{seed: maphash.MakeSeed()} }

// Encoded returns m's encoding: the one cached for a message equal to m, or
// else encode(m), which it caches. encode must depend on m's content only;
// it may return nil (nothing to send), and its result must not be changed
// afterwards.
func (c *WireCache) Encoded(m *Message, encode func(*Message) ([]byte, error)) ([]byte, error) {
	key := c.hash(m)
	c.mu.Lock()
	e := c.cur[key]
	if e == nil {
		if e = c.old[key]; e != nil && sameMessage(&e.msg, m) {
			c.addLocked(key, e)
		}
	}
	c.mu.Unlock()
	if e != nil && sameMessage(&e.msg, m) {
		return e.raw, nil
	}
	raw, err := encode(m)
	if err != nil {
		return nil, err
	}
	e = &wireEntry{msg: copyMessage(m), raw: raw}
	c.mu.Lock()
	c.addLocked(key, e)
	c.mu.Unlock()
	return e.raw, nil
}

// EncodedText is Encoded for a text that is not a message, such as a
// system prompt. A cache holds the encodings of texts or of messages, not
// both.
func (c *WireCache) EncodedText(s string, encode func(string) ([]byte, error)) ([]byte, error) {
	m := Message{Parts: []Part{TextPart(s)}}
	return c.Encoded(&m, func(m *Message) ([]byte, error) { return encode(m.Parts[0].Text) })
}

func (c *WireCache) addLocked(key uint64, e *wireEntry) {
	if c.cur == nil || c.curSize >= maxWireCacheBytes {
		c.old, c.cur, c.curSize = c.cur, make(map[uint64]*wireEntry), 0
	}
	c.cur[key] = e
	c.curSize += len(e.raw) + 64*len(e.msg.Parts)
}

func (c *WireCache) hash(m *Message) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	str := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		_, _ = h.Write(n[:])
		_, _ = h.WriteString(s)
	}
	str(string(m.Role))
	for _, p := range m.Parts {
		switch {
		case p.ToolCall != nil:
			_ = h.WriteByte('c')
			str(p.ToolCall.ID)
			str(p.ToolCall.Name)
			str(string(p.ToolCall.Input))
		case p.ToolResult != nil:
			_ = h.WriteByte('r')
			if p.ToolResult.IsError {
				_ = h.WriteByte('e')
			}
			str(p.ToolResult.CallID)
			str(p.ToolResult.Content)
		}
		_ = h.WriteByte('t')
		str(p.Text)
	}
	return h.Sum64()
}

// sameMessage reports whether a and b have the same content. Strings the
// two share compare in constant time.
func sameMessage(a, b *Message) bool {
	if a.Role != b.Role || len(a.Parts) != len(b.Parts) {
		return false
	}
	for i := range a.Parts {
		p, q := &a.Parts[i], &b.Parts[i]
		if p.Text != q.Text || (p.ToolCall == nil) != (q.ToolCall == nil) || (p.ToolResult == nil) != (q.ToolResult == nil) {
			return false
		}
		if p.ToolCall != nil && (p.ToolCall.ID != q.ToolCall.ID || p.ToolCall.Name != q.ToolCall.Name || !bytes.Equal(p.ToolCall.Input, q.ToolCall.Input)) {
			return false
		}
		if p.ToolResult != nil && *p.ToolResult != *q.ToolResult {
			return false
		}
	}
	return true
}

// copyMessage copies m's structure and tool inputs; strings are immutable
// and shared.
func copyMessage(m *Message) Message {
	out := Message{Role: m.Role, Parts: make([]Part, len(m.Parts))}
	for i, p := range m.Parts {
		if p.ToolCall != nil {
			tc := *p.ToolCall
			tc.Input = bytes.Clone(tc.Input)
			p.ToolCall = &tc
		}
		if p.ToolResult != nil {
			tr := *p.ToolResult
			p.ToolResult = &tr
		}
		out.Parts[i] = p
	}
	return out
}
