package gitserve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

// git's pkt-line framing: four hex digits giving the length of the line
// including those four, then the data; "0000" is a flush.

// maxPktData is the largest payload a pkt-line carries.
const maxPktData = 65516

// maxCommands and maxCommandBytes bound the ref updates one push may carry.
const (
	maxCommands     = 10000
	maxCommandBytes = 4 << 20
)

// errFlush marks a flush packet.
var errFlush = errors.New("flush packet")

// readPkt reads one pkt-line from r; errFlush for a flush.
func readPkt(r *bufio.Reader) ([]byte, error) {
	return readPktRaw(r, nil)
}

// readPktRaw is readPkt, appending the bytes it read to *raw when raw is
// not nil.
func readPktRaw(r *bufio.Reader, raw *[]byte) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("reading a pkt-line length: %w", err)
	}
	if raw != nil {
		*raw = append(*raw, head[:]...)
	}
	n, err := strconv.ParseUint(string(head[:]), 16, 16)
	if err != nil {
		return nil, fmt.Errorf("pkt-line length %q is not hexadecimal", head[:])
	}
	switch {
	case n == 0:
		return nil, errFlush
	case n < 4 || n-4 > maxPktData:
		return nil, fmt.Errorf("pkt-line length %d is out of range", n)
	}
	data := make([]byte, n-4)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("reading a pkt-line of %d bytes: %w", n, err)
	}
	if raw != nil {
		*raw = append(*raw, data...)
	}
	return data, nil
}

// pkt frames data as one pkt-line.
func pkt(data string) []byte {
	return []byte(fmt.Sprintf("%04x%s", len(data)+4, data))
}

// flushPkt is the flush packet.
const flushPkt = "0000"

// refUpdate is one command of a push: set ref from old to new.
type refUpdate struct {
	Old, New, Ref string
}

// isZero reports whether oid is git's null object ID (a ref that does not
// exist yet, or one being deleted).
func isZero(oid string) bool { return strings.Trim(oid, "0") == "" }

// validOID reports whether s is a SHA-1 or SHA-256 object ID in hex.
func validOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// pushRequest is the command section of a receive-pack request.
type pushRequest struct {
	Updates []refUpdate
	Caps    map[string]bool
	// Head is every byte read from the body to parse the commands; the
	// request goes on to git as Head followed by the rest of the body.
	Head []byte
}

// parsePush reads the command section of a receive-pack request (shallow
// lines, then "<old> <new> <ref>" lines, the first with the client's
// capabilities after a NUL, then a flush) from r. A push certificate is
// refused: the server never offers one.
func parsePush(r *bufio.Reader) (*pushRequest, error) {
	req := &pushRequest{Caps: map[string]bool{}}
	for first := true; ; {
		data, err := readPktRaw(r, &req.Head)
		if errors.Is(err, errFlush) {
			return req, nil
		}
		if err != nil {
			return nil, err
		}
		if len(req.Head) > maxCommandBytes {
			return nil, fmt.Errorf("more than %d bytes of ref updates in one push", maxCommandBytes)
		}
		line := strings.TrimSuffix(string(data), "\n")
		if strings.HasPrefix(line, "shallow ") {
			continue
		}
		if strings.HasPrefix(line, "push-cert") {
			return nil, errors.New("signed pushes are not accepted")
		}
		if first {
			var caps string
			line, caps, _ = strings.Cut(line, "\x00")
			for _, c := range strings.Fields(caps) {
				name, _, _ := strings.Cut(c, "=")
				req.Caps[name] = true
			}
			first = false
		}
		parts := strings.SplitN(line, " ", 3)
		if len(parts) != 3 || !validOID(parts[0]) || !validOID(parts[1]) || parts[2] == "" {
			return nil, fmt.Errorf("malformed ref update %q", line)
		}
		if len(req.Updates) >= maxCommands {
			return nil, fmt.Errorf("more than %d ref updates in one push", maxCommands)
		}
		req.Updates = append(req.Updates, refUpdate{Old: parts[0], New: parts[1], Ref: parts[2]})
	}
}

// refusal is the report-status answer to a push refused before git saw
// it: "unpack ok", then an "ng <ref> <reason>" line per ref, wrapped in
// side band 1 when the client asked for a side band (with the reason on
// band 2 too, shown as "remote: ..."), so that git prints
// "! [remote rejected] <ref> (<reason>)".
func refusal(req *pushRequest, reasons map[string]string, summary string) []byte {
	var report bytes.Buffer
	report.Write(pkt("unpack ok\n"))
	for _, u := range req.Updates {
		report.Write(pkt("ng " + u.Ref + " " + oneLine(reasons[u.Ref]) + "\n"))
	}
	report.WriteString(flushPkt)
	if !req.Caps["side-band-64k"] && !req.Caps["side-band"] {
		return report.Bytes()
	}
	max := maxPktData - 1
	if !req.Caps["side-band-64k"] {
		max = 999 - 4 - 1
	}
	var out bytes.Buffer
	out.Write(pkt("\x02" + oneLine(summary) + "\n"))
	b := report.Bytes()
	for len(b) > 0 {
		n := min(len(b), max)
		out.Write(pkt("\x01" + string(b[:n])))
		b = b[n:]
	}
	out.WriteString(flushPkt)
	return out.Bytes()
}

// advertError is an info/refs answer git shows as "fatal: remote error:
// <msg>".
func advertError(msg string) []byte {
	return pkt("ERR " + oneLine(msg) + "\n")
}

// oneLine keeps msg on one line of printable text that fits a pkt-line.
func oneLine(msg string) string {
	return words.Clip(words.OneLine(words.Printable(msg)), 900)
}
