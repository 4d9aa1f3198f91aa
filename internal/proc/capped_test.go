package proc

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapped(t *testing.T) {
	t.Parallel()
	input := strings.Repeat("0123456789", 100) // 1000 bytes
	for _, max := range []int{1, 2, 10, 101, 999, 1000, 5000} {
		for _, chunk := range []int{1, 3, 7, 64, 1000} {
			c := newCapped(max)
			for i := 0; i < len(input); i += chunk {
				_, _ = c.Write([]byte(input[i:min(i+chunk, len(input))]))
			}
			got := c.String()
			if max >= len(input) {
				if got != input {
					t.Errorf("max %d chunk %d: got %q, want the whole input", max, chunk, got)
				}
				continue
			}
			head, tail := input[:max-max/2], input[len(input)-max/2:]
			want := head + "\n[... " + strconv.Itoa(len(input)-max) + " bytes of output dropped ...]\n" + tail
			if got != want {
				t.Errorf("max %d chunk %d:\n got %q\nwant %q", max, chunk, got, want)
			}
		}
	}
}

func TestCappedKeepsRunesWhole(t *testing.T) {
	t.Parallel()
	c := newCapped(9)
	_, _ = c.Write([]byte(strings.Repeat("é", 50))) // 2 bytes each
	got := c.String()
	if !utf8.ValidString(got) {
		t.Errorf("got invalid UTF-8 %q", got)
	}
	if want := "éé\n[... 92 bytes of output dropped ...]\néé"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
