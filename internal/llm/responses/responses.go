// Package responses is the llm.Client for the OpenAI Responses API (POST
// /v1/responses), the API Codex speaks and OpenAI's newest models are
// served on. It is hand-written over net/http and package sse: requests
// carry the whole conversation (store is false, no server-side state),
// replies stream as typed events (output_text deltas, function call
// arguments, response.completed with usage) and every event is checked
// before it is believed.
//
// It reads no environment variables and makes no retries of its own: the
// retry decorator is the only retry layer.
package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/sse"
)

// DefaultBaseURL is the public API endpoint.
const DefaultBaseURL = "https://api.openai.com/v1"

const (
	// maxEvent bounds one streamed event; a completed response repeats the
	// whole output, so it is generous.
	maxEvent = 16 << 20
	// maxBody bounds a non-streaming response or an error body.
	maxBody = 32 << 20
)

// Options configures a Client.
type Options struct {
	// BaseURL is the endpoint including its version path, e.g.
	// "http://127.0.0.1:8089/v1"; empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; it may be empty for local servers.
	APIKey string
	// Model is used for requests that name none.
	Model string
	// MaxTokens is used for requests that set none; zero means
	// llm.DefaultMaxOutputTokens. It is sent as max_output_tokens.
	MaxTokens int
	// IdleTimeout ends a stream that delivers no event for this long; zero
	// disables it.
	IdleTimeout time.Duration
	// HTTPClient carries the requests; nil means a new http.Client.
	HTTPClient *http.Client
}

// Client talks to a Responses API endpoint. It is safe for concurrent use.
type Client struct {
	opts Options
	hc   *http.Client
	url  string
}

var _ llm.Client = (*Client)(nil)

// New returns a Client. It reads no environment variables.
func New(o Options) (*Client, error) {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
		if o.APIKey == "" {
			return nil, errors.New("creating openai responses client: no API key (set OPENAI_API_KEY)")
		}
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = llm.DefaultMaxOutputTokens
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{opts: o, hc: hc, url: strings.TrimSuffix(o.BaseURL, "/") + "/responses"}, nil
}

// Complete sends req without streaming.
func (c *Client) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	body, err := c.body(req, false)
	if err != nil {
		return nil, fmt.Errorf("building responses request: %w", err)
	}
	resp, err := c.post(ctx, body, "application/json")
	if err != nil {
		return nil, classify(ctx, ctx, "calling openai responses", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err == nil && len(raw) > maxBody {
		err = malformed("response body larger than %d bytes", maxBody)
	}
	if err != nil {
		return nil, classify(ctx, ctx, "reading openai responses reply", err)
	}
	var wr wireResponse
	if err := json.Unmarshal(raw, &wr); err != nil {
		return nil, classify(ctx, ctx, "reading openai responses reply", &llm.Error{Class: llm.ClassMalformed, Message: "decoding response", Err: err})
	}
	out, err := wr.toResponse()
	if err != nil {
		return nil, classify(ctx, ctx, "reading openai responses reply", err)
	}
	return out, nil
}

// Stream sends req as a streaming call; see llm.Client for the contract.
func (c *Client) Stream(ctx context.Context, req *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	body, err := c.body(req, true)
	if err != nil {
		return nil, fmt.Errorf("building responses request: %w", err)
	}
	sctx, watch := llm.WatchIdle(ctx, c.opts.IdleTimeout)
	defer watch.Stop()
	resp, err := c.post(sctx, body, "text/event-stream")
	if err != nil {
		return nil, classify(ctx, sctx, "streaming from openai responses", err)
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body, maxEvent)
	var acc accumulator
	for !acc.finished {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, classify(ctx, sctx, "streaming from openai responses", err)
		}
		watch.Touch()
		if err := acc.add(ev, h); err != nil {
			return nil, classify(ctx, sctx, "streaming from openai responses", err)
		}
	}
	out, err := acc.response()
	if err != nil {
		return nil, classify(ctx, sctx, "streaming from openai responses", err)
	}
	if h != nil {
		for _, call := range out.Message.ToolCalls() {
			h(llm.Event{Kind: llm.EventToolCall, ToolCall: &call})
		}
	}
	return out, nil
}

// post sends body and returns a 2xx response, or an *llm.Error built from
// the error response.
func (c *Client) post(ctx context.Context, body []byte, accept string) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building HTTP request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", accept)
	if c.opts.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var w struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &w)
	errType, _ := w.Error.Code.(string)
	if errType == "" {
		errType = w.Error.Type
	}
	msg := w.Error.Message
	if msg == "" {
		msg = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
	}
	return nil, &llm.Error{Class: llm.ClassifyStatus(resp.StatusCode, errType, msg), StatusCode: resp.StatusCode,
		Message: msg, RetryAfter: llm.ParseRetryAfter(resp.Header, time.Now()), RequestID: resp.Header.Get("X-Request-Id")}
}

func malformed(format string, args ...any) error {
	return &llm.Error{Class: llm.ClassMalformed, Message: fmt.Sprintf(format, args...)}
}

// classify turns err into an *llm.Error (or a context error when the
// caller's ctx ended), prefixed with what was being done.
func classify(ctx, sctx context.Context, doing string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", doing, context.Cause(ctx))
	}
	var le *llm.Error
	if errors.As(err, &le) {
		e := *le
		e.Provider = llm.ProviderOpenAI
		return fmt.Errorf("%s: %w", doing, &e)
	}
	e := &llm.Error{Provider: llm.ProviderOpenAI, Err: err, Class: llm.ClassifyTransport(err)}
	if llm.Expired(sctx) {
		e.Class, e.Message = llm.ClassTimeout, "no event within the idle timeout"
	}
	return fmt.Errorf("%s: %w", doing, e)
}
