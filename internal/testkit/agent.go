package testkit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Agent builds one task's observation events as the native agent emits
// them (internal/agent/loop.go). It only builds payloads: each test
// harness publishes or records them its own way. Not safe for concurrent
// use.
type Agent struct {
	ID task.ID
	// Turn and Calls count the turns and tool calls built so far.
	Turn, Calls int
	// Tokens is the input tokens of each model call; with 0 no usage
	// event is built.
	Tokens int64
}

// NextCall starts a tool call in a new turn and returns its call id.
func (a *Agent) NextCall() string {
	a.Turn++
	a.Calls++
	return fmt.Sprintf("toolu_%s_%d", a.ID, a.Calls)
}

// ToolTurn returns one turn with one tool call, in the order the agent
// emits them: turn.started, the call, its usage (when Tokens is set), its
// result, the files it changed, turn.ended. args are marshalled with their
// keys sorted, as the agent's canonical form.
func (a *Agent) ToolTurn(name string, args map[string]string, out string, failed bool, changes ...string) []event.Payload {
	callID := a.NextCall()
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	ps := []event.Payload{
		event.TurnStarted{Turn: a.Turn, Engine: "native", Model: "claude-test"},
		event.ToolCall{Turn: a.Turn, CallID: callID, Name: name, Args: raw},
	}
	if a.Tokens > 0 {
		ps = append(ps, event.Usage{Turn: a.Turn, InputTokens: a.Tokens, OutputTokens: 60, CostUSD: 0.001})
	}
	ps = append(ps, event.ToolResult{Turn: a.Turn, CallID: callID, Name: name, Error: failed, Size: len(out),
		Preview: strings.TrimSpace(out), Hash: event.ContentHash(out), DurationMs: 40})
	for _, p := range changes {
		ps = append(ps, event.FileChanged{Turn: a.Turn, Path: p, Op: "modified", Tool: name})
	}
	return append(ps, event.TurnEnded{Turn: a.Turn, StopReason: "tool_use", Attempts: 1, DurationMs: 900})
}

// Delivered returns the receipt of injections at the start of the next
// turn: the model now sees them.
func (a *Agent) Delivered(ids []int64, kinds []string) event.Payload {
	return event.Delivered{Turn: a.Turn + 1, InjectionIDs: ids, Kinds: kinds, LatencyMs: make([]int64, len(ids))}
}
