// Package openai is the llm.Client for OpenAI-compatible Chat Completions
// endpoints (OpenAI, Ollama, vLLM, LM Studio, OpenRouter), built on the
// official openai-go v3 SDK. It streams with tool calls and asks for usage
// in the stream (stream_options.include_usage).
//
// The SDK's own retries and environment lookups are disabled: the retry
// decorator is the only retry layer and every setting is passed in
// explicitly, so tests are hermetic.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// DefaultBaseURL is the public API endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Options configures a Client.
type Options struct {
	// BaseURL is the endpoint including its version path, e.g.
	// "http://localhost:11434/v1" for Ollama; empty means DefaultBaseURL.
	BaseURL string
	// APIKey may be empty for local servers that need none.
	APIKey string
	// Model is used for requests that name none.
	Model string
	// MaxTokens is used for requests that set none; zero means
	// llm.DefaultMaxOutputTokens. It is sent as max_completion_tokens.
	MaxTokens int
	// IdleTimeout ends a stream that delivers no chunk for this long; zero
	// disables it.
	IdleTimeout time.Duration
	// HTTPClient carries the requests; nil means a new http.Client.
	HTTPClient *http.Client
}

// Client talks to a Chat Completions endpoint. It is safe for concurrent use.
type Client struct {
	svc    oa.ChatCompletionService
	opts   Options
	tools  llm.ToolCache
	msgs   *llm.WireCache
	system *llm.WireCache // system prompts
}

var _ llm.Client = (*Client)(nil)

// New returns a Client. It reads no environment variables.
func New(o Options) (*Client, error) {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
		if o.APIKey == "" {
			return nil, errors.New("creating openai client: no API key (set OPENAI_API_KEY)")
		}
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = llm.DefaultMaxOutputTokens
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(o.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	}
	// NewChatCompletionService, unlike oa.NewClient, does not read the
	// environment.
	return &Client{svc: oa.NewChatCompletionService(opts...), opts: o, msgs: llm.NewWireCache(), system: llm.NewWireCache()}, nil
}

// Complete sends req without streaming.
func (c *Client) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, body, err := c.request(req, false)
	if err != nil {
		return nil, fmt.Errorf("building openai request: %w", err)
	}
	// Taking the raw body and decoding it here tells a malformed reply
	// (ClassMalformed) apart from a cut connection (ClassNetwork).
	var raw []byte
	_, err = c.svc.New(ctx, params, body, option.WithResponseBodyInto(&raw))
	if err != nil {
		return nil, classify(ctx, ctx, "calling openai", err)
	}
	var cc oa.ChatCompletion
	if !json.Valid(raw) {
		return nil, classify(ctx, ctx, "calling openai", malformed("response body is not JSON"))
	}
	if err := json.Unmarshal(raw, &cc); err != nil {
		return nil, classify(ctx, ctx, "calling openai", &llm.Error{Class: llm.ClassMalformed, Message: "decoding response", Err: err})
	}
	if len(cc.Choices) == 0 {
		return nil, classify(ctx, ctx, "calling openai", malformed("response has no choices"))
	}
	ch := cc.Choices[0]
	resp := &llm.Response{Provider: llm.ProviderOpenAI, Model: cc.Model, Attempts: 1, StopReason: finishReason(ch.FinishReason)}
	resp.Message.Role = llm.RoleAssistant
	if ch.Message.Content != "" {
		resp.Message.Parts = append(resp.Message.Parts, llm.TextPart(ch.Message.Content))
	}
	for _, tc := range ch.Message.ToolCalls {
		input, err := llm.ParseToolInput([]byte(tc.Function.Arguments))
		if err != nil {
			return nil, classify(ctx, ctx, "calling openai", err)
		}
		resp.Message.Parts = append(resp.Message.Parts, llm.ToolCallPart(llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Input: input}))
	}
	resp.StopReason = stopWithCalls(resp.StopReason, len(ch.Message.ToolCalls))
	resp.Usage = usage(cc.Usage)
	return resp, nil
}

// Stream sends req as a streaming call; see llm.Client for the contract.
func (c *Client) Stream(ctx context.Context, req *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	params, body, err := c.request(req, true)
	if err != nil {
		return nil, fmt.Errorf("building openai request: %w", err)
	}
	sctx, watch := llm.WatchIdle(ctx, c.opts.IdleTimeout)
	defer watch.Stop()
	stream := c.svc.NewStreaming(sctx, params, body)
	defer stream.Close()

	acc := accumulator{}
	for stream.Next() {
		watch.Touch()
		if err := acc.add(stream.Current(), h); err != nil {
			return nil, classify(ctx, sctx, "streaming from openai", err)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, classify(ctx, sctx, "streaming from openai", err)
	}
	resp, err := acc.response()
	if err != nil {
		return nil, classify(ctx, sctx, "streaming from openai", err)
	}
	if h != nil {
		for _, call := range resp.Message.ToolCalls() {
			h(llm.Event{Kind: llm.EventToolCall, ToolCall: &call})
		}
	}
	return resp, nil
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
	e := &llm.Error{Provider: llm.ProviderOpenAI, Err: err}
	var apiErr *oa.Error
	switch {
	case llm.Expired(sctx):
		e.Class = llm.ClassTimeout
		e.Message = "no chunk within the idle timeout"
	case errors.As(err, &apiErr):
		e.StatusCode = apiErr.StatusCode
		e.Message = apiErr.Message
		errType := apiErr.Code
		if errType == "" {
			errType = apiErr.Type
		}
		e.Class = llm.ClassifyStatus(apiErr.StatusCode, errType, apiErr.Message)
		if apiErr.Response != nil {
			e.RetryAfter = llm.ParseRetryAfter(apiErr.Response.Header, time.Now())
			e.RequestID = apiErr.Response.Header.Get("X-Request-Id")
		}
		e.Err = nil // its text only repeats the status
	default:
		e.Class = llm.ClassifyTransport(err)
		var se *ssestream.StreamError
		if errors.As(err, &se) {
			// An error object inside the stream: the server gave up mid-reply.
			e.Class = llm.ClassServer
		}
	}
	return fmt.Errorf("%s: %w", doing, e)
}
