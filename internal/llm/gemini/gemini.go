// Package gemini is the llm.Client for the Gemini API's generateContent
// and streamGenerateContent (alt=sse), the API Gemini CLI speaks. It is
// hand-written over net/http and package sse; every chunk is checked
// before it is believed.
//
// The Gemini API names tool results by function name and gives calls no
// ids of its own; the client makes ids for calls that lack one and sends
// them back with the results, and finds each result's function name from
// the call it answers.
//
// It reads no environment variables and makes no retries of its own: the
// retry decorator is the only retry layer.
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/sse"
)

// DefaultBaseURL is the public API endpoint (the form of
// GOOGLE_GEMINI_BASE_URL: no version path).
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// APIVersion is the version path requests go to.
const APIVersion = "v1beta"

const (
	maxEvent = 16 << 20
	maxBody  = 32 << 20
)

// Options configures a Client.
type Options struct {
	// BaseURL is the endpoint without its version path; empty means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-goog-api-key; required for the public API.
	APIKey string
	// Model is used for requests that name none.
	Model string
	// MaxTokens is used for requests that set none; zero means
	// llm.DefaultMaxOutputTokens. It is sent as maxOutputTokens.
	MaxTokens int
	// IdleTimeout ends a stream that delivers no chunk for this long; zero
	// disables it.
	IdleTimeout time.Duration
	// HTTPClient carries the requests; nil means a new http.Client.
	HTTPClient *http.Client
}

// Client talks to a Gemini API endpoint. It is safe for concurrent use.
type Client struct {
	opts Options
	hc   *http.Client
	base string
	// calls numbers the calls made, for tool-call ids when a reply has no
	// responseId.
	calls atomic.Uint64
}

var _ llm.Client = (*Client)(nil)

// New returns a Client. It reads no environment variables.
func New(o Options) (*Client, error) {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
		if o.APIKey == "" {
			return nil, errors.New("creating gemini client: no API key (set GEMINI_API_KEY)")
		}
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = llm.DefaultMaxOutputTokens
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{opts: o, hc: hc, base: strings.TrimSuffix(o.BaseURL, "/") + "/" + APIVersion + "/models/"}, nil
}

func (c *Client) model(req *llm.Request) (string, error) {
	m := c.opts.Model
	if req.Model != "" {
		m = req.Model
	}
	if m == "" {
		return "", &llm.Error{Class: llm.ClassBadRequest, Provider: llm.ProviderGemini, Message: "request names no model and the client has no default"}
	}
	return m, nil
}

// Complete sends req to generateContent.
func (c *Client) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	model, err := c.model(req)
	if err != nil {
		return nil, err
	}
	body, err := c.body(req)
	if err != nil {
		return nil, fmt.Errorf("building gemini request: %w", err)
	}
	resp, err := c.post(ctx, c.base+url.PathEscape(model)+":generateContent", body)
	if err != nil {
		return nil, classify(ctx, ctx, "calling gemini", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err == nil && len(raw) > maxBody {
		err = malformed("response body larger than %d bytes", maxBody)
	}
	if err != nil {
		return nil, classify(ctx, ctx, "reading gemini reply", err)
	}
	acc := c.accumulator(model)
	if err := acc.add(raw, nil); err != nil {
		return nil, classify(ctx, ctx, "reading gemini reply", err)
	}
	out, err := acc.response()
	if err != nil {
		return nil, classify(ctx, ctx, "reading gemini reply", err)
	}
	return out, nil
}

// Stream sends req to streamGenerateContent; see llm.Client for the contract.
func (c *Client) Stream(ctx context.Context, req *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	model, err := c.model(req)
	if err != nil {
		return nil, err
	}
	body, err := c.body(req)
	if err != nil {
		return nil, fmt.Errorf("building gemini request: %w", err)
	}
	sctx, watch := llm.WatchIdle(ctx, c.opts.IdleTimeout)
	defer watch.Stop()
	resp, err := c.post(sctx, c.base+url.PathEscape(model)+":streamGenerateContent?alt=sse", body)
	if err != nil {
		return nil, classify(ctx, sctx, "streaming from gemini", err)
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body, maxEvent)
	acc := c.accumulator(model)
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, classify(ctx, sctx, "streaming from gemini", err)
		}
		watch.Touch()
		if err := acc.add(ev.Data, h); err != nil {
			return nil, classify(ctx, sctx, "streaming from gemini", err)
		}
	}
	out, err := acc.response()
	if err != nil {
		return nil, classify(ctx, sctx, "streaming from gemini", err)
	}
	if h != nil {
		for _, call := range out.Message.ToolCalls() {
			h(llm.Event{Kind: llm.EventToolCall, ToolCall: &call})
		}
	}
	return out, nil
}

func (c *Client) accumulator(model string) accumulator {
	return accumulator{model: model, callSeq: c.calls.Add(1)}
}

func (c *Client) post(ctx context.Context, u string, body []byte) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building HTTP request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.opts.APIKey != "" {
		hreq.Header.Set("X-Goog-Api-Key", c.opts.APIKey)
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
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(raw, &w) != nil || w.Error == nil {
		w.Error = &wireError{Message: strings.TrimSpace(string(raw[:min(len(raw), 200)]))}
	}
	e := w.Error.classify(resp.StatusCode)
	if e.RetryAfter == 0 {
		e.RetryAfter = llm.ParseRetryAfter(resp.Header, time.Now())
	}
	return nil, e
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
		e.Provider = llm.ProviderGemini
		return fmt.Errorf("%s: %w", doing, &e)
	}
	e := &llm.Error{Provider: llm.ProviderGemini, Err: err, Class: llm.ClassifyTransport(err)}
	if llm.Expired(sctx) {
		e.Class, e.Message = llm.ClassTimeout, "no chunk within the idle timeout"
	}
	return fmt.Errorf("%s: %w", doing, e)
}
