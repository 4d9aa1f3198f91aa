package cli

import (
	"io"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

// terminalWriter passes everything a command prints through words.Printable
// before it reaches the terminal. Main wraps stdout and stderr in one, so
// every human-readable rendering of untrusted text (tool output, model text,
// descriptions, file names, learnings, sync messages, commit subjects, the
// daemon's error text) is escaped in this one place, whichever command prints
// it. JSON output goes around it (see jsonOut): JSON escaping already covers the
// C0 controls and --json output stays byte for byte what the daemon sent.
//
// A write may end inside a multi-byte character; those bytes wait for the
// next write, or for flush, so a character split across writes is judged
// whole.
type terminalWriter struct {
	w       io.Writer
	pending []byte
}

func newTerminalWriter(w io.Writer) *terminalWriter { return &terminalWriter{w: w} }

func (t *terminalWriter) Write(p []byte) (int, error) {
	buf := p
	if len(t.pending) > 0 {
		buf = append(t.pending, p...)
	}
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	t.pending = append(t.pending[:0:0], buf[cut:]...)
	if cut == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(t.w, words.Printable(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes the bytes held back by an unfinished character, escaped.
func (t *terminalWriter) flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	s := words.Printable(string(t.pending))
	t.pending = nil
	_, err := io.WriteString(t.w, s)
	return err
}

// jsonOut returns the writer under out's terminal escaping, for JSON, after
// flushing what out held back; any other writer is returned as it is.
func jsonOut(out io.Writer) io.Writer {
	if t, ok := out.(*terminalWriter); ok {
		_ = t.flush()
		return t.w
	}
	return out
}
