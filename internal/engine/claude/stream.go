package claude

import (
	"bytes"
	"encoding/json"
	"strings"
)

// line is one line of the CLI's stream-json output. Only the fields the
// engine reads are decoded; the rest is ignored, so a newer CLI that adds
// fields still parses.
type line struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"` // system/init

	// assistant, user
	Message         *message `json:"message"`
	ParentToolUseID *string  `json:"parent_tool_use_id"`

	// result
	IsError           bool              `json:"is_error"`
	Result            string            `json:"result"`
	TotalCostUSD      float64           `json:"total_cost_usd"`
	Usage             *usage            `json:"usage"`
	NumTurns          int               `json:"num_turns"`
	DurationMs        int64             `json:"duration_ms"`
	StopReason        string            `json:"stop_reason"`
	TerminalReason    string            `json:"terminal_reason"`
	PermissionDenials []json.RawMessage `json:"permission_denials"`
	// QueuedTurnCount is how many user lines the CLI holds for turns of
	// their own after this one (a line that came too late for this turn).
	QueuedTurnCount int      `json:"queued_turn_count"`
	Errors          []string `json:"errors"`

	// system/api_retry
	Attempt      int      `json:"attempt"`
	MaxRetries   int      `json:"max_retries"`
	RetryDelayMs float64  `json:"retry_delay_ms"`
	ErrorStatus  *int     `json:"error_status"`
	Error        errField `json:"error"`

	// control_response
	Response *struct {
		Subtype   string `json:"subtype"`
		RequestID string `json:"request_id"`
		Error     string `json:"error"`
	} `json:"response"`
}

// errField is an error the CLI reports as a string or as an object.
type errField string

func (e *errField) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*e = errField(s)
		return nil
	}
	*e = errField(strings.TrimSpace(string(b)))
	return nil
}

type message struct {
	ID      string  `json:"id"`
	Role    string  `json:"role"`
	Model   string  `json:"model"`
	Content content `json:"content"`
	Usage   *usage  `json:"usage"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// content is a message's content: a string or a list of blocks.
type content []block

func (c *content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = content{{Type: "text", Text: s}}
		return nil
	}
	var blocks []block
	if err := json.Unmarshal(b, &blocks); err != nil {
		return err
	}
	*c = blocks
	return nil
}

type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// tool_use
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result
	ToolUseID string      `json:"tool_use_id"`
	Content   resultValue `json:"content"`
	IsError   bool        `json:"is_error"`
}

// resultValue is a tool result's content: a string or a list of blocks,
// read as the text it holds.
type resultValue string

func (r *resultValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*r = resultValue(s)
		return nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &blocks); err != nil {
		return nil // an image or something else: no text
	}
	var parts []string
	for _, x := range blocks {
		if x.Text != "" {
			parts = append(parts, x.Text)
		}
	}
	*r = resultValue(strings.Join(parts, "\n"))
	return nil
}

// userLine is a user message written to the CLI's stdin.
type userLine struct {
	Type    string      `json:"type"`
	Message userMessage `json:"message"`
}

type userMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func newUserLine(text string) userLine {
	return userLine{Type: "user", Message: userMessage{Role: "user", Content: text}}
}

// controlRequest asks the CLI to do something outside the conversation.
type controlRequest struct {
	Type      string         `json:"type"`
	RequestID string         `json:"request_id"`
	Request   map[string]any `json:"request"`
}

func interruptRequest(id string) controlRequest {
	return controlRequest{Type: "control_request", RequestID: id, Request: map[string]any{"subtype": "interrupt"}}
}
