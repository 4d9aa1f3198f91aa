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
	"github.com/neuraphage/neuraphage-go/internal/llm/httpapi"
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
	opts   Options
	tools  llm.ToolCache
	msgs   *llm.WireCache
	system *llm.WireCache // system prompts
	hc     *http.Client
	base   string
	// calls numbers the calls made, for tool-call ids when a reply has no
	// responseId.
	calls atomic.Uint64
}

var _ llm.Client = (*Client)(nil)

// New returns a Client. It reads no environment variables.
func New(o Options) (*Client, error) {
	s, err := httpapi.New(httpapi.Setup{BaseURL: o.BaseURL, DefaultURL: DefaultBaseURL, APIKey: o.APIKey, KeyHint: "GEMINI_API_KEY",
		MaxTokens: o.MaxTokens, HTTPClient: o.HTTPClient, Name: "gemini client"})
	if err != nil {
		return nil, err
	}
	o.BaseURL, o.MaxTokens = s.BaseURL, s.MaxTokens
	return &Client{opts: o, msgs: llm.NewWireCache(), system: llm.NewWireCache(), hc: s.HTTPClient, base: strings.TrimSuffix(o.BaseURL, "/") + "/" + APIVersion + "/models/"}, nil
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
	raw, err := httpapi.ReadBody(resp.Body, maxBody)
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
	httpapi.EmitToolCalls(out, h)
	return out, nil
}

func (c *Client) accumulator(model string) accumulator {
	return accumulator{model: model, callSeq: c.calls.Add(1)}
}

func (c *Client) post(ctx context.Context, u string, body []byte) (*http.Response, error) {
	header := http.Header{}
	if c.opts.APIKey != "" {
		header.Set("X-Goog-Api-Key", c.opts.APIKey)
	}
	return httpapi.Post(ctx, c.hc, u, body, header, decodeError)
}

// decodeError is the *llm.Error of an error response: the API's error
// object, else the start of the body.
func decodeError(resp *http.Response, raw []byte) *llm.Error {
	var w struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(raw, &w) != nil || w.Error == nil {
		w.Error = &wireError{Message: httpapi.Snippet(raw)}
	}
	e := w.Error.classify(resp.StatusCode)
	if e.RetryAfter == 0 {
		e.RetryAfter = llm.ParseRetryAfter(resp.Header, time.Now())
	}
	return e
}

func malformed(format string, args ...any) error { return httpapi.Malformed(format, args...) }

// classify turns err into an *llm.Error (or a context error when the
// caller's ctx ended), prefixed with what was being done.
func classify(ctx, sctx context.Context, doing string, err error) error {
	return httpapi.Classify(ctx, sctx, llm.ProviderGemini, "no chunk", doing, err)
}
