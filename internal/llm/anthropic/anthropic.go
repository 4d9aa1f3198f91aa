// Package anthropic is the llm.Client for the Anthropic Messages API, built
// on the official anthropic-sdk-go. It streams over SSE, supports tool use
// and marks the system prompt and tool definitions for prompt caching.
//
// The SDK's own retries and environment lookups are disabled: the retry
// decorator is the only retry layer and every setting (base URL, API key)
// is passed in explicitly, so tests are hermetic.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// DefaultBaseURL is the public API endpoint.
const DefaultBaseURL = "https://api.anthropic.com/"

// Options configures a Client.
type Options struct {
	// BaseURL is the API endpoint; empty means DefaultBaseURL.
	BaseURL string
	// APIKey is required.
	APIKey string
	// Model is used for requests that name none.
	Model string
	// MaxTokens is used for requests that set none; zero means
	// llm.DefaultMaxOutputTokens.
	MaxTokens int
	// IdleTimeout ends a stream that delivers no event for this long; zero
	// disables it.
	IdleTimeout time.Duration
	// HTTPClient carries the requests; nil means a new http.Client.
	HTTPClient *http.Client
}

// Client talks to the Anthropic Messages API. It is safe for concurrent use.
type Client struct {
	svc    sdk.MessageService
	api    *sdk.Client
	opts   Options
	tools  llm.ToolCache
	system *llm.WireCache // system prompts
	msgs   *llm.WireCache
}

var _ llm.Client = (*Client)(nil)

// New returns a Client. It reads no environment variables.
func New(o Options) (*Client, error) {
	if o.APIKey == "" {
		return nil, errors.New("creating anthropic client: no API key (set ANTHROPIC_API_KEY)")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = llm.DefaultMaxOutputTokens
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	// NewMessageService, unlike sdk.NewClient, does not read the environment.
	opts := []option.RequestOption{
		option.WithBaseURL(o.BaseURL),
		option.WithAPIKey(o.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	// A Client literal, like NewMessageService, reads no environment; its
	// Post streams a call whose events Stream decodes itself.
	return &Client{svc: sdk.NewMessageService(opts...), api: &sdk.Client{Options: opts}, opts: o, msgs: llm.NewWireCache(), system: llm.NewWireCache()}, nil
}

// Complete sends req without streaming.
func (c *Client) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, body, err := c.request(req)
	if err != nil {
		return nil, fmt.Errorf("building anthropic request: %w", err)
	}
	// An explicit timeout stops the SDK from refusing large max_tokens
	// without streaming (ctx still bounds the call). Taking the raw body and
	// decoding it here tells a malformed reply (ClassMalformed) apart from a
	// cut connection (ClassNetwork).
	var raw []byte
	_, err = c.svc.New(ctx, params, body, option.WithRequestTimeout(10*time.Minute), option.WithResponseBodyInto(&raw))
	if err != nil {
		return nil, classify(ctx, ctx, "calling anthropic", err)
	}
	var msg sdk.Message
	if !json.Valid(raw) {
		return nil, classify(ctx, ctx, "calling anthropic", &llm.Error{Class: llm.ClassMalformed, Message: "response body is not JSON"})
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, classify(ctx, ctx, "calling anthropic", &llm.Error{Class: llm.ClassMalformed, Message: "decoding response", Err: err})
	}
	resp := &llm.Response{Provider: llm.ProviderAnthropic, Model: msg.Model, Attempts: 1}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				resp.Message.Parts = append(resp.Message.Parts, llm.TextPart(b.Text))
			}
		case "tool_use":
			input, err := llm.ParseToolInput(b.Input)
			if err != nil {
				return nil, classify(ctx, ctx, "calling anthropic", err)
			}
			resp.Message.Parts = append(resp.Message.Parts, llm.ToolCallPart(llm.ToolCall{ID: b.ID, Name: b.Name, Input: input}))
		}
	}
	resp.Message.Role = llm.RoleAssistant
	resp.StopReason = stopReason(msg.StopReason)
	resp.Usage = llm.Usage{
		InputTokens:      msg.Usage.InputTokens,
		OutputTokens:     msg.Usage.OutputTokens,
		CacheWriteTokens: msg.Usage.CacheCreationInputTokens,
		CacheReadTokens:  msg.Usage.CacheReadInputTokens,
	}
	return resp, nil
}

// Stream sends req as a streaming call; see llm.Client for the contract.
func (c *Client) Stream(ctx context.Context, req *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	body, err := c.encode(req, true)
	if err != nil {
		return nil, fmt.Errorf("building anthropic request: %w", err)
	}
	sctx, watch := llm.WatchIdle(ctx, c.opts.IdleTimeout)
	defer watch.Stop()
	// As MessageService.NewStreaming does, but the events decode into
	// streamEvent rather than the SDK's event union.
	var raw *http.Response
	err = c.api.Post(sctx, "v1/messages", nil, &raw, option.WithRequestBody("application/json", body))
	stream := ssestream.NewStream[streamEvent](ssestream.NewDecoder(raw), err)
	defer stream.Close()

	var acc accumulator
	for stream.Next() {
		watch.Touch()
		ev := stream.Current()
		if err := acc.add(&ev, h); err != nil {
			return nil, classify(ctx, sctx, "streaming from anthropic", err)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, classify(ctx, sctx, "streaming from anthropic", err)
	}
	if !acc.stopped {
		return nil, classify(ctx, sctx, "streaming from anthropic", &llm.Error{Class: llm.ClassNetwork, Message: "stream ended before message_stop"})
	}
	resp := acc.response()
	if h != nil {
		for _, call := range resp.Message.ToolCalls() {
			h(llm.Event{Kind: llm.EventToolCall, ToolCall: &call})
		}
	}
	return resp, nil
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
		e.Provider = llm.ProviderAnthropic
		return fmt.Errorf("%s: %w", doing, &e)
	}
	e := &llm.Error{Provider: llm.ProviderAnthropic, Err: err}
	var apiErr *sdk.Error
	switch {
	case llm.Expired(sctx):
		e.Class = llm.ClassTimeout
		e.Message = "no event within the idle timeout"
	case errors.As(err, &apiErr):
		e.StatusCode = apiErr.StatusCode
		e.RequestID = apiErr.RequestID
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body)
		e.Message = body.Error.Message
		e.Class = llm.ClassifyStatus(apiErr.StatusCode, string(apiErr.Type()), e.Message)
		if apiErr.Response != nil {
			e.RetryAfter = llm.ParseRetryAfter(apiErr.Response.Header, time.Now())
		}
		if e.StatusCode == http.StatusOK {
			e.StatusCode = 0 // an error event inside a stream
		}
		e.Err = nil // its text only repeats the status, URL and body
	default:
		e.Class = llm.ClassifyTransport(err)
	}
	return fmt.Errorf("%s: %w", doing, e)
}

func stopReason(r sdk.StopReason) llm.StopReason {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonPauseTurn:
		return llm.StopEndTurn
	case sdk.StopReasonToolUse:
		return llm.StopToolUse
	case sdk.StopReasonMaxTokens:
		return llm.StopMaxTokens
	case sdk.StopReasonStopSequence:
		return llm.StopSequence
	case sdk.StopReasonRefusal:
		return llm.StopRefusal
	case sdk.StopReasonModelContextWindowExceeded:
		return llm.StopContextWindow
	}
	return llm.StopOther
}
