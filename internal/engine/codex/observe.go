package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Provider is the provider name the cost ledger records for Codex's calls.
const Provider = "openai"

// notification turns one notification of the CLI into observations and
// stored conversation.
func (ru *run) notification(ctx context.Context, m msg) error {
	switch m.Method {
	case "turn/started":
		var p turnParams
		if json.Unmarshal(m.Params, &p) == nil && ru.turnID == "" {
			ru.turnID = p.Turn.ID
		}
	case "item/started":
		var p itemParams
		if json.Unmarshal(m.Params, &p) != nil {
			return nil
		}
		return ru.itemStarted(ctx, p.Item)
	case "item/completed":
		var p itemParams
		if json.Unmarshal(m.Params, &p) != nil {
			return nil
		}
		return ru.itemCompleted(ctx, p.Item)
	case "thread/tokenUsage/updated":
		var p usageParams
		if json.Unmarshal(m.Params, &p) == nil {
			ru.usage = p.TokenUsage.Total
		}
	case "error":
		var p errorParams
		if json.Unmarshal(m.Params, &p) != nil {
			return nil
		}
		text := p.Message
		if p.Error != nil {
			text = words.Or(p.Error.Message, text)
		}
		if p.WillRetry {
			attempt, of := retryCount(text)
			ru.h.Emit(event.ModelRetry{Turn: max(ru.turn, 1), Attempt: attempt, MaxAttempts: of, Class: words.Clip(text, 200)})
		} else {
			ru.turnErr = text
		}
	case "turn/completed":
		var p turnParams
		if json.Unmarshal(m.Params, &p) != nil {
			return nil
		}
		if ru.turnID != "" && p.Turn.ID != ru.turnID {
			return nil // a turn of another run's (an abandoned turn/start)
		}
		return ru.turnCompleted(ctx, p.Turn)
	}
	return nil
}

var retryRE = regexp.MustCompile(`(\d+)/(\d+)`)

