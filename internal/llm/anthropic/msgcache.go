package anthropic

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"sync"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// msgCache holds each conversation message encoded once, keyed by its
// content: a task sends its whole conversation with every call, and all of
// it but the newest messages was sent, and encoded, the call before.
//
// A hit needs the message to equal, part for part, the one that was encoded:
// the hash only finds the candidate, so a collision or a message changed in
// place costs an encoding, never a wrong body. The cache keeps the message's
// strings (shared with the conversation, not copied) and copies of its tool
// inputs, the only bytes a caller could change under it.
//
// It is bounded by two generations: entries used since the current one began
// stay, the rest are dropped when it fills.
type msgCache struct {
	seed     maphash.Seed
	mu       sync.Mutex
	cur, old map[uint64]*cachedMsg
	curSize  int
}

// maxMsgCacheBytes is the size of a generation, in encoded bytes.
const maxMsgCacheBytes = 16 << 20

type cachedMsg struct {
	msg llm.Message
	raw []byte // nil: nothing to send
}

func newMsgCache() msgCache { return msgCache{seed: maphash.MakeSeed()} }

// encoded returns m encoded as the SDK encodes an sdk.MessageParam, or nil
// when m has nothing to send.
func (c *msgCache) encoded(m *llm.Message) ([]byte, error) {
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
	e = &cachedMsg{msg: copyMessage(m)}
	if p, ok := messageParam(m); ok {
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderAnthropic, Message: "encoding a message", Err: err}
		}
		e.raw = raw
	}
	c.mu.Lock()
	c.addLocked(key, e)
	c.mu.Unlock()
	return e.raw, nil
}

func (c *msgCache) addLocked(key uint64, e *cachedMsg) {
	if c.cur == nil || c.curSize >= maxMsgCacheBytes {
		c.old, c.cur, c.curSize = c.cur, make(map[uint64]*cachedMsg), 0
	}
	c.cur[key] = e
	c.curSize += len(e.raw) + 64*len(e.msg.Parts)
}

func (c *msgCache) hash(m *llm.Message) uint64 {
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
func sameMessage(a, b *llm.Message) bool {
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
func copyMessage(m *llm.Message) llm.Message {
	out := llm.Message{Role: m.Role, Parts: make([]llm.Part, len(m.Parts))}
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
