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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/httpapi"
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
	opts   Options
	tools  llm.ToolCache
	msgs   *llm.WireCache
	system *llm.WireCache // system prompts
	hc     *http.Client
	url    string
}

var _ llm.Client = (*Client)(nil)

// New returns a Client. It reads no environment variables.
func New(o Options) (*Client, error) {
	s, err := httpapi.New(httpapi.Setup{BaseURL: o.BaseURL, DefaultURL: DefaultBaseURL, APIKey: o.APIKey, KeyHint: "OPENAI_API_KEY",
		MaxTokens: o.MaxTokens, HTTPClient: o.HTTPClient, Name: "openai responses client"})
	if err != nil {
		return nil, err
	}
	o.BaseURL, o.MaxTokens = s.BaseURL, s.MaxTokens
	return &Client{opts: o, msgs: llm.NewWireCache(), system: llm.NewWireCache(), hc: s.HTTPClient, url: strings.TrimSuffix(o.BaseURL, "/") + "/responses"}, nil
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
	raw, err := httpapi.ReadBody(resp.Body, maxBody)
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
	httpapi.EmitToolCalls(out, h)
	return out, nil
}

// post sends body and returns a 2xx response, or an *llm.Error built from
// the error response.
func (c *Client) post(ctx context.Context, body []byte, accept string) (*http.Response, error) {
	header := http.Header{}
	header.Set("Accept", accept)
	if c.opts.APIKey != "" {
		header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	return httpapi.Post(ctx, c.hc, c.url, body, header, decodeError)
}

// decodeError is the *llm.Error of an error response: the API's error
// object, else the start of the body.
func decodeError(resp *http.Response, raw []byte) *llm.Error {
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
		msg = httpapi.Snippet(raw)
	}
	return &llm.Error{Class: llm.ClassifyStatus(resp.StatusCode, errType, msg), StatusCode: resp.StatusCode,
		Message: msg, RetryAfter: llm.ParseRetryAfter(resp.Header, time.Now()), RequestID: resp.Header.Get("X-Request-Id")}
}

func malformed(format string, args ...any) error { return httpapi.Malformed(format, args...) }

// classify turns err into an *llm.Error (or a context error when the
// caller's ctx ended), prefixed with what was being done.
func classify(ctx, sctx context.Context, doing string, err error) error {
	return httpapi.Classify(ctx, sctx, llm.ProviderOpenAI, "no event", doing, err)
}
