package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// API names a wire format the server speaks.
type API string

// The wire formats.
const (
	APIAnthropic API = "anthropic"
	APIOpenAI    API = "openai"
	// APIResponses is the OpenAI Responses API (POST /v1/responses), the
	// one Codex speaks.
	APIResponses API = "responses"
	// APIGemini is the Gemini API's generateContent and
	// streamGenerateContent, the one Gemini CLI speaks.
	APIGemini API = "gemini"
)

// Request is a recorded request, parsed into provider-neutral form.
type Request struct {
	API      API
	Model    string
	System   string
	Messages []llm.Message
	Tools    []llm.ToolDef
	// MaxTokens is max_tokens (Anthropic), max_completion_tokens /
	// max_tokens (OpenAI), max_output_tokens (Responses) or
	// generationConfig.maxOutputTokens (Gemini).
	MaxTokens int
	Stream    bool
	// IncludeUsage is OpenAI's stream_options.include_usage.
	IncludeUsage bool
	// CacheBreakpoints counts cache_control markers (Anthropic).
	CacheBreakpoints int
	Header           http.Header

	// Conversation, Step and Attempt say how the server answered: the
	// conversation's name, the step index and the attempt number at that
	// step (1 for the first). Fault is the kind injected, if any.
	Conversation string
	Step         int
	Attempt      int
	Fault        FaultKind
}

// firstUserText returns the text of the first user message.
func (r *Request) firstUserText() string {
	for _, m := range r.Messages {
		if m.Role == llm.RoleUser {
			return m.Text()
		}
	}
	return ""
}

// capture returns the group of re's first match in the first user message,
// else in the tool results, the newest first.
func (r *Request) capture(re *regexp.Regexp) (string, bool) {
	if m := re.FindStringSubmatch(r.firstUserText()); m != nil {
		return m[1], true
	}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		parts := r.Messages[i].Parts
		for j := len(parts) - 1; j >= 0; j-- {
			if tr := parts[j].ToolResult; tr != nil {
				if m := re.FindStringSubmatch(tr.Content); m != nil {
					return m[1], true
				}
			}
		}
	}
	return "", false
}

// assistantTurns counts assistant messages: the index of the step to play.
func (r *Request) assistantTurns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

// textBytes is the size of all text in the request, for computed usage.
func (r *Request) textBytes() int { return llm.TextBytes(r.System, r.Messages, r.Tools) }

// textOrBlocks is a string or a list of {type, text} blocks.
type textOrBlocks struct {
	text   string
	blocks []wireBlock
}

func (t *textOrBlocks) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &t.text)
	}
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &t.blocks)
}

func (t *textOrBlocks) joined() string {
	if t.blocks == nil {
		return t.text
	}
	var b strings.Builder
	for _, bl := range t.blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}

type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      *textOrBlocks   `json:"content"`
	IsError      bool            `json:"is_error"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type anthropicWireRequest struct {
	Model     string       `json:"model"`
	MaxTokens int          `json:"max_tokens"`
	Stream    bool         `json:"stream"`
	System    textOrBlocks `json:"system"`
	Messages  []struct {
		Role    string       `json:"role"`
		Content textOrBlocks `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"input_schema"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"tools"`
}

// parseAnthropicRequest parses a Messages API request body.
func parseAnthropicRequest(body []byte) (*Request, error) {
	var w anthropicWireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("parsing messages request: %w", err)
	}
	r := &Request{API: APIAnthropic, Model: w.Model, MaxTokens: w.MaxTokens, Stream: w.Stream, System: w.System.joined()}
	for _, b := range w.System.blocks {
		if len(b.CacheControl) > 0 && string(b.CacheControl) != "null" {
			r.CacheBreakpoints++
		}
	}
	for i, m := range w.Messages {
		if m.Role == "system" {
			// A system message between the turns (Claude Code sends its
			// reminders so): it joins the system prompt.
			r.System = strings.TrimSpace(r.System + "\n\n" + m.Content.joined())
			continue
		}
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("parsing messages request: messages[%d]: unknown role %q", i, m.Role)
		}
		msg := llm.Message{Role: llm.Role(m.Role)}
		if m.Content.blocks == nil {
			msg.Parts = append(msg.Parts, llm.TextPart(m.Content.text))
		}
		for _, b := range m.Content.blocks {
			if len(b.CacheControl) > 0 && string(b.CacheControl) != "null" {
				r.CacheBreakpoints++
			}
			switch b.Type {
			case "text":
				msg.Parts = append(msg.Parts, llm.TextPart(b.Text))
			case "tool_use":
				msg.Parts = append(msg.Parts, llm.ToolCallPart(llm.ToolCall{ID: b.ID, Name: b.Name, Input: b.Input}))
			case "tool_result":
				res := llm.ToolResult{CallID: b.ToolUseID, IsError: b.IsError}
				if b.Content != nil {
					res.Content = b.Content.joined()
				}
				msg.Parts = append(msg.Parts, llm.ToolResultPart(res))
			default:
				return nil, fmt.Errorf("parsing messages request: messages[%d]: unsupported block type %q", i, b.Type)
			}
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range w.Tools {
		if len(t.CacheControl) > 0 && string(t.CacheControl) != "null" {
			r.CacheBreakpoints++
		}
		r.Tools = append(r.Tools, llm.ToolDef{Name: t.Name, Description: t.Description, Schema: t.InputSchema})
	}
	return r, nil
}

type openaiWireRequest struct {
	Model               string `json:"model"`
	MaxTokens           int    `json:"max_tokens"`
	MaxCompletionTokens int    `json:"max_completion_tokens"`
	Stream              bool   `json:"stream"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role       string       `json:"role"`
		Content    textOrBlocks `json:"content"`
		ToolCallID string       `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// parseOpenAIRequest parses a Chat Completions request body. Consecutive
// tool messages become one user message of tool results, as in the
// Anthropic format, so step counting is the same for both APIs.
func parseOpenAIRequest(body []byte) (*Request, error) {
	var w openaiWireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("parsing chat completions request: %w", err)
	}
	r := &Request{API: APIOpenAI, Model: w.Model, MaxTokens: w.MaxCompletionTokens, Stream: w.Stream, IncludeUsage: w.StreamOptions.IncludeUsage}
	if r.MaxTokens == 0 {
		r.MaxTokens = w.MaxTokens
	}
	var system []string
	for i, m := range w.Messages {
		switch m.Role {
		case "system", "developer":
			system = append(system, m.Content.joined())
		case "user":
			r.Messages = append(r.Messages, llm.UserText(m.Content.joined()))
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant}
			if t := m.Content.joined(); t != "" {
				msg.Parts = append(msg.Parts, llm.TextPart(t))
			}
			for _, tc := range m.ToolCalls {
				msg.Parts = append(msg.Parts, llm.ToolCallPart(llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Input: json.RawMessage(tc.Function.Arguments)}))
			}
			r.Messages = append(r.Messages, msg)
		case "tool":
			part := llm.ToolResultPart(llm.ToolResult{CallID: m.ToolCallID, Content: m.Content.joined()})
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == llm.RoleUser && r.Messages[n-1].Parts[0].ToolResult != nil {
				r.Messages[n-1].Parts = append(r.Messages[n-1].Parts, part)
			} else {
				r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{part}})
			}
		default:
			return nil, fmt.Errorf("parsing chat completions request: messages[%d]: unknown role %q", i, m.Role)
		}
	}
	r.System = strings.Join(system, "\n")
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, llm.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters})
	}
	return r, nil
}
