package gemini

import (
	"context"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
)

// recoverDenials hands the turn's permission denials to the recovery
// strategy: a widened manifest is stored and the next turn retries; a
// question to the user ends the run waiting.
func (ru *run) recoverDenials(ctx context.Context) (engine.Outcome, bool) {
	denials := ru.denials
	ru.denials = nil
	if ru.e.o.Recover == nil || len(denials) == 0 || ru.latest.Manifest == nil {
		return engine.Outcome{}, false
	}
	dec := ru.e.o.Recover.Decide(*ru.latest.Manifest, denials[0])
	m := dec.Manifest
	if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Events: dec.Events, Manifest: &m}); err != nil {
		return ru.stopOrPause(ctx, err), true
	}
	switch dec.Action {
	case lifecycle.Retry:
		ru.retry = dec.Fix.String()
	case lifecycle.Ask:
		return engine.Outcome{Status: engine.Waiting, Reason: dec.Question, Turn: ru.turn}, true
	}
	return engine.Outcome{}, false
}

// answerPending applies the user's reply to a widening the task asked
// them about (the interactive strategy): the reply is the last message
// from the user waiting for the task; the widening is made or dropped
// before the first turn, so its policy follows. The message itself still
// reaches the agent as the turn's prompt.
func (ru *run) answerPending(ctx context.Context) (engine.Outcome, bool) {
	if err := extproc.Answer(ctx, ru.h, ru.latest.Manifest, ru.e.o.Recover, ru.turn, ru.commit); err != nil {
		return ru.stopOrPause(ctx, err), true
	}
	return engine.Outcome{}, false
}
