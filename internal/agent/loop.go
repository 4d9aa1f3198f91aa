package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/agent/tool"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// loop is one run of one task.
type loop struct {
	e      *Engine
	r      engine.Run
	h      engine.Host
	client llm.Client
	model  string
	env    *tool.Env
	system string
	// persona and taskModel are the task's as this run last configured
	// itself; a change seen at a boundary switches prompt and model.
	persona, taskModel string

	msgs   []llm.Message
	turn   int
	latest task.Task // the task as last stored

	failures     int       // tool calls failed in a row
	lastProgress time.Time // last successful tool call
	idle         int       // replies in a row without a tool call
	resumed      bool      // the first turn of this run resumes a stored conversation

	turnStart time.Time        // when the turn in progress called the model
	turnEnd   *event.TurnEnded // its end, reported once its tools have run

	// held names the tool (complete_task, fail_task) whose end of the task
	// is held because messages arrived first: the boundary that delivers
	// them says so to the model.
	held string
}

// finalTimeout bounds the commits a run makes after its context ended.
const finalTimeout = 10 * time.Second

func (l *loop) run(ctx context.Context) engine.Outcome {
	if err := l.load(ctx); err != nil {
		return l.stopOrPause(ctx, fmt.Errorf("loading the conversation: %w", err))
	}
	l.lastProgress = l.h.Now()
	for {
		if ctx.Err() != nil {
			return l.outcome(engine.Stopped, "")
		}
		// The boundary: injections first.
		if out, _, stop := l.boundary(ctx); stop {
			return out
		}
		if last := l.msgs[len(l.msgs)-1]; last.Role == llm.RoleAssistant {
			// The model ended its turn without calling a tool and nothing
			// arrived for it.
			l.idle++
			if l.idle >= l.e.o.Limits.MaxIdleTurns {
				q := strings.TrimSpace(last.Text())
				if q == "" {
					q = "The agent stopped without a question or a result."
				}
				return l.wait(ctx, q)
			}
			note := llm.UserText(engine.Note("You ended your turn without calling a tool. Keep working on the task. " +
				"Call complete_task when it is done, ask_user if you need the user, fail_task if it cannot be done."))
			if err := l.commit(ctx, engine.Step{Turn: l.turn, Messages: []llm.Message{note}}); err != nil {
				return l.stopOrPause(ctx, err)
			}
			continue
		}
		if stop := l.h.Allow(ctx); stop != nil {
			return l.outcome(stop.Status, stop.Reason)
		}
		if reason := l.drift(); reason != "" {
			return l.outcome(engine.Paused, reason)
		}
		if err := l.fitContext(ctx); err != nil {
			return l.stopOrPause(ctx, err)
		}

		resp, interrupted, err := l.call(ctx)
		switch {
		case interrupted:
			l.h.Emit(event.Interrupted{Turn: l.turn, Dropped: []string{"model call"}})
			continue
		case ctx.Err() != nil:
			return l.outcome(engine.Stopped, "")
		case llm.ClassOf(err) == llm.ClassContextTooLong:
			l.h.Emit(event.ModelError{Turn: l.turn, Class: llm.ClassOf(err).String(), Message: event.ResultPreview(err.Error())})
			if cerr := l.compact(ctx, true); cerr != nil {
				return l.stopOrPause(ctx, fmt.Errorf("the conversation does not fit the model's context window: %w", cerr))
			}
			continue
		case err != nil:
			return l.outcome(engine.Paused, fmt.Sprintf("model call failed (%s): %v; resume to try again", llm.ClassOf(err), err))
		}
		calls, err := l.storeReply(ctx, resp)
		if err != nil {
			return l.stopOrPause(ctx, err)
		}
		if len(calls) == 0 {
			continue
		}
		l.idle = 0
		if out, stop := l.runTools(ctx, calls); stop {
			return out
		}
	}
}

