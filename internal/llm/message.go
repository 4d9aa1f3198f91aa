package llm

import "encoding/json"

// Role is the author of a message in a conversation.
type Role string

// Roles a Message may have. The system prompt is not a message: it travels
// in Request.System.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn of a conversation: ordered parts from one author. Its
// JSON form is how conversations are stored.
// Tool results travel in user messages, tool calls in assistant messages,
// as both supported wire formats can represent that.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is one piece of a message. Exactly one of Text (non-empty), ToolCall
// or ToolResult is set; use the constructors TextPart, ToolCallPart and
// ToolResultPart.
type Part struct {
	Text       string      `json:"text,omitempty"`
	ToolCall   *ToolCall   `json:"tool_call,omitempty"`
	ToolResult *ToolResult `json:"tool_result,omitempty"`
}

// TextPart returns a Part holding text.
func TextPart(text string) Part { return Part{Text: text} }

// ToolCallPart returns a Part holding a tool call made by the model.
func ToolCallPart(c ToolCall) Part { return Part{ToolCall: &c} }

// ToolResultPart returns a Part holding the result of a tool call.
func ToolResultPart(r ToolResult) Part { return Part{ToolResult: &r} }

// UserText returns a user message holding one text part.
func UserText(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{TextPart(text)}}
}

// ToolCall is a complete request by the model to run a tool.
type ToolCall struct {
	// ID is the provider's identifier, echoed back in the ToolResult.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Input is the tool's arguments: always a valid JSON object (see ParseToolInput).
	Input json.RawMessage `json:"input"`
}

// ToolResult is the outcome of running a tool, sent back to the model.
type ToolResult struct {
	// CallID is the ToolCall.ID this result answers.
	CallID  string `json:"call_id"`
	Content string `json:"content"`
	// IsError tells the model the tool failed; Content says why.
	IsError bool `json:"is_error,omitempty"`
}

// ToolDef describes a tool the model may call.
type ToolDef struct {
	Name        string
	Description string
	// Schema is the JSON schema of the tool's input; it must describe an
	// object. Empty means an object with no properties.
	Schema json.RawMessage
}

// Text returns the concatenated text parts of m.
func (m Message) Text() string {
	var n int
	for _, p := range m.Parts {
		n += len(p.Text)
	}
	b := make([]byte, 0, n)
	for _, p := range m.Parts {
		b = append(b, p.Text...)
	}
	return string(b)
}

// ToolCalls returns the tool calls in m, in order.
func (m Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range m.Parts {
		if p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// TextBytes is the size of all the text a request carries: the system prompt,
// message text, tool calls and results, and tool definitions. The limiter and
// the scripted server derive token counts from it.
func TextBytes(system string, msgs []Message, tools []ToolDef) int {
	n := len(system)
	for _, m := range msgs {
		for _, p := range m.Parts {
			n += len(p.Text)
			if p.ToolCall != nil {
				n += len(p.ToolCall.Name) + len(p.ToolCall.Input)
			}
			if p.ToolResult != nil {
				n += len(p.ToolResult.Content)
			}
		}
	}
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return n
}
