package clienttest

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
)

// Recorder is a provider's server for tests of what a client sends: it
// keeps each request's body and headers and answers with Reply (told
// whether the body asks for a stream).
type Recorder struct {
	Reply func(w http.ResponseWriter, stream bool)

	mu   sync.Mutex
	reqs []Recorded
}

// Recorded is one request as the server read it.
type Recorded struct {
	Body   string
	Header http.Header
}

// ServeHTTP records the request and replies.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs = append(r.reqs, Recorded{string(body), req.Header.Clone()})
	r.mu.Unlock()
	var p struct{ Stream bool }
	_ = json.Unmarshal(body, &p)
	r.Reply(w, p.Stream)
}

// Last is the latest request; none fails the test.
func (r *Recorder) Last(t *testing.T) Recorded {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	return r.reqs[len(r.reqs)-1]
}

// SameRequest fails the test unless ours sent the body sdks sent and every
// header either sent with the same value.
func SameRequest(t *testing.T, what string, ours, sdks Recorded) {
	t.Helper()
	if ours.Body != sdks.Body {
		t.Errorf("%s: body\n got %s\nwant %s", what, ours.Body, sdks.Body)
	}
	names := map[string]bool{}
	for h := range ours.Header {
		names[h] = true
	}
	for h := range sdks.Header {
		names[h] = true
	}
	for h := range names {
		if ours.Header.Get(h) != sdks.Header.Get(h) {
			t.Errorf("%s: header %s = %q, the SDK sends %q", what, h, ours.Header.Get(h), sdks.Header.Get(h))
		}
	}
}
