// Package httpapi is what the provider clients written over net/http
// (package responses, package gemini) share: their set-up (New), the POST
// whose error response becomes an *llm.Error (Post), bounded bodies
// (ReadBody), the tool calls a stream ends with (EmitToolCalls), and the
// classification of every failure (Classify). It makes no retries: the
// retry decorator is the only retry layer.
package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// Setup is what every client's options share.
type Setup struct {
	// BaseURL is the endpoint; "" means DefaultURL, which needs a key.
	BaseURL, DefaultURL string
	// APIKey is the key the client sends.
	APIKey string
	// KeyHint says which variable holds the key ("OPENAI_API_KEY").
	KeyHint string
	// MaxTokens is the default output bound; zero means
	// llm.DefaultMaxOutputTokens.
	MaxTokens int
	// HTTPClient carries the requests; nil means a new http.Client.
	HTTPClient *http.Client
	// Name names the client in errors ("gemini client").
	Name string
}

// New checks s and fills its defaults: the endpoint, the output bound, the
// HTTP client. The public endpoint needs a key.
func New(s Setup) (Setup, error) {
	if s.BaseURL == "" {
		s.BaseURL = s.DefaultURL
		if s.APIKey == "" {
			return s, fmt.Errorf("creating %s: no API key (set %s)", s.Name, s.KeyHint)
		}
	}
	if s.MaxTokens <= 0 {
		s.MaxTokens = llm.DefaultMaxOutputTokens
	}
	if s.HTTPClient == nil {
		s.HTTPClient = &http.Client{}
	}
	return s, nil
}

// maxError bounds the error response read.
const maxError = 1 << 20

// Post sends body (JSON) to url with header and returns a 2xx response for
// the caller to read and close. Any other status is read (at most 1 MiB),
// closed and returned as decode makes it of the response and its body.
func Post(ctx context.Context, hc *http.Client, url string, body []byte, header http.Header, decode func(*http.Response, []byte) *llm.Error) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building HTTP request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		hreq.Header[k] = v
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxError))
	return nil, decode(resp, raw)
}

// Snippet is the start of an error body that did not decode, as its
// message.
func Snippet(raw []byte) string { return strings.TrimSpace(string(raw[:min(len(raw), 200)])) }

// ReadBody reads a response body of at most max bytes; a longer one is
// malformed.
func ReadBody(r io.Reader, max int) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err == nil && len(raw) > max {
		err = Malformed("response body larger than %d bytes", max)
	}
	return raw, err
}

// Malformed is a reply that does not follow the API.
func Malformed(format string, args ...any) error {
	return &llm.Error{Class: llm.ClassMalformed, Message: fmt.Sprintf(format, args...)}
}

// EmitToolCalls hands the tool calls of a streamed reply to h (nil: none).
func EmitToolCalls(out *llm.Response, h func(llm.Event)) {
	if h == nil {
		return
	}
	for _, call := range out.Message.ToolCalls() {
		h(llm.Event{Kind: llm.EventToolCall, ToolCall: &call})
	}
}

// Classify turns err into an *llm.Error of provider (or a context error
// when the caller's ctx ended), prefixed with what was being done. sctx is
// the stream's context (llm.WatchIdle): when it expired, the stream was
// idle, and idle says what did not come ("no event").
func Classify(ctx, sctx context.Context, provider, idle, doing string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", doing, context.Cause(ctx))
	}
	var le *llm.Error
	if errors.As(err, &le) {
		e := *le
		e.Provider = provider
		return fmt.Errorf("%s: %w", doing, &e)
	}
	e := &llm.Error{Provider: provider, Err: err, Class: llm.ClassifyTransport(err)}
	if llm.Expired(sctx) {
		e.Class, e.Message = llm.ClassTimeout, idle+" within the idle timeout"
	}
	return fmt.Errorf("%s: %w", doing, e)
}
