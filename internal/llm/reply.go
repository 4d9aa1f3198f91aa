package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

// DecodeObject reads a model reply that must be one JSON object, alone or
// in a ```json code fence, into v. Anything else is an error saying what
// was wrong: an unclosed fence, no object, invalid JSON, or more after the
// object. Callers bound the reply's size and validate v's fields.
func DecodeObject(reply string, v any) error {
	body := strings.TrimSpace(reply)
	if rest, ok := strings.CutPrefix(body, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		inner, ok := strings.CutSuffix(strings.TrimSpace(rest), "```")
		if !ok {
			return errors.New("the reply opens a code fence and never closes it")
		}
		body = strings.TrimSpace(inner)
	}
	if !strings.HasPrefix(body, "{") {
		return fmt.Errorf("the reply is not a JSON object: %q", words.Clip(body, 80))
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the reply is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("the reply has more after its JSON object")
	}
	return nil
}

// Ask sends one question (a user message under system) at temperature 0
// and returns the complete response: the one-shot call of the internal
// personas (the watcher's judgement, the syncer's decision, the turn-end
// learning pass). A positive timeout bounds it.
func Ask(ctx context.Context, c Client, model, system, question string, maxTokens int, timeout time.Duration) (*Response, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	zero := 0.0
	return c.Complete(ctx, &Request{Model: model, System: system, MaxTokens: maxTokens, Temperature: &zero,
		Messages: []Message{UserText(question)}})
}
