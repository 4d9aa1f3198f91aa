package client

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	goodTask = `{"id":"t-aaaaa","description":"a \"quoted\" ]} line\n","priority":0,"status":"paused","usage":{},"created_at":"x","updated_at":"x"}`
	goodList = "{\"tasks\":[\n" + goodTask + ",\n" + goodTask + "\n]}\n"
)

// serveList answers every request on a fresh socket with body, and returns
// a client for it.
func serveList(t *testing.T, contentType, body string) *Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "npc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(body))
	})}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	c := New(sock)
	t.Cleanup(func() { c.Close(); srv.Close(); <-done })
	return c
}

func TestWriteListJSONPassesGoodListingsThrough(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ body, want string }{
		"tasks":           {goodList, goodList},
		"empty":           {"{\"tasks\":[\n]}\n", "{\"tasks\":[\n]}\n"},
		"next":            {"{\"tasks\":[\n" + goodTask + "\n],\"next\":\"t-aaaaa\"}\n", "{\"tasks\":[\n" + goodTask + "\n],\"next\":\"t-aaaaa\"}\n"},
		"no last newline": {strings.TrimSuffix(goodList, "\n"), goodList},
		"long":            {"{\"tasks\":[\n" + strings.Repeat(goodTask+",\n", 5000) + goodTask + "\n]}\n", ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			if err := serveList(t, "application/json", tc.body).WriteListJSON(context.Background(), ListQuery{All: true}, &out); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.body
			}
			if out.String() != want {
				t.Errorf("wrote %d bytes %.200q, want %d bytes %.200q", out.Len(), out.String(), len(want), want)
			}
		})
	}
}

func TestWriteListJSONRefusesBadFraming(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ ctype, body, err string }{
		"html page":         {"text/html", "<html>proxy error</html>", "not a JSON listing"},
		"other json":        {"application/json", `{"error":{"code":"x"}}` + "\n", "does not start with"},
		"head only":         {"application/json", "{\"tasks\":[\n", "before the listing's end"},
		"cut mid task":      {"application/json", "{\"tasks\":[\n" + goodTask[:40], "not a task"},
		"cut after a comma": {"application/json", "{\"tasks\":[\n" + goodTask + ",\n", "before the listing's end"},
		"trailing comma":    {"application/json", "{\"tasks\":[\n" + goodTask + ",\n]}\n", "after a comma"},
		"missing comma":     {"application/json", "{\"tasks\":[\n" + goodTask + "\n" + goodTask + "\n]}\n", "without a comma"},
		"not a task":        {"application/json", "{\"tasks\":[\n[1,2]\n]}\n", "not a task"},
		"bad end":           {"application/json", "{\"tasks\":[\n]]\n", "not the listing's end"},
		"bad next":          {"application/json", "{\"tasks\":[\n],\"next\":\"a\"b\"}\n", "not the listing's end"},
		"empty next":        {"application/json", "{\"tasks\":[\n],\"next\":\"\"}\n", "not the listing's end"},
		"after the end":     {"application/json", goodList + "{\"tasks\":[\n", "follows the listing's end"},
		"line too long":     {"application/json", "{\"tasks\":[\n{\"id\":\"" + strings.Repeat("x", maxListLine) + "\"}\n]}\n", "longer than"},
		"indented":          {"application/json", "{\n  \"tasks\": []\n}\n", "does not start with"},
		"one line document": {"application/json", `{"tasks":[]}`, "does not start with"},
		"nothing":           {"application/json", "", "before the listing's end"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			err := serveList(t, tc.ctype, tc.body).WriteListJSON(context.Background(), ListQuery{All: true}, &out)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one saying %q (wrote %.200q)", err, tc.err, out.String())
			}
		})
	}
}

// TestListFrameAcrossChunks feeds a listing in pieces of every size from 1
// byte: a line cut between reads is judged whole.
func TestListFrameAcrossChunks(t *testing.T) {
	t.Parallel()
	bad := "{\"tasks\":[\n" + goodTask + "\n" + goodTask + "\n]}\n" // no comma
	for size := 1; size <= len(goodList); size++ {
		for _, tc := range []struct {
			in string
			ok bool
		}{{goodList, true}, {bad, false}} {
			var f listFrame
			var err error
			for i := 0; i < len(tc.in) && err == nil; i += size {
				err = f.check([]byte(tc.in[i:min(i+size, len(tc.in))]))
			}
			if err == nil {
				_, err = f.end()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("pieces of %d bytes of %q: error %v", size, tc.in, err)
			}
		}
	}
}

// TestWriteListJSONReportsACutAnswer: an answer shorter than its declared
// length is an error even when what arrived looks whole.
func TestWriteListJSONReportsACutAnswer(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "npc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(goodList)+100))
		_, _ = w.Write([]byte(goodList))
	}), ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	c := New(sock)
	t.Cleanup(func() { c.Close(); srv.Close(); <-done })
	var out strings.Builder
	err = c.WriteListJSON(context.Background(), ListQuery{All: true}, &out)
	if err == nil || !strings.Contains(err.Error(), "reading the answer") {
		t.Fatalf("error %v, want one reading the answer (wrote %q)", err, out.String())
	}
}
