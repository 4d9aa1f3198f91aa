package claude

import (
	"context"
	"encoding/json"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
)

// denial is one entry of a result's permission_denials.
type denial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// deniedReason is the reason the observations give Claude Code's refusals.
const deniedReason = "refused by Claude Code's permissions (the task's sandbox manifest)"

// denials observes the refusals a result reports (agent.permission_denied)
// and, with a manifest and a recovery strategy, decides about the first
// (package lifecycle): the decision's manifest and events are returned for
// the result's step; a retry restarts the CLI with the widened manifest's
// flags, resuming its session; a question ends the run waiting.
func (ru *run) denials(turn int, l line) ([]event.Payload, *lifecycleDecision) {
	var evs []event.Payload
	var first *event.PermissionDenied
	for _, raw := range l.PermissionDenials {
		var d denial
		if json.Unmarshal(raw, &d) != nil || d.ToolName == "" {
			continue
		}
		pd := lifecycle.Denial(turn, d.ToolName, d.ToolInput, deniedReason)
		evs = append(evs, pd)
		if first == nil {
			first = &pd
		}
	}
	if first == nil || ru.cut || ru.e.o.Recovery == nil || ru.latest.Manifest == nil {
		return evs, nil
	}
	dec := ru.e.o.Recovery.Decide(*ru.latest.Manifest, *first)
	evs = append(evs, dec.Events...)
	return evs, &lifecycleDecision{dec}
}

// lifecycleDecision is a recovery decision the run acts on after its step.
type lifecycleDecision struct{ lifecycle.Decision }

// act carries out a decision once its step is stored.
func (ru *run) act(d *lifecycleDecision) {
	switch d.Action {
	case lifecycle.Retry:
		ru.restart = true
		ru.note = "Your sandbox now allows what was refused (" + d.Fix.String() + "). Do it again and carry on with the task."
	case lifecycle.Ask:
		ru.ask = d.Question
	}
}

// answerPending applies the user's reply to a widening the task asked
// them about (the interactive strategy): the reply is the last message
// from the user waiting for the task; the widening is made or dropped
// before the CLI starts, so its flags follow. The message itself still
// reaches the agent at the boundary.
func (ru *run) answerPending(ctx context.Context) (engine.Outcome, bool) {
	if err := extproc.Answer(ctx, ru.h, ru.latest.Manifest, ru.e.o.Recovery, ru.turn, ru.commit); err != nil {
		return ru.stopOrPause(ctx, err), true
	}
	return engine.Outcome{}, false
}
