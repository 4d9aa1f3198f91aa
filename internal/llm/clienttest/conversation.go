package clienttest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// TenthTurn is a task's request at its tenth turn: a system prompt,
// four tools, and nine rounds of an assistant tool call answered by a tool
// result of about 2 KB: what the encoding benchmarks of the providers
// build a body from.
func TenthTurn() *llm.Request {
	req := &llm.Request{
		System: strings.Repeat("You are a careful coding agent. ", 60),
		Tools: []llm.ToolDef{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "write_file", Description: "Write a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
			{Name: "bash", Description: "Run a command.", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
			{Name: "glob", Description: "Find files.", Schema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)},
		},
		Messages: []llm.Message{llm.UserText("Fix the failing test in internal/auth and explain the cause.")},
	}
	for i := range 9 {
		id := fmt.Sprintf("toolu_%02d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.TextPart("Let me look at the next file."),
				llm.ToolCallPart(llm.ToolCall{ID: id, Name: "read_file", Input: json.RawMessage(fmt.Sprintf(`{"path":"internal/auth/file%d.go"}`, i))}),
			}},
			llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
				llm.ToolResultPart(llm.ToolResult{CallID: id, Content: strings.Repeat("func f() { return \"<ok>\" }\n", 75)}),
			}})
	}
	return req
}