// retryCount reads "Reconnecting... 2/5 (…)".
func retryCount(s string) (attempt, of int) {
	m := retryRE.FindStringSubmatch(s)
	if m == nil {
		return 1, 0
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a, b
}

// beginCall starts a model call: the observations' turn.
func (ru *run) beginCall() []event.Payload {
	if ru.inAsst {
		return nil
	}
	ru.inAsst = true
	ru.turn++
	ru.callStart = ru.h.Now()
	ru.asst = llm.Message{Role: llm.RoleAssistant}
	ev := event.TurnStarted{Turn: ru.turn, Engine: Name, Model: ru.modelLabel(), Resumed: ru.resumed}
	ru.resumed = false
	return []event.Payload{ev}
}

// flushCall stores the model call's message and ends its turn.
func (ru *run) flushCall(stop string) (msgs []llm.Message, evs []event.Payload) {
	if !ru.inAsst {
		return nil, nil
	}
	ru.inAsst = false
	if len(ru.asst.Parts) > 0 {
		msgs = []llm.Message{ru.asst}
	}
	ru.asst = llm.Message{}
	return msgs, []event.Payload{event.TurnEnded{Turn: ru.turn, StopReason: stop, Attempts: 1, DurationMs: ru.h.Now().Sub(ru.callStart).Milliseconds()}}
}

// observedCall is an item's tool call in the observations' vocabulary:
// the native engine's names and argument keys, so that the Watcher's
// detectors read a Codex task as they read a native one.
func observedCall(it item) (name string, args json.RawMessage, ok bool) {
	var v any
	switch it.Type {
	case "commandExecution":
		name, v = "bash", map[string]any{"command": unwrapShell(it.Command)}
	case "fileChange":
		paths := make([]string, 0, len(it.Changes))
		for _, c := range it.Changes {
			paths = append(paths, c.Path)
		}
		name, v = "edit_file", map[string]any{"paths": paths}
	case "mcpToolCall":
		name = strings.ToLower(it.Tool)
		if json.Unmarshal(it.Arguments, &v) != nil || v == nil {
			v = map[string]any{}
		}
	default:
		return "", nil, false
	}
	b, _ := json.Marshal(v) // map keys sorted: canonical
	return name, b, true
}

// shells are the wrappers Codex reports its commands in ("/bin/bash -lc
// 'echo hi'"): the observations carry the command itself, as the model
// wrote it, so the Watcher and the denial recovery see what ran.
var shells = []string{"/bin/bash -lc ", "bash -lc ", "/bin/bash -c ", "bash -c ", "/bin/zsh -lc ", "zsh -lc ", "/bin/sh -c ", "sh -c "}

// unwrapShell is cmd without its shell wrapper when it has one whose
// argument is one single-quoted word.
func unwrapShell(cmd string) string {
	for _, sh := range shells {
		rest, ok := strings.CutPrefix(cmd, sh)
		if !ok {
			continue
		}
		if w, ok := singleQuoted(rest); ok {
			return w
		}
		return cmd
	}
	return cmd
}

// singleQuoted reads s as one shell word made of single-quoted parts,
// with an escaped quote (backslash, quote) between two of them standing
// for a quote.
func singleQuoted(s string) (string, bool) {
	var b strings.Builder
	for s != "" {
		switch {
		case strings.HasPrefix(s, "'"):
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return "", false
			}
			b.WriteString(s[1 : 1+end])
			s = s[2+end:]
		case strings.HasPrefix(s, `\'`):
			b.WriteByte('\'')
			s = s[2:]
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

func (ru *run) itemStarted(ctx context.Context, it item) error {
	name, args, ok := observedCall(it)
	if !ok {
		return nil
	}
	evs := ru.beginCall()
	ru.calls[it.ID] = pendingCall{name: name, args: args, start: ru.h.Now()}
	evs = append(evs, event.ToolCall{Turn: ru.turn, CallID: it.ID, Name: name, Args: args})
	ru.asst.Parts = append(ru.asst.Parts, llm.ToolCallPart(llm.ToolCall{ID: it.ID, Name: name, Input: args}))
	return ru.commit(ctx, engine.Step{Turn: ru.turn, Events: evs})
}

func (ru *run) itemCompleted(ctx context.Context, it item) error {
	switch it.Type {
	case "agentMessage":
		text := strings.TrimSpace(it.Text)
		if text == "" {
			return nil
		}
		evs := ru.beginCall()
		ru.lastText = text
		ru.asst.Parts = append(ru.asst.Parts, llm.TextPart(it.Text))
		evs = append(evs, event.Text{Turn: ru.turn, Text: text})
		return ru.commit(ctx, engine.Step{Turn: ru.turn, Events: evs})
	case "commandExecution", "fileChange", "mcpToolCall":
		return ru.toolResult(ctx, it)
	}
	return nil
}

// toolResult stores the result of one of the CLI's tool calls.
func (ru *run) toolResult(ctx context.Context, it item) error {
	c, ok := ru.calls[it.ID]
	if !ok {
		name, args, _ := observedCall(it)
		c = pendingCall{name: name, args: args, start: ru.h.Now()}
		// A call that started before this run: store it too, so the
		// result has its call.
		ru.beginCall()
		ru.asst.Parts = append(ru.asst.Parts, llm.ToolCallPart(llm.ToolCall{ID: it.ID, Name: name, Input: args}))
	}
	delete(ru.calls, it.ID)
	msgs, evs := ru.flushAsstOnly()
	content, isErr := resultText(it)
	r := event.ToolResult{Turn: ru.turn, CallID: it.ID, Name: c.name, Error: isErr, Size: len(content),
		Preview: event.ResultPreview(content), Tail: event.ResultTail(content), Hash: event.ContentHash(content),
		DurationMs: ru.h.Now().Sub(c.start).Milliseconds()}
	evs = append(evs, r)
	if it.Type == "fileChange" && !isErr {
		for _, ch := range it.Changes {
			if path := ru.changes.Rel(ch.Path); path != "" {
				op := map[string]string{"add": "created", "delete": "deleted"}[ch.Kind.Type]
				evs = append(evs, event.FileChanged{Turn: ru.turn, Path: path, Op: words.Or(op, "modified"), Tool: "edit_file"})
				ru.changes.Named(path)
			}
		}
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.ToolResultPart(llm.ToolResult{CallID: it.ID, Content: content, IsError: isErr})}})
	if len(ru.calls) == 0 {
		_, end := ru.flushCall("tool_use")
		evs = append(evs, end...)
	}
	if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Messages: msgs, Events: evs}); err != nil {
		return err
	}
	if it.Status == "declined" {
		return ru.denied(ctx, it, c)
	}
	return nil
}

// flushAsstOnly stores the model call's message before its results, the
// call going on.
func (ru *run) flushAsstOnly() ([]llm.Message, []event.Payload) {
	if !ru.inAsst || len(ru.asst.Parts) == 0 {
		return nil, nil
	}
	m := ru.asst
	ru.asst = llm.Message{Role: llm.RoleAssistant}
	return []llm.Message{m}, nil
}

