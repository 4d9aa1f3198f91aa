package claude

import (
	"context"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Provider is the provider name the cost ledger records for Claude Code's
// calls.
const Provider = "anthropic"

// fileTools are the CLI's tools that write the file named in their input.
var fileTools = map[string]string{"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path", "NotebookEdit": "notebook_path"}

// handle turns one line of the CLI's output into observations and stored
// conversation. done reports the end of the turn the run waits for.
func (ru *run) handle(ctx context.Context, l line) (done bool, err error) {
	if l.ParentToolUseID != nil && *l.ParentToolUseID != "" {
		return false, nil // a subagent's own conversation: its Task call reports it
	}
	switch l.Type {
	case "system":
		if l.Subtype == "init" && l.Model != "" {
			ru.cliModel = l.Model
		}
		if l.Subtype == "api_retry" {
			ru.h.Emit(event.ModelRetry{Turn: max(ru.turn, 1), Attempt: l.Attempt + 1, MaxAttempts: l.MaxRetries + 1,
				Class: string(l.Error), Status: deref(l.ErrorStatus), WaitMs: int64(l.RetryDelayMs)})
		}
	case "assistant":
		return false, ru.assistant(ctx, l)
	case "user":
		return false, ru.toolResults(ctx, l)
	case "control_response":
		if l.Response != nil && l.Response.Subtype == "error" {
			ru.log.Warn("the CLI refused a control request", "request_id", l.Response.RequestID, "err", l.Response.Error)
			if l.Response.RequestID == ru.interrupt {
				ru.interrupt = ""
			}
		}
	case "result":
		return ru.result(ctx, l)
	}
	return false, nil
}

// assistant stores one assistant line: a new message id is a new model
// call, that is a new turn.
func (ru *run) assistant(ctx context.Context, l line) error {
	if l.Message == nil {
		return nil
	}
	var evs []event.Payload
	if l.Message.ID != ru.msgID {
		evs = append(evs, ru.endTurn("tool_use")...)
		ru.msgID = l.Message.ID
		ru.turn++
		ru.turnStart = ru.h.Now()
		evs = append(evs, event.TurnStarted{Turn: ru.turn, Engine: Name, Model: l.Message.Model, Resumed: ru.resumed})
		ru.resumed = false
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	for _, b := range l.Message.Content {
		switch b.Type {
		case "text":
			if t := strings.TrimSpace(b.Text); t != "" {
				evs = append(evs, event.Text{Turn: ru.turn, Text: t})
				msg.Parts = append(msg.Parts, llm.TextPart(b.Text))
			}
		case "tool_use":
			ru.calls[b.ID] = pendingCall{name: b.Name, input: b.Input, start: ru.h.Now()}
			name, args := observedCall(b.Name, b.Input)
			evs = append(evs, event.ToolCall{Turn: ru.turn, CallID: b.ID, Name: name, Args: args})
			msg.Parts = append(msg.Parts, llm.ToolCallPart(llm.ToolCall{ID: b.ID, Name: b.Name, Input: b.Input}))
		}
	}
	if len(msg.Parts) == 0 && len(evs) == 0 {
		return nil
	}
	step := engine.Step{Turn: ru.turn, Events: evs}
	if len(msg.Parts) > 0 {
		step.Messages = []llm.Message{msg}
	}
	return ru.commit(ctx, step)
}

// toolResults stores the results of the CLI's tool calls.
func (ru *run) toolResults(ctx context.Context, l line) error {
	if l.Message == nil {
		return nil
	}
	msg := llm.Message{Role: llm.RoleUser}
	var evs []event.Payload
	for _, b := range l.Message.Content {
		if b.Type != "tool_result" {
			continue
		}
		c, ok := ru.calls[b.ToolUseID]
		delete(ru.calls, b.ToolUseID)
		content := string(b.Content)
		r := event.ToolResult{Turn: ru.turn, CallID: b.ToolUseID, Name: observedTool(c.name), Error: b.IsError, Size: len(content),
			Preview: event.ResultPreview(content), Tail: event.ResultTail(content), Hash: event.ContentHash(content)}
		if ok {
			r.DurationMs = ru.h.Now().Sub(c.start).Milliseconds()
		}
		evs = append(evs, r)
		if key, writes := fileTools[c.name]; writes && !b.IsError {
			if path := ru.changes.Rel(extproc.InputString(c.input, key)); path != "" {
				op := "modified"
				if c.name == "Write" && strings.Contains(content, "created") {
					op = "created"
				}
				evs = append(evs, event.FileChanged{Turn: ru.turn, Path: path, Op: op, Tool: observedTool(c.name)})
				ru.changes.Named(path)
			}
		}
		msg.Parts = append(msg.Parts, llm.ToolResultPart(llm.ToolResult{CallID: b.ToolUseID, Content: content, IsError: b.IsError}))
	}
	if len(msg.Parts) == 0 {
		return nil
	}
	if len(ru.calls) == 0 {
		evs = append(evs, ru.endTurn("tool_use")...)
	}
	return ru.commit(ctx, engine.Step{Turn: ru.turn, Messages: []llm.Message{msg}, Events: evs})
}

// endTurn ends the model call in progress, once.
func (ru *run) endTurn(stop string) []event.Payload {
	if ru.msgID == "" {
		return nil
	}
	ru.msgID = ""
	return []event.Payload{event.TurnEnded{Turn: ru.turn, StopReason: stop, Attempts: 1, DurationMs: ru.h.Now().Sub(ru.turnStart).Milliseconds()}}
}

// result ends the CLI's turn: the objects its commands wrote moved into
// the shared store, its cost into the ledger, the files changed that no
// tool result named (a worktree snapshot), and the outcome.
func (ru *run) result(ctx context.Context, l line) (bool, error) {
	ru.p.Settle()
	evs := ru.endTurn(words.Or(l.StopReason, "end_turn"))
	cost := l.TotalCostUSD - ru.costSeen
	if cost < 0 {
		cost = l.TotalCostUSD
	}
	ru.costSeen = l.TotalCostUSD
	var u llm.Usage
	if l.Usage != nil {
		u = llm.Usage{InputTokens: l.Usage.InputTokens, OutputTokens: l.Usage.OutputTokens,
			CacheReadTokens: l.Usage.CacheReadInputTokens, CacheWriteTokens: l.Usage.CacheCreationInputTokens}
	}
	prev := ru.latest.Usage
	turn := max(ru.turn, 1)
	evs = append(evs, extproc.UsageEvent(turn, Provider, ru.model(), u, cost, prev))
	evs = append(evs, ru.changes.Since(ctx, turn)...)
	denied, decision := ru.denials(turn, l)
	evs = append(evs, denied...)
	if ru.interrupt != "" {
		ru.interrupt = ""
		ru.cut = true
		evs = append(evs, event.Interrupted{Turn: turn, Dropped: ru.droppedCalls()})
	}
	clear(ru.calls)
	step := engine.Step{Turn: ru.turn, Events: evs,
		Call: &engine.Call{Provider: Provider, Model: ru.model(), Usage: u, CostUSD: cost, Duration: msDuration(l.DurationMs)}}
	if decision != nil {
		step.Manifest = &decision.Manifest
	}
	if err := ru.commit(ctx, step); err != nil {
		return false, err
	}
	if decision != nil {
		ru.act(decision)
	}
	ru.last = l
	ru.inputs = max(ru.inputs-1, 0)
	if (ru.inputs > 0 || l.QueuedTurnCount > 0) && !ru.cut {
		return false, nil // a line the CLI queued gets its own turn
	}
	ru.inputs = 0
	return true, nil
}

func (ru *run) droppedCalls() []string {
	var out []string
	for _, c := range ru.calls {
		out = append(out, c.name)
	}
	if len(out) == 0 {
		out = []string{"model call"}
	}
	return out
}

// model is the model the task runs on as far as the engine knows it.
func (ru *run) model() string {
	if ru.cliModel != "" {
		return ru.cliModel
	}
	if ru.e.o.Model != nil {
		if m := ru.e.o.Model(ru.latest); m != "" {
			return m
		}
	}
	return "claude-code"
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
