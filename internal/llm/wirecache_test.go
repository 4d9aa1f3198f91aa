package llm

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// A cached encoding is used only for a message equal to the one it
// encodes: when two messages share a hash, the other one is encoded afresh,
// and a message changed in place after it was encoded does not match the
// stale entry. Equal messages are encoded once.
func TestWireCacheChecksContent(t *testing.T) {
	t.Parallel()
	c := NewWireCache()
	calls := 0
	encode := func(m *Message) ([]byte, error) {
		calls++
		return json.Marshal(m)
	}
	a := Message{Role: RoleAssistant, Parts: []Part{ToolCallPart(ToolCall{ID: "t1", Name: "read", Input: json.RawMessage(`{"path":"a"}`)})}}
	b := Message{Role: RoleAssistant, Parts: []Part{ToolCallPart(ToolCall{ID: "t1", Name: "read", Input: json.RawMessage(`{"path":"b"}`)})}}
	want := func(m *Message) string {
		raw, _ := json.Marshal(m)
		return string(raw)
	}
	check := func(what string, m *Message, wantCalls int) {
		t.Helper()
		raw, err := c.Encoded(m, encode)
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != want(m) {
			t.Errorf("%s: encoded as %s, want %s", what, raw, want(m))
		}
		if calls != wantCalls {
			t.Errorf("%s: %d encodings, want %d", what, calls, wantCalls)
		}
	}
	check("b", &b, 1)
	bCopy := Message{Role: b.Role, Parts: []Part{ToolCallPart(*b.Parts[0].ToolCall)}}
	bCopy.Parts[0].ToolCall.Input = json.RawMessage(`{"path":"b"}`)
	check("an equal copy of b", &bCopy, 1)
	c.cur[c.hash(&a)] = c.cur[c.hash(&b)] // a collision
	check("a, colliding with b", &a, 2)
	copy(b.Parts[0].ToolCall.Input, `{"path":"c"}`)
	if e := c.cur[c.hash(&b)]; e != nil && sameMessage(&e.msg, &b) {
		t.Error("an entry matched a message changed in place")
	}
	check("b changed in place", &b, 3)
	for _, m := range []Message{
		{Role: RoleUser},
		{Role: RoleUser, Parts: []Part{TextPart("x")}},
		{Role: RoleAssistant, Parts: []Part{TextPart("x")}},
		{Role: RoleUser, Parts: []Part{ToolResultPart(ToolResult{CallID: "t1", Content: "x"})}},
		{Role: RoleUser, Parts: []Part{ToolResultPart(ToolResult{CallID: "t1", Content: "x", IsError: true})}},
	} {
		before := calls
		check("distinct message", &m, before+1)
		check("the same again", &m, before+1)
	}
}

// The cache stays bounded: past a generation's size, entries not used since
// are dropped.
func TestWireCacheBounded(t *testing.T) {
	t.Parallel()
	c := NewWireCache()
	big := make([]byte, maxWireCacheBytes/4)
	encode := func(*Message) ([]byte, error) { return big, nil }
	for i := range 20 {
		m := UserText(string(rune('a' + i)))
		if _, err := c.Encoded(&m, encode); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.cur) + len(c.old); n > 10 {
		t.Errorf("%d entries of %d bytes held, want at most 10", n, len(big))
	}
}

// Goroutines sharing a cache get the encoding of the message each asked
// for.
func TestWireCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := NewWireCache()
	encode := func(m *Message) ([]byte, error) { return json.Marshal(m) }
	msgs := make([]Message, 50)
	for i := range msgs {
		msgs[i] = UserText(fmt.Sprintf("message %d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for round := range 20 {
				for i := range msgs {
					m := &msgs[(i+round)%len(msgs)]
					raw, err := c.Encoded(m, encode)
					want, _ := json.Marshal(m)
					if err != nil || string(raw) != string(want) {
						errs <- fmt.Errorf("%s encoded as %s, %v", m.Text(), raw, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