// resultText is an item's result as text, and whether it failed.
func resultText(it item) (string, bool) {
	out := ""
	if it.AggregatedOutput != nil {
		out = *it.AggregatedOutput
	}
	isErr := it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0)
	switch it.Type {
	case "commandExecution":
		if it.ExitCode != nil {
			out += fmt.Sprintf("\n(exit code %d)", *it.ExitCode)
		}
	case "fileChange":
		if out == "" {
			out = "patch " + it.Status
		}
	case "mcpToolCall":
		if len(it.ErrorVal) > 0 && string(it.ErrorVal) != "null" {
			out, isErr = string(it.ErrorVal), true
		}
	}
	if it.Status == "declined" {
		out = "declined by the sandbox policy" + out
	}
	return strings.TrimSpace(out), isErr
}

// denied reports a tool call the CLI's sandbox refused and lets the
// lifecycle's recovery widen the task's manifest (within the user's
// policy): the widened manifest holds from the next turn on, which says so.
func (ru *run) denied(ctx context.Context, it item, c pendingCall) error {
	tool := "Bash"
	if it.Type == "fileChange" {
		tool = "Edit"
	}
	d := lifecycle.Denial(ru.turn, tool, c.args, "declined by Codex's sandbox")
	if ru.e.o.Recovery == nil || ru.latest.Manifest == nil {
		ru.h.Emit(d)
		return nil
	}
	dec := ru.e.o.Recovery.Decide(*ru.latest.Manifest, d)
	m := dec.Manifest
	step := engine.Step{Turn: ru.turn, Events: append([]event.Payload{d}, dec.Events...), Manifest: &m}
	if err := ru.commit(ctx, step); err != nil {
		return err
	}
	switch dec.Action {
	case lifecycle.Retry:
		ru.retryNote = engine.Note(fmt.Sprintf("The task's sandbox now allows what was refused (%s); try it again.", dec.Fix))
	case lifecycle.Ask:
		ru.asked = dec.Question
	}
	return nil
}

// turnCompleted ends the CLI's turn: the objects its commands wrote moved
// into the shared store, the model call's message, its usage into the
// ledger, the files changed that no tool result named (a worktree
// snapshot), and how the turn ended.
func (ru *run) turnCompleted(ctx context.Context, t turn) error {
	ru.p.Settle()
	ru.turnDone, ru.turnStatus = true, t.Status
	if t.Error != nil {
		ru.turnErr = strings.TrimSpace(words.Or(t.Error.Message, ru.turnErr) + " " + t.Error.AdditionalDetails)
	}
	msgs, evs := ru.flushCall(words.Or(t.Status, "end_turn"))
	u := llm.Usage{
		InputTokens:      ru.usage.InputTokens - ru.usageTurn.InputTokens - (ru.usage.CachedInputTokens - ru.usageTurn.CachedInputTokens),
		OutputTokens:     ru.usage.OutputTokens - ru.usageTurn.OutputTokens,
		CacheReadTokens:  ru.usage.CachedInputTokens - ru.usageTurn.CachedInputTokens,
		CacheWriteTokens: ru.usage.CacheWriteInputTokens - ru.usageTurn.CacheWriteInputTokens,
	}
	u.InputTokens = max(u.InputTokens, 0)
	ru.usageTurn = ru.usage
	cost := 0.0
	if ru.e.o.Catalogue != nil {
		if mc, ok := ru.e.o.Catalogue.Lookup(Provider, ru.modelLabel()); ok {
			cost = mc.Cost(u)
		}
	}
	prev := ru.latest.Usage
	turnN := max(ru.turn, 1)
	evs = append(evs, extproc.UsageEvent(turnN, Provider, ru.modelLabel(), u, cost, prev))
	evs = append(evs, ru.changes.Since(ctx, turnN)...)
	if t.Status == "interrupted" {
		dropped := slices.Sorted(func(yield func(string) bool) {
			for _, c := range ru.calls {
				if !yield(c.name) {
					return
				}
			}
		})
		if len(dropped) == 0 {
			dropped = []string{"model call"}
		}
		evs = append(evs, event.Interrupted{Turn: turnN, Dropped: dropped})
	}
	clear(ru.calls)
	var dur time.Duration
	return ru.commit(ctx, engine.Step{Turn: ru.turn, Messages: msgs, Events: evs,
		Call: &engine.Call{Provider: Provider, Model: ru.modelLabel(), Usage: u, CostUSD: cost, Duration: dur}})
}

