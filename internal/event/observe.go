package event

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

// ContentHash is the hash engines put in ToolResult.Hash: 16 hex digits of
// the content's SHA-256.
func ContentHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// Observations: what every engine reports about a running task, in one
// vocabulary. Supervisors read only these (and task.status); they subscribe
// to the "agent" prefix. Each carries the engine's turn number.
const (
	KindTurnStarted Kind = "agent.turn.started"
	KindTurnEnded   Kind = "agent.turn.ended"
	KindText        Kind = "agent.text"
	KindTextDelta   Kind = "agent.text.delta"
	KindToolCall    Kind = "agent.tool.call"
	KindToolResult  Kind = "agent.tool.result"
	KindUsage       Kind = "agent.usage"
	KindFileChanged Kind = "agent.file.changed"
	KindNeedsInput  Kind = "agent.needs_input"
	KindCompleted   Kind = "agent.completed"
	KindFailed      Kind = "agent.failed"
	KindDelivered   Kind = "agent.delivered"
	KindInterrupted Kind = "agent.interrupted"
	KindLearning    Kind = "agent.learning"
	KindModelError  Kind = "agent.model_error"
	KindModelRetry  Kind = "agent.model_retry"
	// kindModelRetryOld is the name logs written before 0.19 give it.
	kindModelRetryOld Kind = "agent.model.retry"
)

// TurnStarted: the engine begins turn Turn (a model call, or a CLI agent's
// reply to one input). The native engine emits it as its model call starts,
// so a turn started with no reply yet (no Text, ToolCall or Usage of the
// turn) is a model call in progress.
type TurnStarted struct {
	Turn   int    `json:"turn"`
	Engine string `json:"engine"`
	Model  string `json:"model,omitempty"`
	// Resumed is set on the first turn after a restart from a stored
	// conversation.
	Resumed bool `json:"resumed,omitempty"`
}

// EventKind implements Payload.
func (TurnStarted) EventKind() Kind { return KindTurnStarted }

// TurnEnded: turn Turn ended with the model's stop reason.
type TurnEnded struct {
	Turn       int    `json:"turn"`
	StopReason string `json:"stop_reason"`
	// Attempts is how many model calls the turn took (retries included).
	Attempts   int   `json:"attempts,omitempty"`
	DurationMs int64 `json:"duration_ms"`
}

// EventKind implements Payload.
func (TurnEnded) EventKind() Kind { return KindTurnEnded }

// Text is the assistant's complete text of one turn.
type Text struct {
	Turn int    `json:"turn"`
	Text string `json:"text"`
}

// EventKind implements Payload.
func (Text) EventKind() Kind { return KindText }

// TextDelta is a provisional piece of assistant text as it streams. It is
// transient: never logged, and dropped for slow subscribers. Reset set means
// "discard the deltas of this turn so far" (the call was retried).
type TextDelta struct {
	Turn  int    `json:"turn"`
	Text  string `json:"text,omitempty"`
	Reset bool   `json:"reset,omitempty"`
}

// EventKind implements Payload.
func (TextDelta) EventKind() Kind { return KindTextDelta }

// Transient implements the transient marker.
func (TextDelta) Transient() bool { return true }

// ToolCall: the model asked for a tool. Args are the call's input in
// canonical JSON (keys sorted, no insignificant space), so equal calls have
// equal Args.
type ToolCall struct {
	Turn   int             `json:"turn"`
	CallID string          `json:"call_id"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args"`
}

// EventKind implements Payload.
func (ToolCall) EventKind() Kind { return KindToolCall }

// ToolResult: a tool call finished.
type ToolResult struct {
	Turn   int    `json:"turn"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Error is set when the call failed (the model was told so).
	Error bool `json:"error,omitempty"`
	// Size is the result's size in bytes before truncation for the model.
	Size int `json:"size"`
	// Preview is the start of the result, for displays.
	Preview string `json:"preview,omitempty"`
	// Tail is the end of a result longer than its preview (where errors
	// usually are), so a supervisor can judge what the result says.
	Tail string `json:"tail,omitempty"`
	// Hash identifies the whole result (ContentHash): equal hashes are
	// equal results.
	Hash       string `json:"hash,omitempty"`
	DurationMs int64  `json:"duration_ms"`
}

// EventKind implements Payload.
func (ToolResult) EventKind() Kind { return KindToolResult }

// Usage is what one model call cost. The numbers are for the call, never
// cumulative: a supervisor judging a runaway looks at rates, and a long
// healthy task is not a runaway. Totals are the task's running sums, for
// displays and budgets.
type Usage struct {
	Turn             int     `json:"turn"`
	Provider         string  `json:"provider,omitempty"`
	Model            string  `json:"model,omitempty"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_write_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd"`
	TotalTokens      int64   `json:"total_tokens"`
	TotalCostUSD     float64 `json:"total_cost_usd"`
}

// EventKind implements Payload.
func (Usage) EventKind() Kind { return KindUsage }

// FileChanged: a file in the task's working directory changed.
type FileChanged struct {
	Turn int    `json:"turn"`
	Path string `json:"path"`
	// Op is created, modified or deleted.
	Op string `json:"op"`
	// Tool is what changed it: write_file, edit_file, or bash (found through
	// the worktree's git status).
	Tool string `json:"tool"`
	// Sum is the file's content after the change, as "SIZE:HASH" (the
	// first 16 bytes of its SHA-256, in hex), so that rewriting the same
	// bytes or returning to earlier content is known as such; empty for a
	// deleted file, a file too large to read cheaply, or when more files
	// changed than are summed (see agent/tool.SumChanges).
	Sum string `json:"sum,omitempty"`
}

// EventKind implements Payload.
func (FileChanged) EventKind() Kind { return KindFileChanged }