// load reads the stored conversation, starting one when there is none and
// repairing one that a crash cut between a tool call and its result.
func (l *loop) load(ctx context.Context) error {
	msgs, err := l.h.Conversation(ctx)
	if err != nil {
		return err
	}
	l.msgs = msgs
	if len(msgs) == 0 {
		return l.commit(ctx, engine.Step{Messages: []llm.Message{llm.UserText(taskPrompt(l.r.Task))}})
	}
	l.resumed = true
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			l.turn++
		}
	}
	l.held = endCall(msgs)
	last := msgs[len(msgs)-1]
	if calls := last.ToolCalls(); last.Role == llm.RoleAssistant && len(calls) > 0 {
		// The daemon stopped after the model asked for these calls and before
		// their results were stored. They may or may not have run; running
		// them again could repeat a side effect, so the model is told.
		results := make([]llm.Part, len(calls))
		for i, c := range calls {
			results[i] = llm.ToolResultPart(llm.ToolResult{CallID: c.ID, IsError: true,
				Content: "Not known whether this call ran: Neuraphage restarted while it was in flight. Check its effect before running it again."})
		}
		return l.commit(ctx, engine.Step{Turn: l.turn, Messages: []llm.Message{{Role: llm.RoleUser, Parts: results}}})
	}
	return nil
}

// endCall returns the tool that ended the task in the stored conversation
// msgs, when it ends with that call and its result ("" otherwise): a run
// that resumes there was sent back because messages arrived as it ended.
func endCall(msgs []llm.Message) string {
	if len(msgs) < 2 || msgs[len(msgs)-1].Role != llm.RoleUser || msgs[len(msgs)-2].Role != llm.RoleAssistant {
		return ""
	}
	for _, c := range msgs[len(msgs)-2].ToolCalls() {
		if c.Name == "complete_task" || c.Name == "fail_task" {
			return c.Name
		}
	}
	return ""
}

// boundary delivers the injections waiting for the task. A pause ends the
// run; other injections join the conversation, committed with their
// receipt. It reports whether it delivered any.
func (l *loop) boundary(ctx context.Context) (out engine.Outcome, delivered, stop bool) {
	engine.Drain(l.h.Interrupts())
	t, err := l.h.Prepare(ctx)
	if err != nil {
		return l.stopOrPause(ctx, fmt.Errorf("preparing the task's messages: %w", err)), false, true
	}
	if err := l.adopt(t); err != nil {
		return l.outcome(engine.Paused, err.Error()), false, true
	}
	engine.Drain(l.h.Interrupts()) // Prepare's own messages interrupt nothing
	inbox, err := l.h.Inbox(ctx)
	if err != nil {
		return l.stopOrPause(ctx, fmt.Errorf("reading the task's messages: %w", err)), false, true
	}
	var (
		pauses, shown []inject.Injection
		parts         []llm.Part
	)
	for _, inj := range inbox {
		if inj.Kind == inject.Pause {
			pauses = append(pauses, inj)
			continue
		}
		shown = append(shown, inj)
		parts = append(parts, llm.TextPart(engine.Render(inj)))
	}
	if len(pauses) > 0 {
		// Only the pause is consumed; the other messages wait for the resume.
		reason := strings.TrimSpace(pauses[len(pauses)-1].Text)
		if reason == "" {
			reason = "paused"
		}
		if err := l.commit(ctx, engine.Step{Turn: l.turn, Delivered: pauses, Events: []event.Payload{engine.Receipt(l.turn, pauses, l.h.Now())}}); err != nil {
			return l.stopOrPause(ctx, err), false, true
		}
		return l.outcome(engine.Paused, reason), false, true
	}
	if len(shown) == 0 {
		return engine.Outcome{}, false, false
	}
	if l.held != "" {
		note := fmt.Sprintf("You called %s, but the messages below arrived before the task ended, so it has not ended. "+
			"Read them and act on them; call %s again if it still stands.", l.held, l.held)
		parts = append([]llm.Part{llm.TextPart(engine.Note(note))}, parts...)
	}
	msg := llm.Message{Role: llm.RoleUser, Parts: parts}
	if err := l.commit(ctx, engine.Step{Turn: l.turn, Messages: []llm.Message{msg}, Delivered: shown,
		Events: []event.Payload{engine.Receipt(l.turn+1, shown, l.h.Now())}}); err != nil {
		return l.stopOrPause(ctx, err), false, true
	}
	l.held = ""
	l.idle = 0
	return engine.Outcome{}, true, false
}