// serverRequest answers a request of the CLI. An approval is answered by
// the task's manifest (the CLI asks when the manifest names commands:
// approvalPolicy): a command or an edit it allows is accepted; one it does
// not is declined, and the declined item that follows is the denial the
// lifecycle recovers from (denied). Without a manifest, approvals are
// declined (approval_policy "never": none should come). Anything else is
// refused.
func (ru *run) serverRequest(ctx context.Context, m msg) error {
	if strings.HasSuffix(m.Method, "/requestApproval") || strings.HasSuffix(m.Method, "Approval") {
		decision := "decline"
		if ru.approves(m) {
			decision = "accept"
		}
		if err := ru.p.WriteLine(response{ID: *m.ID, Result: map[string]any{"decision": decision}}); err != nil {
			return ru.crashed(err)
		}
		if decision == "decline" && !itemApprovals[m.Method] {
			// No declined item follows to report it.
			ru.h.Emit(lifecycle.Denial(ru.turn, "Bash", m.Params, "approval requested by Codex ("+m.Method+"), declined"))
		}
		return nil
	}
	type errResp struct {
		ID    int64    `json:"id"`
		Error rpcError `json:"error"`
	}
	if err := ru.p.WriteLine(errResp{ID: *m.ID, Error: rpcError{Code: -32601, Message: "not supported by neuraphage"}}); err != nil {
		return ru.crashed(err)
	}
	return nil
}

// itemApprovals are the approval requests for an item: a declined one
// completes as a declined item, the denial denied reports.
var itemApprovals = map[string]bool{"item/commandExecution/requestApproval": true, "item/fileChange/requestApproval": true}

// approves reports whether the task's manifest allows what an approval
// request asks for: a command (item/commandExecution/requestApproval) or
// an edit (item/fileChange/requestApproval).
func (ru *run) approves(m msg) bool {
	man := ru.latest.Manifest
	if man == nil {
		return false
	}
	switch m.Method {
	case "item/commandExecution/requestApproval": // params.command is Codex's, with its shell wrapper
		var p struct {
			Command string `json:"command"`
		}
		return json.Unmarshal(m.Params, &p) == nil && p.Command != "" && lifecycle.AllowsCommand(*man, unwrapShell(p.Command))
	case "item/fileChange/requestApproval":
		return len(man.Writable) > 0 && slices.ContainsFunc(man.Tools, func(t string) bool { return t == "Write" || t == "Edit" })
	}
	return false
}

// approvalPolicy is the CLI's approval policy for a turn under manifest
// m: "untrusted" when m names the commands the agent may run (the CLI
// asks before any command it does not hold safe, and serverRequest
// answers by m), else "" (the command line's "never" holds).
func approvalPolicy(m *task.Manifest) string {
	if m != nil && len(m.Commands) > 0 {
		return "untrusted"
	}
	return ""
}

// modelLabel is the model the task runs on as far as the engine knows it.
func (ru *run) modelLabel() string {
	if ru.model != "" {
		return ru.model
	}
	return words.Or(ru.modelName(), "codex")
}

// sandboxPolicy is the CLI's sandbox for a turn under manifest m (nil
// when the task has none: the command line's settings hold), as
// lifecycle.Codex maps it onto the command line. Inside the task sandbox
// (external) the CLI's own cannot start (bubblewrap cannot map its user
// namespace under Landlock: "bwrap: setting up uid map: Permission
// denied", and the command never runs): the CLI is told that an external
// sandbox confines it, and the Landlock policy holds it to the manifest.
func sandboxPolicy(m *task.Manifest, network, external bool) map[string]any {
	if external {
		access := "restricted"
		if network {
			access = "enabled"
		}
		return map[string]any{"type": "externalSandbox", "networkAccess": access}
	}
	if m == nil {
		return nil
	}
	writes := len(m.Writable) > 0 && slices.ContainsFunc(m.Tools, func(t string) bool { return t == "Write" || t == "Edit" || t == "Bash" })
	if !writes {
		return map[string]any{"type": "readOnly", "networkAccess": network}
	}
	roots := []string{}
	for _, p := range m.Writable {
		if filepath.IsAbs(p) {
			roots = append(roots, p)
		}
	}
	return map[string]any{"type": "workspaceWrite", "writableRoots": roots, "networkAccess": network,
		"excludeTmpdirEnvVar": false, "excludeSlashTmp": false}
}
