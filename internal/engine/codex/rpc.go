package codex

import (
	"encoding/json"
	"strings"
)

// msg is one app-server message: a request (ID and Method), a response
// (ID and Result or Error) or a notification (Method alone). The
// app-server's JSON-RPC carries no "jsonrpc" member. Only the fields the
// engine reads are decoded, so a newer CLI that adds fields still parses.
type msg struct {
	ID     *int64          `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

// request is a message the engine sends.
type request struct {
	ID     *int64 `json:"id,omitempty"`
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// response answers a request of the CLI.
type response struct {
	ID     int64 `json:"id"`
	Result any   `json:"result"`
}

// textInput is a turn's input: one text item.
func textInput(text string) []map[string]any {
	return []map[string]any{{"type": "text", "text": text, "text_elements": []any{}}}
}

// turn is a turn as notifications and responses carry it.
type turn struct {
	ID     string `json:"id"`
	Status string `json:"status"` // completed | interrupted | failed | inProgress
	Error  *struct {
		Message           string `json:"message"`
		AdditionalDetails string `json:"additionalDetails"`
	} `json:"error"`
}

// turnParams are the params of turn/started and turn/completed.
type turnParams struct {
	ThreadID string `json:"threadId"`
	Turn     turn   `json:"turn"`
}

// threadResult answers thread/start and thread/resume.
type threadResult struct {
	Thread struct {
		ID string `json:"id"`
	} `json:"thread"`
	Model string `json:"model"`
}

// item is a thread item (item/started, item/completed).
type item struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	// agentMessage
	Text string `json:"text"`
	// commandExecution
	Command          string  `json:"command"`
	Cwd              string  `json:"cwd"`
	AggregatedOutput *string `json:"aggregatedOutput"`
	ExitCode         *int    `json:"exitCode"`
	Status           string  `json:"status"` // inProgress | completed | failed | declined
	// fileChange
	Changes []struct {
		Path string `json:"path"`
		Kind struct {
			Type string `json:"type"` // add | delete | update
		} `json:"kind"`
	} `json:"changes"`
	// mcpToolCall
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	ErrorVal  json.RawMessage `json:"error"`
	// userMessage
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// userText is a userMessage item's text.
func (it item) userText() string {
	var parts []string
	for _, c := range it.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type itemParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	Item     item   `json:"item"`
}

// tokens is a TokenUsageBreakdown.
type tokens struct {
	TotalTokens           int64 `json:"totalTokens"`
	InputTokens           int64 `json:"inputTokens"`
	CachedInputTokens     int64 `json:"cachedInputTokens"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
}

type usageParams struct {
	ThreadID   string `json:"threadId"`
	TurnID     string `json:"turnId"`
	TokenUsage struct {
		Total tokens `json:"total"`
		Last  tokens `json:"last"`
	} `json:"tokenUsage"`
}

type errorParams struct {
	ThreadID  string `json:"threadId"`
	TurnID    string `json:"turnId"`
	WillRetry bool   `json:"willRetry"`
	Message   string `json:"message"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}
