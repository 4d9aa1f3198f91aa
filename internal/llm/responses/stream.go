package responses

import (
	"encoding/json"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/sse"
)

// maxItems bounds the output index an event may name, so a hostile or
// broken server cannot make the accumulator allocate without limit.
const maxItems = 256

type wireUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

func (u *wireUsage) usage() llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	cached := max(0, u.InputTokensDetails.CachedTokens)
	return llm.Usage{InputTokens: max(0, u.InputTokens-cached), OutputTokens: max(0, u.OutputTokens), CacheReadTokens: cached}
}

type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type wireItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

type wireResponse struct {
	ID                string     `json:"id"`
	Model             string     `json:"model"`
	Status            string     `json:"status"`
	Output            []wireItem `json:"output"`
	Usage             *wireUsage `json:"usage"`
	Error             *wireError `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

// failure is the *llm.Error for a failed response or an error event.
func failure(e *wireError) error {
	if e == nil {
		return &llm.Error{Class: llm.ClassServer, Message: "the response failed without saying why"}
	}
	class := llm.ClassifyStatus(0, e.Code, e.Message)
	if class == llm.ClassUnknown {
		class = llm.ClassServer // the service gave up mid-reply
	}
	return &llm.Error{Class: class, Message: e.Message}
}

// stop maps the final status to a stop reason.
func (w *wireResponse) stop(calls int, refused bool) (llm.StopReason, error) {
	switch w.Status {
	case "completed", "":
		switch {
		case calls > 0:
			return llm.StopToolUse, nil
		case refused:
			return llm.StopRefusal, nil
		}
		return llm.StopEndTurn, nil
	case "incomplete":
		reason := ""
		if w.IncompleteDetails != nil {
			reason = w.IncompleteDetails.Reason
		}
		switch reason {
		case "max_output_tokens":
			return llm.StopMaxTokens, nil
		case "content_filter":
			return llm.StopRefusal, nil
		}
		return llm.StopOther, nil
	case "failed":
		return "", failure(w.Error)
	}
	return "", malformed("response ended with status %q", w.Status)
}

// toResponse converts a whole (non-streaming) response.
func (w *wireResponse) toResponse() (*llm.Response, error) {
	resp := &llm.Response{Provider: llm.ProviderOpenAI, Model: w.Model, Attempts: 1, Usage: w.Usage.usage()}
	resp.Message.Role = llm.RoleAssistant
	calls, refused := 0, false
	for i, it := range w.Output {
		switch it.Type {
		case "message":
			var text []byte
			for _, c := range it.Content {
				text = append(text, c.Text...)
				refused = refused || c.Refusal != ""
			}
			if len(text) > 0 {
				resp.Message.Parts = append(resp.Message.Parts, llm.TextPart(string(text)))
			}
		case "function_call":
			call, err := toolCall(i, it.CallID, it.Name, []byte(it.Arguments))
			if err != nil {
				return nil, err
			}
			resp.Message.Parts = append(resp.Message.Parts, llm.ToolCallPart(call))
			calls++
		}
	}
	stop, err := w.stop(calls, refused)
	if err != nil {
		return nil, err
	}
	resp.StopReason = stop
	return resp, nil
}

func toolCall(i int, id, name string, args []byte) (llm.ToolCall, error) {
	if id == "" || name == "" {
		return llm.ToolCall{}, malformed("output item %d is a function call without call_id or name", i)
	}
	input, err := llm.ParseToolInput(args)
	if err != nil {
		return llm.ToolCall{}, err
	}
	return llm.ToolCall{ID: id, Name: name, Input: input}, nil
}

// streamItem is one output item being streamed.
type streamItem struct {
	kind     string
	text     []byte
	callID   string
	name     string
	args     []byte
	refusal  bool
	complete bool
}

// accumulator builds a response from stream events.
type accumulator struct {
	model    string
	items    []*streamItem
	final    *wireResponse
	finished bool
}

// event is the union of the stream events read.
type event struct {
	Type        string        `json:"type"`
	OutputIndex *int          `json:"output_index"`
	Delta       string        `json:"delta"`
	Item        *wireItem     `json:"item"`
	Response    *wireResponse `json:"response"`
	Code        string        `json:"code"`
	Message     string        `json:"message"`
}

func (a *accumulator) item(ev *event) (*streamItem, error) {
	if ev.OutputIndex == nil {
		return nil, malformed("%s event without output_index", ev.Type)
	}
	i := *ev.OutputIndex
	if i < 0 || i >= maxItems || i > len(a.items) {
		return nil, malformed("%s event for output index %d with %d items so far", ev.Type, i, len(a.items))
	}
	if i == len(a.items) {
		a.items = append(a.items, &streamItem{})
	}
	return a.items[i], nil
}

func (a *accumulator) add(sev sse.Event, h func(llm.Event)) error {
	var ev event
	if err := json.Unmarshal(sev.Data, &ev); err != nil {
		return &llm.Error{Class: llm.ClassMalformed, Message: "decoding stream event", Err: err}
	}
	if ev.Type == "" {
		ev.Type = sev.Name
	}
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response != nil && ev.Response.Model != "" {
			a.model = ev.Response.Model
		}
	case "response.output_item.added", "response.output_item.done":
		it, err := a.item(&ev)
		if err != nil {
			return err
		}
		if ev.Item == nil {
			return malformed("%s event without item", ev.Type)
		}
		it.kind = ev.Item.Type
		if ev.Item.CallID != "" {
			it.callID = ev.Item.CallID
		}
		if ev.Item.Name != "" {
			it.name = ev.Item.Name
		}
		if ev.Type == "response.output_item.done" {
			it.complete = true
			switch it.kind {
			case "function_call":
				// The done item holds the whole arguments: they win over
				// the deltas.
				it.args = []byte(ev.Item.Arguments)
			case "message":
				if len(it.text) == 0 {
					// Some proxies send a message whole, without deltas.
					a.wholeText(it, ev.Item, h)
				}
			}
		}
	case "response.output_text.delta", "response.refusal.delta":
		it, err := a.item(&ev)
		if err != nil {
			return err
		}
		if it.kind != "" && it.kind != "message" {
			return malformed("text delta for output item %d, a %s", *ev.OutputIndex, it.kind)
		}
		if ev.Type == "response.refusal.delta" {
			it.refusal = true
		}
		it.text = append(it.text, ev.Delta...)
		if h != nil && ev.Delta != "" {
			h(llm.Event{Kind: llm.EventText, Text: ev.Delta})
		}
	case "response.function_call_arguments.delta":
		it, err := a.item(&ev)
		if err != nil {
			return err
		}
		it.args = append(it.args, ev.Delta...)
	case "response.completed", "response.incomplete":
		if ev.Response == nil {
			return malformed("%s event without response", ev.Type)
		}
		a.final, a.finished = ev.Response, true
	case "response.failed":
		if ev.Response == nil {
			return failure(nil)
		}
		return failure(ev.Response.Error)
	case "error":
		return failure(&wireError{Code: ev.Code, Message: ev.Message})
	}
	return nil
}

// wholeText takes a message item's text from its done event, streaming it
// as one delta.
func (a *accumulator) wholeText(it *streamItem, item *wireItem, h func(llm.Event)) {
	for _, c := range item.Content {
		text := c.Text
		if c.Refusal != "" {
			it.refusal, text = true, c.Refusal
		}
		if text == "" {
			continue
		}
		it.text = append(it.text, text...)
		if h != nil {
			h(llm.Event{Kind: llm.EventText, Text: text})
		}
	}
}

// response checks the stream was complete and returns the reply.
func (a *accumulator) response() (*llm.Response, error) {
	if !a.finished {
		return nil, &llm.Error{Class: llm.ClassNetwork, Message: "stream ended before response.completed"}
	}
	model := a.final.Model
	if model == "" {
		model = a.model
	}
	resp := &llm.Response{Provider: llm.ProviderOpenAI, Model: model, Attempts: 1, Usage: a.final.Usage.usage()}
	resp.Message.Role = llm.RoleAssistant
	calls, refused := 0, false
	for i, it := range a.items {
		switch it.kind {
		case "message", "":
			// Text deltas for an item never announced still count: they
			// were streamed to the caller.
			refused = refused || it.refusal
			if len(it.text) > 0 {
				resp.Message.Parts = append(resp.Message.Parts, llm.TextPart(string(it.text)))
			}
		case "function_call":
			if !it.complete {
				return nil, malformed("function call %d never completed", i)
			}
			call, err := toolCall(i, it.callID, it.name, it.args)
			if err != nil {
				return nil, err
			}
			resp.Message.Parts = append(resp.Message.Parts, llm.ToolCallPart(call))
			calls++
		}
	}
	stop, err := a.final.stop(calls, refused)
	if err != nil {
		return nil, err
	}
	resp.StopReason = stop
	return resp, nil
}
