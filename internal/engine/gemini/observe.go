package gemini

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Provider is the provider name the cost ledger records for Gemini CLI's
// calls.
const Provider = llm.ProviderGemini

// line is one event of `-o stream-json`.
type line struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		TotalTokens  int64 `json:"total_tokens"`
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
		DurationMs   int64 `json:"duration_ms"`
	} `json:"stats"`
}

// fileTools are the CLI's tools that write the file named in their input.
var fileTools = map[string]bool{"write_file": true, "replace": true}

// denyMarker is in the output of a call the task's policy refused
// (lifecycle.GeminiPolicy's denyMessage).
const denyMarker = "not in the task's sandbox manifest"

// denied reports whether a failed tool result is the policy's refusal: a
// shell command beyond the manifest's prefixes fails as a policy
// violation; a tool the policy denies outright is not registered at all,
// and a call of it fails as unknown (both recorded from 0.61.0 in
// testdata).
func denied(l line, content string) bool {
	if strings.Contains(content, denyMarker) {
		return true
	}
	return l.Error != nil && (l.Error.Type == "policy_violation" || l.Error.Type == "tool_not_registered")
}

// handle turns one line of the CLI's output into observations and stored
// conversation.
func (ru *run) handle(ctx context.Context, l line) error {
	switch l.Type {
	case "init":
		if l.Model != "" {
			ru.cliModel = l.Model
		}
	case "message":
		if l.Role != "assistant" || l.Content == "" {
			return nil
		}
		if err := ru.beginCall(ctx); err != nil {
			return err
		}
		ru.text.WriteString(l.Content)
	case "tool_use":
		if err := ru.beginCall(ctx); err != nil {
			return err
		}
		ru.flushText()
		input := extproc.Canonical(l.Parameters)
		ru.calls[l.ToolID] = pendingCall{name: l.ToolName, input: input, start: ru.h.Now()}
		ru.parts = append(ru.parts, llm.ToolCallPart(llm.ToolCall{ID: l.ToolID, Name: l.ToolName, Input: input}))
		name, args := observedCall(l.ToolName, input)
		return ru.commit(ctx, engine.Step{Turn: ru.turn, Events: []event.Payload{event.ToolCall{Turn: ru.turn, CallID: l.ToolID, Name: name, Args: args}}})
	case "tool_result":
		return ru.toolResult(ctx, l)
	case "result":
		return ru.result(ctx, l)
	}
	return nil
}

// beginCall starts a model call when none is in progress: a new turn.
func (ru *run) beginCall(ctx context.Context) error {
	if ru.inCall {
		return nil
	}
	ru.inCall = true
	ru.turn++
	ru.turnStart = ru.h.Now()
	resumed := ru.resumed
	ru.resumed = false
	return ru.commit(ctx, engine.Step{Turn: ru.turn, Events: []event.Payload{event.TurnStarted{Turn: ru.turn, Engine: Name, Model: ru.model(), Resumed: resumed}}})
}

// flushText moves the text streamed so far into the message in progress.
func (ru *run) flushText() {
	if t := ru.text.String(); strings.TrimSpace(t) != "" {
		ru.parts = append(ru.parts, llm.TextPart(t))
		ru.lastText = t
	}
	ru.text.Reset()
}

// endCall ends the model call in progress: its message and text stored,
// its end observed.
func (ru *run) endCall(stop string) (engine.Step, bool) {
	if !ru.inCall {
		return engine.Step{}, false
	}
	ru.inCall = false
	ru.flushText()
	var evs []event.Payload
	for _, p := range ru.parts {
		if p.Text != "" {
			evs = append(evs, event.Text{Turn: ru.turn, Text: strings.TrimSpace(p.Text)})
		}
	}
	evs = append(evs, event.TurnEnded{Turn: ru.turn, StopReason: stop, Attempts: 1, DurationMs: ru.h.Now().Sub(ru.turnStart).Milliseconds()})
	step := engine.Step{Turn: ru.turn, Events: evs}
	if len(ru.parts) > 0 {
		step.Messages = []llm.Message{{Role: llm.RoleAssistant, Parts: ru.parts}}
	}
	ru.parts = nil
	return step, true
}

