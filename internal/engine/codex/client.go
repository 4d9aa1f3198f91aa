package codex

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// The engine's side of the JSON-RPC conversation with the app-server:
// requests and their answers, the CLI's own requests, and the steer of a
// running turn.

// steer hands the messages waiting (no pause: the boundary takes it, with
// the others in order) to the running turn through turn/steer, with the
// turn's id. Their receipt is committed when the CLI accepts the steer.
func (ru *run) steer(ctx context.Context) error {
	if !ru.waiting || ru.turnID == "" || ru.turnDone || ru.interrupting {
		return nil
	}
	ru.waiting = false
	inbox, err := ru.h.Inbox(ctx)
	if err != nil {
		return fmt.Errorf("reading the task's messages: %w", err)
	}
	var shown []inject.Injection
	for _, inj := range inbox {
		if inj.Kind == inject.Pause {
			return nil
		}
		if !ru.inflight[inj.ID] {
			shown = append(shown, inj)
		}
	}
	if len(shown) == 0 {
		return nil
	}
	text := extproc.Message("", shown)
	for _, inj := range shown {
		ru.inflight[inj.ID] = true
	}
	ru.steering++
	if err := ru.send("turn/steer", map[string]any{"threadId": ru.thread, "expectedTurnId": ru.turnID, "input": textInput(text)},
		pending{method: "turn/steer", injs: shown, text: text}); err != nil {
		return ru.crashed(err)
	}
	return nil
}

// steered handles turn/steer's answer: accepted, the messages are
// delivered; refused (the turn ended meanwhile), they wait for the next
// boundary.
func (ru *run) steered(ctx context.Context, pd pending, m msg) error {
	ru.steering--
	for _, inj := range pd.injs {
		delete(ru.inflight, inj.ID)
	}
	if m.Error != nil {
		ru.log.Info("the CLI refused a steer; the messages wait for the next turn", "err", m.Error.Message)
		return nil
	}
	return ru.commit(ctx, engine.Step{Turn: ru.turn, Messages: []llm.Message{llm.UserText(pd.text)}, Delivered: pd.injs,
		Events: []event.Payload{engine.Receipt(ru.turn, pd.injs, ru.h.Now())}})
}

// dispatch handles one message of the CLI.
func (ru *run) dispatch(ctx context.Context, m msg) error {
	switch {
	case m.ID != nil && m.Method == "":
		pd, ok := ru.pending[*m.ID]
		delete(ru.pending, *m.ID)
		if !ok {
			return nil
		}
		switch pd.method {
		case "turn/steer":
			return ru.steered(ctx, pd, m)
		case "turn/interrupt":
			if m.Error != nil {
				ru.log.Warn("the CLI refused an interrupt", "err", m.Error.Message)
				ru.interrupting = false
			}
		}
		return nil
	case m.ID != nil:
		return ru.serverRequest(ctx, m)
	default:
		return ru.notification(ctx, m)
	}
}

// send writes a request; its response is handled by dispatch.
func (ru *run) send(method string, params any, pd pending) error {
	ru.nextID++
	id := ru.nextID
	ru.pending[id] = pd
	if err := ru.p.WriteLine(request{ID: &id, Method: method, Params: params}); err != nil {
		delete(ru.pending, id)
		return err
	}
	return nil
}

func (ru *run) notify(method string, params any) error {
	return ru.p.WriteLine(request{Method: method, Params: params})
}

// call sends a request and handles the CLI's messages until its response.
func (ru *run) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ru.nextID++
	id := ru.nextID
	if err := ru.p.WriteLine(request{ID: &id, Method: method, Params: params}); err != nil {
		return nil, ru.crashed(err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case m, ok := <-ru.out.C:
			if !ok {
				return nil, ru.crashed(ru.out.Err())
			}
			if m.ID != nil && *m.ID == id && m.Method == "" {
				if m.Error != nil {
					return nil, fmt.Errorf("%s: %w", method, m.Error)
				}
				return m.Result, nil
			}
			if err := ru.dispatch(ctx, m); err != nil {
				return nil, err
			}
		}
	}
}
