package sse

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readAll(s string, max int) ([]Event, error) {
	r := NewReader(strings.NewReader(s), max)
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return evs, nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	in := ": keep-alive\n\nevent: response.created\ndata: {\"a\":1}\n\n" +
		"data: {\"b\":\r\ndata: 2}\r\n\r\n" +
		"event: ping\n\n" + // no data: not dispatched
		"id: 7\nretry: 10\ndata:tight\n\n"
	got, err := readAll(in, 1024)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{{Name: "response.created", Data: []byte(`{"a":1}`)}, {Data: []byte("{\"b\":\n2}")}, {Data: []byte("tight")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestCutInsideEvent(t *testing.T) {
	t.Parallel()
	got, err := readAll("data: {\"a\":1}\n\ndata: {\"half", 1024)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 1 {
		t.Fatalf("got %d events, err %v; want 1 and ErrUnexpectedEOF", len(got), err)
	}
}

func TestTooLong(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"data: " + strings.Repeat("x", 100) + "\n\n",
		strings.Repeat("data: xxxxxxxxxx\n", 20) + "\n",
	} {
		if _, err := readAll(in, 64); !errors.Is(err, bufio.ErrTooLong) {
			t.Errorf("oversized event: err %v, want ErrTooLong", err)
		}
	}
}

// FuzzReader: any input ends in events, EOF, ErrUnexpectedEOF or
// ErrTooLong, never a panic, and no event exceeds the limit.
func FuzzReader(f *testing.F) {
	f.Add("event: a\ndata: b\n\n")
	f.Add("data: x\r\n\r\n:c\n\ndata")
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := readAll(in, 256)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, bufio.ErrTooLong) {
			t.Fatalf("unexpected error %v", err)
		}
		for _, ev := range evs {
			if len(ev.Data) > 256 {
				t.Fatalf("event of %d bytes", len(ev.Data))
			}
		}
	})
}
