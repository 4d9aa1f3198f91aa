package proc

import (
	"fmt"
	"unicode/utf8"
)

// capped keeps the first and the last bytes written to it, up to max in all,
// and counts the rest. It is written by one goroutine and read after that
// goroutine is done.
type capped struct {
	max   int
	head  []byte
	tail  []byte // ring buffer once full
	start int    // index of the oldest byte in tail once full
	total int64
}

func newCapped(max int) *capped {
	return &capped{max: max}
}

func (c *capped) headCap() int { return c.max - c.max/2 }
func (c *capped) tailCap() int { return c.max / 2 }

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.headCap() - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tc := c.tailCap()
	if tc == 0 || len(p) == 0 {
		return n, nil
	}
	if len(p) >= tc {
		c.tail = append(c.tail[:0], p[len(p)-tc:]...)
		c.start = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(c.tail) < tc {
			k := min(tc-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(c.tail[c.start:], p)
		p = p[k:]
		c.start = (c.start + k) % tc
	}
	return n, nil
}

// String returns everything written when it fits, else the head, a line
// saying how many bytes were dropped, and the tail. The cut points are moved
// to rune boundaries so the result stays valid UTF-8 where the input was.
func (c *capped) String() string {
	tail := make([]byte, 0, len(c.tail))
	tail = append(tail, c.tail[c.start:]...)
	tail = append(tail, c.tail[:c.start]...)
	kept := int64(len(c.head) + len(tail))
	if kept == c.total {
		return string(c.head) + string(tail)
	}
	head := trimIncompleteEnd(c.head)
	tail = trimIncompleteStart(tail)
	dropped := c.total - int64(len(head)) - int64(len(tail))
	return fmt.Sprintf("%s\n[... %d bytes of output dropped ...]\n%s", head, dropped, tail)
}

// trimIncompleteEnd drops a multi-byte rune cut off at the end of b.
func trimIncompleteEnd(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// trimIncompleteStart drops the continuation bytes of a rune cut off at the
// start of b.
func trimIncompleteStart(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
