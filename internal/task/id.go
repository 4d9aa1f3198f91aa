package task

import (
	"fmt"
	"io"
	"strings"
)

// ID identifies a task: "t-" and five characters from a 32-letter alphabet that
// avoids look-alikes (no i, l, o, u), e.g. "t-4k2x9". About 33 million values: the
// store retries on the rare collision.
type ID string

// idAlphabet is Crockford's base32 in lower case.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// IDPrefix starts every task ID.
const IDPrefix = "t-"

const idLen = 5

// NewID draws a fresh ID from r (crypto/rand.Reader in production).
func NewID(r io.Reader) (ID, error) {
	var b [idLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("drawing a task id: %w", err)
	}
	out := make([]byte, 0, len(IDPrefix)+idLen)
	out = append(out, IDPrefix...)
	for _, c := range b {
		out = append(out, idAlphabet[c&31])
	}
	return ID(out), nil
}

// NormalizeRef turns what a user typed to name a task into the form IDs take:
// lower case, with the "t-" prefix added when missing. It does not check that a
// task exists; ref may be a unique prefix of an ID.
func NormalizeRef(ref string) (string, error) {
	r := strings.ToLower(strings.TrimSpace(ref))
	if r == "" {
		return "", &InvalidError{Field: "task id", Msg: "is empty"}
	}
	if !strings.HasPrefix(r, IDPrefix) {
		r = IDPrefix + r
	}
	body := r[len(IDPrefix):]
	if body == "" || len(body) > idLen+8 {
		return "", &InvalidError{Field: "task id", Msg: fmt.Sprintf("%q is not a task id (like t-4k2x9)", ref)}
	}
	for _, c := range body {
		if !strings.ContainsRune(idAlphabet, c) {
			return "", &InvalidError{Field: "task id", Msg: fmt.Sprintf("%q is not a task id (like t-4k2x9)", ref)}
		}
	}
	return r, nil
}
