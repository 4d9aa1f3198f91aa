package agent

import (
	"context"
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// merge joins consecutive messages of one role (tool results followed by
// injected messages, say) into one, as the providers' turn rules want. Tool
// results stay first in a merged user message.
func merge(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			parts := make([]llm.Part, 0, len(out[n-1].Parts)+len(m.Parts))
			parts = append(parts, out[n-1].Parts...)
			parts = append(parts, m.Parts...)
			out[n-1] = llm.Message{Role: m.Role, Parts: parts}
			continue
		}
		out = append(out, m)
	}
	return out
}

// Context management. A token is taken as four bytes of text, the same
// estimate the limiter uses; the conversation is compacted when it passes
// compactAt of the window, down to compactTo.
const (
	bytesPerToken = 4
	compactAt     = 0.75
	compactTo     = 0.5
	// keepRecent messages are never elided or dropped.
	keepRecent = 8
	// elideOver is the size above which an old tool result is elided.
	elideOver = 512
)

func (l *loop) window() int {
	if l.e.o.ContextWindow != nil {
		if w := l.e.o.ContextWindow(l.model); w > 0 {
			return w
		}
	}
	return DefaultContextWindow
}

func (l *loop) tokens(msgs []llm.Message) int {
	return llm.TextBytes(l.system, msgs, l.e.defs) / bytesPerToken
}

// fitContext compacts the conversation when it nears the context window.
func (l *loop) fitContext(ctx context.Context) error {
	if float64(l.tokens(l.msgs)) < compactAt*float64(l.window()) {
		return nil
	}
	return l.compact(ctx, false)
}

// compact shrinks the conversation below compactTo of the window: first by
// eliding large old tool results, then by dropping the oldest turns after
// the task's first message. The result replaces the stored conversation.
// force compacts even when the estimate says it fits (the service said it
// does not).
func (l *loop) compact(ctx context.Context, force bool) error {
	target := int(compactTo * float64(l.window()))
	if force {
		target = min(target, l.tokens(l.msgs)*2/3)
	}
	msgs := make([]llm.Message, len(l.msgs))
	copy(msgs, l.msgs)
	elided := 0
	for i := 0; i < len(msgs)-keepRecent && l.tokens(msgs) > target; i++ {
		m := msgs[i]
		var parts []llm.Part
		changed := false
		for _, p := range m.Parts {
			if p.ToolResult != nil && len(p.ToolResult.Content) > elideOver {
				r := *p.ToolResult
				r.Content = fmt.Sprintf("[output of %d bytes elided to save context; run the tool again if you need it]", len(r.Content))
				p = llm.ToolResultPart(r)
				changed = true
				elided++
			}
			parts = append(parts, p)
		}
		if changed {
			msgs[i] = llm.Message{Role: m.Role, Parts: parts}
		}
	}
	dropped := 0
	for l.tokens(msgs) > target {
		// Drop from index 1 up to the next assistant message, so that every
		// tool result left still follows its call.
		k := -1
		for j := 2; j < len(msgs)-keepRecent; j++ {
			if msgs[j].Role == llm.RoleAssistant {
				k = j
				break
			}
		}
		if k < 0 {
			break
		}
		dropped += k - 1
		rest := msgs[k:]
		msgs = append([]llm.Message{msgs[0]}, rest...)
	}
	if elided == 0 && dropped == 0 {
		return fmt.Errorf("nothing left to compact (%d messages, about %d tokens)", len(msgs), l.tokens(msgs))
	}
	if dropped > 0 {
		note := llm.UserText(engine.Note(fmt.Sprintf("%d earlier messages were removed to fit the context window. "+
			"Re-read files you need instead of relying on memory of them.", dropped)))
		msgs = append([]llm.Message{msgs[0], note}, msgs[1:]...)
	}
	return l.commit(ctx, engine.Step{Turn: l.turn, Messages: msgs, Replace: true})
}
