package agent

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/agent/tool"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// runTools runs the calls of one reply in order and commits their results.
func (l *loop) runTools(ctx context.Context, calls []llm.ToolCall) (engine.Outcome, bool) {
	var (
		results []llm.Part
		evs     []event.Payload
		control *tool.Control
		skipped []string
	)
	for _, c := range calls {
		if ctx.Err() != nil || len(skipped) > 0 || l.interruptedNow(ctx) {
			why := "Not run: an urgent message arrived first. Run it again if it is still needed."
			if ctx.Err() != nil {
				why = "Not run: the task was stopped before this call."
			}
			skipped = append(skipped, c.Name)
			results = append(results, llm.ToolResultPart(llm.ToolResult{CallID: c.ID, IsError: true, Content: why}))
			continue
		}
		start := l.h.Now()
		res := l.runTool(ctx, c)
		content := engine.Neutralize(truncate(res.Content, l.maxOutput()))
		results = append(results, llm.ToolResultPart(llm.ToolResult{CallID: c.ID, Content: content, IsError: res.IsError}))
		evs = append(evs, event.ToolResult{Turn: l.turn, CallID: c.ID, Name: c.Name, Error: res.IsError,
			Size: len(res.Content), Preview: event.ResultPreview(res.Content), Tail: event.ResultTail(res.Content),
			Hash: event.ContentHash(res.Content), DurationMs: l.h.Now().Sub(start).Milliseconds()})
		sums := tool.SumChanges(l.env.Dir, res.Changed)
		for i, ch := range res.Changed {
			evs = append(evs, event.FileChanged{Turn: l.turn, Path: ch.Path, Op: string(ch.Op), Tool: c.Name, Sum: sums[i]})
		}
		if res.IsError {
			l.failures++
		} else {
			l.failures = 0
			l.lastProgress = l.h.Now()
		}
		if res.Learning != nil {
			lr := res.Learning
			if err := l.h.RecordLearning(ctx, engine.Learning{Turn: l.turn, Summary: lr.Summary, Detail: lr.Detail, Tags: lr.Tags}); err != nil {
				results[len(results)-1] = llm.ToolResultPart(llm.ToolResult{CallID: c.ID, IsError: true, Content: "recording the learning failed: " + err.Error()})
			}
		}
		if res.Control != nil && control == nil && !res.IsError {
			control = res.Control
		}
	}
	if len(skipped) > 0 && ctx.Err() == nil {
		evs = append(evs, event.Interrupted{Turn: l.turn, Dropped: skipped})
	}
	if end := l.turnEnd; end != nil {
		end.DurationMs = l.h.Now().Sub(l.turnStart).Milliseconds()
		evs = append(evs, *end)
		l.turnEnd = nil
	}
	var (
		out *engine.Outcome
		end event.Payload // the end of the task, once no message holds it
	)
	if control != nil && ctx.Err() == nil {
		switch control.Kind {
		case tool.Complete:
			end = event.Completed{Turn: l.turn, Summary: control.Text}
			out = &engine.Outcome{Status: engine.Completed, Reason: control.Text, Turn: l.turn}
		case tool.Fail:
			end = event.Failed{Turn: l.turn, Reason: control.Text}
			out = &engine.Outcome{Status: engine.Failed, Reason: control.Text, Turn: l.turn}
		case tool.AskUser:
			evs = append(evs, event.NeedsInput{Turn: l.turn, Question: control.Text})
			out = &engine.Outcome{Status: engine.Waiting, Reason: control.Text, Turn: l.turn}
		}
	}
	cctx := ctx
	if ctx.Err() != nil {
		// Keep what ran: results of calls that finished are stored even as
		// the run stops, so they are never run again.
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
		defer cancel()
	}
	if err := l.commit(cctx, engine.Step{Turn: l.turn, Messages: []llm.Message{{Role: llm.RoleUser, Parts: results}}, Events: evs}); err != nil {
		return l.stopOrPause(ctx, err), true
	}
	if ctx.Err() != nil {
		return l.outcome(engine.Stopped, ""), true
	}
	if end != nil {
		// A message that arrived while this turn ran (its model call, its
		// tools) and holds the end (the user's, a pause, an urgent one) is
		// given to the model before the task may end: a "stop, do not
		// merge" sent during the final turn is seen, not dropped. One
		// arriving after this look is caught by the executor, which closes
		// the task only when none waits.
		held, err := l.holdsEnd(ctx)
		if err != nil {
			return l.stopOrPause(ctx, fmt.Errorf("reading the task's messages: %w", err)), true
		}
		if held {
			l.held = "complete_task"
			if control.Kind == tool.Fail {
				l.held = "fail_task"
			}
			o, delivered, stop := l.boundary(ctx)
			switch {
			case stop:
				l.held = ""
				return o, true
			case delivered:
				return engine.Outcome{}, false
			}
			l.held = ""
		}
		if err := l.commit(ctx, engine.Step{Turn: l.turn, Events: []event.Payload{end}}); err != nil {
			return l.stopOrPause(ctx, err), true
		}
	}
	if out != nil {
		return *out, true
	}
	return engine.Outcome{}, false
}

// holdsEnd reports whether a message waits that must reach the model
// before the task may end (inject.Injection.HoldsEnd).
func (l *loop) holdsEnd(ctx context.Context) (bool, error) {
	inbox, err := l.h.Inbox(ctx)
	if err != nil {
		return false, err
	}
	for _, inj := range inbox {
		if inj.HoldsEnd() {
			return true, nil
		}
	}
	return false, nil
}

// interruptedNow reports whether an urgent injection is waiting, consuming
// the signal.
func (l *loop) interruptedNow(ctx context.Context) bool {
	select {
	case <-l.h.Interrupts():
		return l.h.UrgentWaiting(ctx)
	default:
		return false
	}
}

func (l *loop) runTool(ctx context.Context, c llm.ToolCall) (res tool.Result) {
	t, ok := tool.Find(l.e.tools, c.Name)
	if !ok {
		names := make([]string, len(l.e.defs))
		for i, d := range l.e.defs {
			names[i] = d.Name
		}
		return tool.Result{IsError: true, Content: fmt.Sprintf("There is no tool %q. The tools are: %s.", c.Name, strings.Join(names, ", "))}
	}
	defer func() {
		if p := recover(); p != nil {
			res = tool.Result{IsError: true, Content: fmt.Sprintf("The tool %s crashed: %v", c.Name, p)}
		}
	}()
	return t.Run(ctx, l.env, c.Input)
}

func (l *loop) maxOutput() int {
	if l.env.MaxOutput > 0 {
		return l.env.MaxOutput
	}
	return tool.DefaultMaxOutput
}

// truncate keeps the head and tail of s within n bytes, saying what was cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n*2/3, n/3
	cut := len(s) - head - tail
	h, t := s[:head], s[len(s)-tail:]
	for !utf8.ValidString(h) && len(h) > 0 {
		h = h[:len(h)-1]
	}
	for !utf8.ValidString(t) && len(t) > 0 {
		t = t[1:]
	}
	return fmt.Sprintf("%s\n[… %d bytes cut to fit the context …]\n%s", h, cut, t)
}