// NeedsInput: the task asked its user a question and waits for an answer.
type NeedsInput struct {
	Turn     int    `json:"turn"`
	Question string `json:"question"`
}

// EventKind implements Payload.
func (NeedsInput) EventKind() Kind { return KindNeedsInput }

// Completed: the agent declared its task done.
type Completed struct {
	Turn    int    `json:"turn"`
	Summary string `json:"summary"`
}

// EventKind implements Payload.
func (Completed) EventKind() Kind { return KindCompleted }

// Failed: the agent, its engine or a limit ended the task.
type Failed struct {
	Turn   int    `json:"turn"`
	Reason string `json:"reason"`
}

// EventKind implements Payload.
func (Failed) EventKind() Kind { return KindFailed }

// Delivered is the receipt of injected messages: from this turn on the
// model sees them. It is committed with the conversation that holds them.
type Delivered struct {
	Turn         int     `json:"turn"`
	InjectionIDs []int64 `json:"injection_ids"`
	// Kinds are the injections' kinds, in the same order.
	Kinds []string `json:"kinds"`
	// LatencyMs is, per injection, the time from queueing to delivery.
	LatencyMs []int64 `json:"latency_ms"`
}

// EventKind implements Payload.
func (Delivered) EventKind() Kind { return KindDelivered }

// Interrupted: an urgent injection cut the turn in flight short.
type Interrupted struct {
	Turn int `json:"turn"`
	// Dropped says what was discarded: "model call" (its partial reply) or
	// the names of tool calls not run.
	Dropped []string `json:"dropped,omitempty"`
}

// EventKind implements Payload.
func (Interrupted) EventKind() Kind { return KindInterrupted }

// Learning: the agent recorded something others may need (relayed by the
// Syncer).
type Learning struct {
	Turn       int      `json:"turn"`
	LearningID int64    `json:"learning_id"`
	Summary    string   `json:"summary"`
	Tags       []string `json:"tags,omitempty"`
}

// EventKind implements Payload.
func (Learning) EventKind() Kind { return KindLearning }

// ModelError: a model call failed in a way the engine handled itself (the
// conversation did not fit the context window and was compacted). Class is
// the llm error class ("context_too_long").
type ModelError struct {
	Turn    int    `json:"turn"`
	Class   string `json:"class"`
	Message string `json:"message,omitempty"`
}

// EventKind implements Payload.
func (ModelError) EventKind() Kind { return KindModelError }

// ModelRetry: the model call of turn Turn failed and is being tried again
// (the retry layer's backoff). Attempt is the attempt about to start (2 for
// the first retry) of at most MaxAttempts; WaitMs is the backoff before it;
// Class, Status (the HTTP status, 0 when none came) and Message say why
// the last attempt failed. It is logged: retries
// are rare, and a loop of failed model calls must be visible after a
// restart too.
type ModelRetry struct {
	Turn        int    `json:"turn"`
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	Class       string `json:"class"`
	Status      int    `json:"status,omitempty"`
	Message     string `json:"message,omitempty"`
	WaitMs      int64  `json:"wait_ms"`
}

// EventKind implements Payload.
func (ModelRetry) EventKind() Kind { return KindModelRetry }

// observationPayload returns a zero payload for the observation kinds.
func observationPayload(k Kind) any {
	switch k {
	case KindTurnStarted:
		return &TurnStarted{}
	case KindTurnEnded:
		return &TurnEnded{}
	case KindText:
		return &Text{}
	case KindTextDelta:
		return &TextDelta{}
	case KindToolCall:
		return &ToolCall{}
	case KindToolResult:
		return &ToolResult{}
	case KindUsage:
		return &Usage{}
	case KindFileChanged:
		return &FileChanged{}
	case KindNeedsInput:
		return &NeedsInput{}
	case KindCompleted:
		return &Completed{}
	case KindFailed:
		return &Failed{}
	case KindDelivered:
		return &Delivered{}
	case KindInterrupted:
		return &Interrupted{}
	case KindLearning:
		return &Learning{}
	case KindModelError:
		return &ModelError{}
	case KindModelRetry, kindModelRetryOld:
		return &ModelRetry{}
	}
	return nil
}

// derefObservation turns the pointer observationPayload made back into a value.
func derefObservation(p any) (Payload, bool) {
	switch v := p.(type) {
	case *TurnStarted:
		return *v, true
	case *TurnEnded:
		return *v, true
	case *Text:
		return *v, true
	case *TextDelta:
		return *v, true
	case *ToolCall:
		return *v, true
	case *ToolResult:
		return *v, true
	case *Usage:
		return *v, true
	case *FileChanged:
		return *v, true
	case *NeedsInput:
		return *v, true
	case *Completed:
		return *v, true
	case *Failed:
		return *v, true
	case *Delivered:
		return *v, true
	case *Interrupted:
		return *v, true
	case *Learning:
		return *v, true
	case *ModelError:
		return *v, true
	case *ModelRetry:
		return *v, true
	}
	return nil, false
}

// ResultPreviewLen bounds a tool result's Preview and its Tail.
const ResultPreviewLen = 200

// ResultPreview is a tool result's Preview: its first ResultPreviewLen
// bytes, trimmed, cut on a rune boundary and marked "…" when cut.
func ResultPreview(content string) string {
	return words.Clip(strings.TrimSpace(content), ResultPreviewLen)
}

// ResultTail is a tool result's Tail: what its Preview did not show of
// the end, at most ResultPreviewLen bytes, or "" when the preview showed
// it all.
func ResultTail(content string) string {
	s := strings.TrimSpace(content)
	if len(s) <= ResultPreviewLen {
		return ""
	}
	return words.Tail(s, min(ResultPreviewLen, len(s)-ResultPreviewLen))
}
