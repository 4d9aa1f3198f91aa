package llm

import (
	"math"
	"testing"
)

func TestEncodedAllSkipsNothingToSend(t *testing.T) {
	c := NewWireCache()
	msgs := []Message{UserText("a"), {Role: RoleAssistant}, UserText("bc")}
	enc := func(m *Message) ([]byte, error) {
		if len(m.Parts) == 0 {
			return nil, nil
		}
		return []byte(`"` + m.Text() + `"`), nil
	}
	got, size, err := c.EncodedAll([][]byte{[]byte("sys")}, msgs, enc)
	if err != nil {
		t.Fatal(err)
	}
	body := string(AppendJoined([]byte("["), got)) + "]"
	if body != `[sys,"a","bc"]` || size != len(`"a"`)+1+len(`"bc"`)+1 {
		t.Errorf("body %s, size %d", body, size)
	}
	if b := string(AppendJoined(nil, nil)); b != "" {
		t.Errorf("no elements: %q", b)
	}
	if b := string(AppendJSON([]byte("x:"), math.NaN())); b != "x:null" {
		t.Errorf("NaN: %q", b)
	}
	if b := string(AppendJSON(nil, "<a&b>")); b != `"\u003ca\u0026b\u003e"` {
		t.Errorf("a string: %q, want encoding/json's escaping", b)
	}
}
