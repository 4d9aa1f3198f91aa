package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// listChunk is how much of a listing WriteListJSON reads, checks and
// writes at a time: the whole of 10,000 tasks (megabytes) is never held.
const listChunk = 128 << 10

// maxListLine bounds one line of a listing answer: a task's summary is a
// few hundred bytes (its description is the headline).
const maxListLine = 64 << 10

// ListPageJSON is ListPage returning the api.TaskList as the daemon encoded
// it, undecoded but with its framing checked (see WriteListJSON), without
// the final newline.
func (c *Client) ListPageJSON(ctx context.Context, q ListQuery) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := c.WriteListJSON(ctx, q, &buf); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// WriteListJSON writes the page of tasks q selects to w as the daemon
// encoded it (an api.TaskList with one task a line), ending with a newline:
// what `task list --json` prints. Nothing is decoded or encoded; the bytes
// pass through in chunks, each checked before it is written: the answer
// must be `{"tasks":[`, one `{"id":"…",…}` a line with commas between
// them, and `]}` or `],"next":"ID"}`. A malformed or cut answer is an error
// (what was written before it is then an incomplete document).
func (c *Client) WriteListJSON(ctx context.Context, q ListQuery, w io.Writer) error {
	path := "/v1/tasks?" + q.values().Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://neuraphage"+path, nil)
	if err != nil {
		return fmt.Errorf("building request GET %s: %w", path, err)
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return fmt.Errorf("the answer to GET %s is %q, not a JSON listing", path, resp.Header.Get("Content-Type"))
	}
	var f listFrame
	buf := make([]byte, listChunk)
	for {
		n, rerr := fill(resp.Body, buf)
		if n > 0 {
			if err := f.check(buf[:n]); err != nil {
				return fmt.Errorf("the answer to GET %s: %w", path, err)
			}
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("reading the answer to GET %s: %w", path, rerr)
		}
	}
	newline, err := f.end()
	if err != nil {
		return fmt.Errorf("the answer to GET %s: %w", path, err)
	}
	if newline {
		_, err = io.WriteString(w, "\n")
	}
	return err
}

// fill reads into buf until it is full or r fails; unlike io.ReadFull it
// keeps a cut answer (io.ErrUnexpectedEOF from the body) apart from its end.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// listFrame checks the framing of a listing answer as its bytes arrive: the
// lines the daemon writes (encoding/json escapes every newline inside a
// string, so each task is one line).
type listFrame struct {
	line  int    // lines checked
	carry []byte // the start of a line not yet ended
	state frameState
	comma bool // the last task line ended with a comma: another must follow
	tasks int
}

type frameState int

const (
	wantHead frameState = iota
	inTasks
	ended
)

var (
	listHead    = []byte(`{"tasks":[`)
	listTaskPre = []byte(`{"id":"`)
	listNextPre = []byte(`],"next":"`)
)

// check checks the lines p ends, keeping the one it starts but does not end.
func (f *listFrame) check(p []byte) error {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(f.carry)+len(p) > maxListLine {
				return fmt.Errorf("line %d is longer than %d bytes", f.line+1, maxListLine)
			}
			f.carry = append(f.carry, p...)
			if f.state == wantHead && !bytes.HasPrefix(listHead, f.carry) {
				return fmt.Errorf("it does not start with %s", listHead)
			}
			return nil
		}
		line := p[:i]
		if len(f.carry) > 0 {
			if len(f.carry)+i > maxListLine {
				return fmt.Errorf("line %d is longer than %d bytes", f.line+1, maxListLine)
			}
			f.carry = append(f.carry, line...)
			line = f.carry
		}
		if err := f.checkLine(line); err != nil {
			return err
		}
		f.carry = f.carry[:0]
		p = p[i+1:]
	}
	return nil
}

// end checks what is left once the answer ended, and reports whether its
// last line lacked its newline.
func (f *listFrame) end() (bool, error) {
	newline := false
	if len(f.carry) > 0 {
		if err := f.checkLine(f.carry); err != nil {
			return false, err
		}
		f.carry = f.carry[:0]
		newline = true
	}
	if f.state != ended {
		return false, fmt.Errorf("it ends after line %d, before the listing's end (%d tasks read)", f.line, f.tasks)
	}
	return newline, nil
}

func (f *listFrame) checkLine(line []byte) error {
	f.line++
	if len(line) > maxListLine {
		return fmt.Errorf("line %d is longer than %d bytes", f.line, maxListLine)
	}
	switch f.state {
	case wantHead:
		if !bytes.Equal(line, listHead) {
			return fmt.Errorf("it does not start with %s", listHead)
		}
		f.state = inTasks
	case inTasks:
		if len(line) > 0 && line[0] == ']' {
			if f.comma {
				return fmt.Errorf("line %d ends the list after a comma", f.line)
			}
			if !validTail(line) {
				return fmt.Errorf(`line %d is not the listing's end (]} or ],"next":"ID"})`, f.line)
			}
			f.state = ended
			return nil
		}
		if f.tasks > 0 && !f.comma {
			return fmt.Errorf("line %d is a task after a task line without a comma", f.line)
		}
		body, comma := bytes.CutSuffix(line, []byte(","))
		if !bytes.HasPrefix(body, listTaskPre) || len(body) < len(listTaskPre)+2 || body[len(body)-1] != '}' {
			return fmt.Errorf(`line %d is not a task ({"id":"…",…})`, f.line)
		}
		f.tasks++
		f.comma = comma
	default:
		return fmt.Errorf("line %d follows the listing's end", f.line)
	}
	return nil
}

// validTail reports whether line is `]}` or `],"next":"ID"}` with ID a
// JSON string.
func validTail(line []byte) bool {
	if string(line) == "]}" {
		return true
	}
	rest, ok := bytes.CutPrefix(line, listNextPre)
	if !ok || !bytes.HasSuffix(rest, []byte(`"}`)) {
		return false
	}
	var next string
	return json.Unmarshal(line[len(listNextPre)-1:len(line)-1], &next) == nil && next != ""
}