// adopt switches the run to t's persona and model when they changed (an
// escalation): the next model call has the new system prompt and model;
// the conversation is kept as it is.
func (l *loop) adopt(t task.Task) error {
	if t.ID == "" || t.Persona == l.persona && t.Model == l.taskModel {
		return nil
	}
	client, model, err := l.e.o.Model(t)
	if err != nil {
		return fmt.Errorf("switching to persona %s: %w", t.Persona, err)
	}
	l.client, l.model = client, model
	l.system = l.e.system(t, l.r.Dir)
	l.persona, l.taskModel = t.Persona, t.Model
	l.latest = t
	return nil
}

// drift returns why the task must pause for a drift limit, or "".
func (l *loop) drift() string {
	lim := l.e.o.Limits
	if l.failures >= lim.MaxToolFailures {
		return fmt.Sprintf("drift: %d tool calls failed in a row", l.failures)
	}
	if idle := l.h.Now().Sub(l.lastProgress); idle >= lim.NoProgress {
		return fmt.Sprintf("drift: no successful tool call for %s", idle.Round(time.Second))
	}
	return ""
}

// call makes one model call, cancelled early when an urgent injection
// arrives for the task.
func (l *loop) call(ctx context.Context) (resp *llm.Response, interrupted bool, err error) {
	l.turn++
	l.turnStart = l.h.Now()
	l.h.Emit(event.TurnStarted{Turn: l.turn, Engine: Name, Model: l.model, Resumed: l.resumed})
	l.resumed = false
	req := &llm.Request{Model: l.model, System: l.system, Messages: merge(l.msgs), Tools: l.e.defs, MaxTokens: l.e.o.MaxOutputTokens}

	callCtx, cancel := context.WithCancel(ctx)
	var (
		wg  sync.WaitGroup
		cut bool
	)
	wg.Go(func() {
		for {
			select {
			case <-callCtx.Done():
				return
			case <-l.h.Interrupts():
				if l.h.UrgentWaiting(callCtx) {
					cut = true
					cancel()
					return
				}
			}
		}
	})
	turn := l.turn
	// The retry layer tells of each retry; the Watcher shows the call as
	// retrying (its attempt, the last error) instead of a silent wait.
	obsCtx := llm.WithRetryObserver(callCtx, func(n llm.RetryNotice) {
		msg, status := "", 0
		if n.Err != nil {
			msg = event.ResultPreview(n.Err.Error())
		}
		if le := (*llm.Error)(nil); errors.As(n.Err, &le) {
			status = le.StatusCode
		}
		l.h.Emit(event.ModelRetry{Turn: turn, Attempt: n.Attempt + 1, MaxAttempts: n.MaxAttempts,
			Class: llm.ClassOf(n.Err).String(), Status: status, Message: msg, WaitMs: n.Wait.Milliseconds()})
	})
	resp, err = l.client.Stream(obsCtx, req, func(ev llm.Event) {
		switch ev.Kind {
		case llm.EventText:
			l.h.Emit(event.TextDelta{Turn: turn, Text: ev.Text})
		case llm.EventReset:
			l.h.Emit(event.TextDelta{Turn: turn, Reset: true})
		}
	})
	cancel()
	wg.Wait()
	if cut && err != nil && ctx.Err() == nil {
		return nil, true, err
	}
	return resp, false, err
}

