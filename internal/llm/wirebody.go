package llm

import "encoding/json"

// The providers assemble request bodies from pieces encoded once (WireCache,
// ToolCache); these are the steps they share.

// EncodedAll appends to dst the encoding of each message with something to
// send (encode's nil is skipped), and returns them with their length in
// bytes counting a separator after each.
func (c *WireCache) EncodedAll(dst [][]byte, msgs []Message, encode func(*Message) ([]byte, error)) ([][]byte, int, error) {
	size := 0
	for i := range msgs {
		raw, err := c.Encoded(&msgs[i], encode)
		if err != nil {
			return nil, 0, err
		}
		if raw != nil {
			dst = append(dst, raw)
			size += len(raw) + 1
		}
	}
	return dst, size, nil
}

// AppendJoined appends the encoded elements separated by commas: the inside
// of a JSON array.
func AppendJoined(b []byte, elems [][]byte) []byte {
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return b
}

// AppendJSON appends v as encoding/json encodes it; a value it cannot
// encode (for the strings and numbers the providers pass: only NaN and the
// infinities) is null.
func AppendJSON(b []byte, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}
