// Package sse reads server-sent events (the text/event-stream format the
// model services stream in) from an io.Reader. It holds no connection of
// its own and trusts nothing it reads: lines and events are bounded, a
// stream cut inside an event is an error, and comments, unknown fields and
// CRLF or LF line ends are handled as the specification says.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one dispatched event.
type Event struct {
	// Name is the event field, empty when the event named none.
	Name string
	// Data is the data lines joined by newlines.
	Data []byte
}

// ErrTooLong is returned (wrapped with bufio.ErrTooLong) for an event
// larger than the reader's limit.
var ErrTooLong = fmt.Errorf("server-sent event too long: %w", bufio.ErrTooLong)

// Reader reads events one at a time. It is not safe for concurrent use.
type Reader struct {
	sc  *bufio.Scanner
	max int
}

// NewReader returns a Reader of r that accepts events of up to maxEvent
// bytes of data (and lines of that length).
func NewReader(r io.Reader, maxEvent int) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(maxEvent, 64<<10)), maxEvent)
	return &Reader{sc: sc, max: maxEvent}
}

// Next returns the next event that carries data. At the clean end of the
// stream it returns io.EOF; a stream that ends inside an event returns
// io.ErrUnexpectedEOF, and an oversized line or event an error wrapping
// bufio.ErrTooLong. Read errors are returned as they are.
func (r *Reader) Next() (Event, error) {
	var (
		ev      Event
		data    []byte
		hasData bool
		pending bool // some field of the current event was read
	)
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if hasData {
				ev.Data = data
				return ev, nil
			}
			ev, pending = Event{}, false
			continue
		}
		if line[0] == ':' {
			continue // a comment (keep-alive)
		}
		pending = true
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
			if len(data) > r.max {
				return Event{}, ErrTooLong
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrTooLong
		}
		return Event{}, err
	}
	if pending {
		return Event{}, io.ErrUnexpectedEOF
	}
	return Event{}, io.EOF
}
