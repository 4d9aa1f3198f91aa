package llm

import "context"

// Client is one model endpoint (a provider, possibly wrapped in decorators).
//
// Contract, which the conformance suite in package clienttest checks for
// every implementation:
//
//   - Implementations are safe for concurrent use by many goroutines.
//   - Complete sends req and returns the whole assistant response.
//   - Stream sends req as a streaming call. It calls h synchronously, on the
//     calling goroutine and in order, and never after Stream has returned.
//     h may be nil. h must not block for long: the connection is idle while
//     it runs.
//   - EventText events carry text deltas, and they are provisional until
//     Stream returns successfully. EventReset means "discard every delta
//     received so far for this call": a retrying decorator sends it before
//     starting a fresh attempt after partial output. Retries never resume a
//     stream; they restart it.
//   - EventToolCall events carry complete tool calls, and only once the
//     provider has received the complete response (its final stop event), so
//     a tool call is never followed by EventReset, never comes from a failed
//     attempt and is never delivered twice. Callers may still prefer to run
//     tools from the returned Response only.
//   - On success the returned Response holds the complete assistant message
//     (text and tool calls in wire order), stop reason and usage; its text is
//     the concatenation of the EventText deltas since the last EventReset.
//   - Every failure that comes from the model service, the network or the
//     stream is (or wraps) an *Error whose Class says what the caller may do.
//     Cancellation of ctx returns an error for which errors.Is(err,
//     context.Canceled) (or DeadlineExceeded) holds. A stream that delivers
//     no event for the configured idle timeout ends with ClassTimeout.
//     Malformed input from the service ends with ClassMalformed; it never
//     panics or hangs.
type Client interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
	Stream(ctx context.Context, req *Request, h func(Event)) (*Response, error)
}

// Request is one call to a model. Clients do not modify it.
type Request struct {
	// Model is the provider's model name; empty means the client's default
	// (the model of the tier it was built for).
	Model string
	// System is the system prompt. Providers that support prompt caching
	// mark it (and the tool definitions) as cacheable.
	System   string
	Messages []Message
	Tools    []ToolDef
	// MaxTokens caps the reply; zero means the client's default.
	MaxTokens int
	// Temperature, when non-nil, overrides the model's default.
	Temperature *float64
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, normalised across providers.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopSequence  StopReason = "stop_sequence"
	StopRefusal   StopReason = "refusal"
	// StopContextWindow means the conversation filled the context window.
	StopContextWindow StopReason = "context_window"
	StopOther         StopReason = "other"
)

// Usage counts the tokens of one call. InputTokens excludes the cached
// tokens counted in CacheWriteTokens and CacheReadTokens, so the four
// numbers add up to the whole prompt plus reply.
type Usage struct {
	InputTokens      int64
	OutputTokens     int64
	CacheWriteTokens int64
	CacheReadTokens  int64
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
	}
}

// Total returns the number of tokens of all kinds.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheWriteTokens + u.CacheReadTokens
}

// Response is the complete result of one successful call.
type Response struct {
	// Provider and Model name what actually answered.
	Provider string
	Model    string
	// Message is the assistant's reply, ready to append to the conversation.
	Message    Message
	StopReason StopReason
	Usage      Usage
	// CostUSD is the price of the call from the catalogue; zero when the
	// model is not in the catalogue or no pricing decorator ran.
	CostUSD float64
	// Attempts is how many attempts the call took (1 without retries).
	Attempts int
}

// EventKind tells which field of an Event is meaningful.
type EventKind uint8

// Kinds of streaming events. See the Client contract for their rules.
const (
	EventText EventKind = iota + 1
	EventToolCall
	EventReset
)

// String returns the kind's name.
func (k EventKind) String() string {
	switch k {
	case EventText:
		return "text"
	case EventToolCall:
		return "tool_call"
	case EventReset:
		return "reset"
	}
	return "unknown"
}

// Event is one streaming event.
type Event struct {
	Kind EventKind
	// Text is the delta, for EventText.
	Text string
	// ToolCall is the complete call, for EventToolCall.
	ToolCall *ToolCall
	// Err is the failure that caused a retry, for EventReset.
	Err error
}