// storeReply commits the model's reply with its cost, and returns the tool
// calls to run.
func (l *loop) storeReply(ctx context.Context, resp *llm.Response) ([]llm.ToolCall, error) {
	msg := resp.Message
	msg.Role = llm.RoleAssistant
	stop := resp.StopReason
	var extra []llm.Message
	if stop == llm.StopMaxTokens {
		// A reply cut at the output limit may hold a truncated tool call:
		// keep its text only and let the model continue.
		msg = textOnly(msg)
		extra = append(extra, llm.UserText(engine.Note("Your reply was cut off at the output limit. Continue exactly where you stopped.")))
	}
	empty := len(msg.Parts) == 0
	if empty {
		msg.Parts = []llm.Part{llm.TextPart("(no reply)")}
	}
	calls := msg.ToolCalls()
	u := resp.Usage
	prev := l.latest.Usage
	evs := []event.Payload{}
	if text := strings.TrimSpace(msg.Text()); text != "" && !empty {
		// The placeholder of an empty reply is not something it said.
		evs = append(evs, event.Text{Turn: l.turn, Text: text})
	}
	for _, c := range calls {
		evs = append(evs, event.ToolCall{Turn: l.turn, CallID: c.ID, Name: c.Name, Args: canonical(c.Input)})
	}
	evs = append(evs,
		event.Usage{Turn: l.turn, Provider: resp.Provider, Model: resp.Model,
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
			CostUSD:      resp.CostUSD,
			TotalTokens:  prev.InputTokens + prev.OutputTokens + u.Total(),
			TotalCostUSD: prev.CostUSD + resp.CostUSD})
	callTime := l.h.Now().Sub(l.turnStart)
	end := event.TurnEnded{Turn: l.turn, StopReason: string(stop), Attempts: resp.Attempts, DurationMs: callTime.Milliseconds()}
	if len(calls) == 0 {
		evs = append(evs, end)
	} else {
		// The turn ends once its tools have run (runTools reports it).
		l.turnEnd = &end
	}
	step := engine.Step{Turn: l.turn, Messages: append([]llm.Message{msg}, extra...), Events: evs,
		Call: &engine.Call{Provider: resp.Provider, Model: resp.Model, Usage: u, CostUSD: resp.CostUSD, Duration: callTime}}
	if err := l.commit(ctx, step); err != nil {
		return nil, err
	}
	return calls, nil
}

func textOnly(m llm.Message) llm.Message {
	out := llm.Message{Role: m.Role}
	for _, p := range m.Parts {
		if p.Text != "" {
			out.Parts = append(out.Parts, p)
		}
	}
	return out
}

// canonical re-encodes a JSON object with sorted keys and no space, so equal
// calls have equal arguments.
func canonical(raw json.RawMessage) json.RawMessage {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// commit stores a step and keeps the loop's view of the conversation and the
// task in step with the store.
func (l *loop) commit(ctx context.Context, s engine.Step) error {
	t, err := l.h.Commit(ctx, s)
	if err != nil {
		return err
	}
	l.latest = t
	if s.Replace {
		l.msgs = s.Messages
	} else {
		l.msgs = append(l.msgs, s.Messages...)
	}
	return nil
}

func (l *loop) wait(ctx context.Context, question string) engine.Outcome {
	l.h.Emit(event.NeedsInput{Turn: l.turn, Question: question})
	return l.outcome(engine.Waiting, question)
}

func (l *loop) outcome(s engine.Status, reason string) engine.Outcome {
	return engine.Outcome{Status: s, Reason: reason, Turn: l.turn}
}

// stopOrPause ends the run after an error of the runtime (not of the model):
// stopped when the run's context ended, else paused so nothing is lost.
func (l *loop) stopOrPause(ctx context.Context, err error) engine.Outcome {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return l.outcome(engine.Stopped, "")
	}
	return l.outcome(engine.Paused, "runtime error: "+err.Error())
}