// toolResult stores the result of one of the CLI's tool calls.
func (ru *run) toolResult(ctx context.Context, l line) error {
	step, _ := ru.endCall("tool_use")
	c, ok := ru.calls[l.ToolID]
	delete(ru.calls, l.ToolID)
	isErr := l.Status != "success"
	content := l.Output
	if isErr && content == "" && l.Error != nil {
		content = l.Error.Message
	}
	r := event.ToolResult{Turn: ru.turn, CallID: l.ToolID, Name: observedTool(c.name), Error: isErr, Size: len(content),
		Preview: event.ResultPreview(content), Tail: event.ResultTail(content), Hash: event.ContentHash(content)}
	if ok {
		r.DurationMs = ru.h.Now().Sub(c.start).Milliseconds()
	}
	step.Turn = ru.turn
	step.Events = append(step.Events, r)
	if isErr && denied(l, content) {
		d := lifecycle.Denial(ru.turn, manifestTool(c.name), c.input, words.Clip(content, 300))
		ru.denials = append(ru.denials, d)
		step.Events = append(step.Events, d)
	}
	if fileTools[c.name] && !isErr {
		if path := ru.changes.Rel(extproc.InputString(c.input, "file_path")); path != "" {
			step.Events = append(step.Events, event.FileChanged{Turn: ru.turn, Path: path, Op: "modified", Tool: observedTool(c.name)})
			ru.changes.Named(path)
		}
	}
	step.Messages = append(step.Messages, llm.Message{Role: llm.RoleUser,
		Parts: []llm.Part{llm.ToolResultPart(llm.ToolResult{CallID: l.ToolID, Content: content, IsError: isErr})}})
	return ru.commit(ctx, step)
}

// result ends the turn: its usage and cost, the files changed that no
// tool result named (a worktree snapshot).
func (ru *run) result(ctx context.Context, l line) error {
	step, _ := ru.endCall("end_turn")
	var u llm.Usage
	var dur int64
	if l.Stats != nil {
		u = llm.Usage{InputTokens: l.Stats.InputTokens - l.Stats.Cached, OutputTokens: l.Stats.OutputTokens, CacheReadTokens: l.Stats.Cached}
		if u.InputTokens < 0 {
			u.InputTokens = l.Stats.InputTokens
		}
		dur = l.Stats.DurationMs
	}
	model := ru.model()
	cost := 0.0
	if ru.e.o.Price != nil {
		cost = ru.e.o.Price(model, u)
	}
	prev := ru.latest.Usage
	turn := max(ru.turn, 1)
	step.Turn = ru.turn
	step.Events = append(step.Events, extproc.UsageEvent(turn, Provider, model, u, cost, prev)) // no cache writes reported
	step.Events = append(step.Events, ru.changes.Since(ctx, turn)...)
	step.Call = &engine.Call{Provider: Provider, Model: model, Usage: u, CostUSD: cost, Duration: msDuration(dur)}
	if err := ru.commit(ctx, step); err != nil {
		return err
	}
	ru.last = &l
	return nil
}

// interrupted records a turn the engine ended: what was in progress, the
// calls dropped, the files changed so far.
func (ru *run) interrupted(ctx context.Context) error {
	step, _ := ru.endCall("interrupted")
	turn := max(ru.turn, 1)
	step.Turn = ru.turn
	var dropped []string
	for _, c := range ru.calls {
		dropped = append(dropped, c.name)
	}
	if len(dropped) == 0 {
		dropped = []string{"model call"}
	}
	clear(ru.calls)
	step.Events = append(step.Events, event.Interrupted{Turn: turn, Dropped: dropped})
	step.Events = append(step.Events, ru.changes.Since(ctx, turn)...)
	return ru.commit(ctx, step)
}

// abandonCall stores what the model call in progress said before the run's
// context ended.
func (ru *run) abandonCall(ctx context.Context) {
	if step, ok := ru.endCall("interrupted"); ok {
		_ = ru.commit(ctx, step) // best effort: the session keeps the rest
	}
}

// model is the model the task runs on as far as the engine knows it.
func (ru *run) model() string {
	if ru.cliModel != "" {
		return ru.cliModel
	}
	return words.Or(ru.e.model(ru.latest), "gemini-cli")
}
