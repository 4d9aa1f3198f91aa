package llmtest

import (
	"encoding/json"
	"unicode/utf8"
)

// reply is a step rendered for one request, before framing.
type reply struct {
	id    string
	model string
	text  string
	calls []replyCall
	// stop is the Anthropic stop reason; OpenAI's finish_reason is derived.
	stop  string
	usage Usage
	chunk int
}

type replyCall struct {
	id, name string
	args     []byte
	// scriptedID says the script named the id (Gemini replies carry ids
	// only then).
	scriptedID bool
}

// frame is one SSE event. delta marks content deltas, which fault
// injection counts.
type frame struct {
	event string
	data  []byte
	delta bool
}

// splitChunks cuts s into pieces of about n bytes without splitting UTF-8
// sequences.
func splitChunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only maps of plain values reach here: compile checked tool inputs.
		panic("llmtest: encoding reply: " + err.Error())
	}
	return b
}

type obj = map[string]any

// anthropicFrames renders r as a Messages API event stream.
func anthropicFrames(r *reply) []frame {
	var fs []frame
	add := func(event string, v any, delta bool) {
		fs = append(fs, frame{event: event, data: mustJSON(v), delta: delta})
	}
	add("message_start", obj{"type": "message_start", "message": obj{
		"id": r.id, "type": "message", "role": "assistant", "model": r.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": r.usage.InputTokens, "output_tokens": 1,
			"cache_creation_input_tokens": r.usage.CacheWriteTokens, "cache_read_input_tokens": r.usage.CacheReadTokens},
	}}, false)
	index := 0
	if r.text != "" {
		add("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": obj{"type": "text", "text": ""}}, false)
		fs = append(fs, frame{event: "ping", data: []byte(`{"type": "ping"}`)})
		for _, c := range splitChunks(r.text, r.chunk) {
			add("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": obj{"type": "text_delta", "text": c}}, true)
		}
		add("content_block_stop", obj{"type": "content_block_stop", "index": index}, false)
		index++
	}
	for _, c := range r.calls {
		add("content_block_start", obj{"type": "content_block_start", "index": index,
			"content_block": obj{"type": "tool_use", "id": c.id, "name": c.name, "input": obj{}}}, false)
		add("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": obj{"type": "input_json_delta", "partial_json": ""}}, true)
		for _, a := range splitChunks(string(c.args), r.chunk) {
			add("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": obj{"type": "input_json_delta", "partial_json": a}}, true)
		}
		add("content_block_stop", obj{"type": "content_block_stop", "index": index}, false)
		index++
	}
	add("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": r.stop, "stop_sequence": nil},
		"usage": obj{"output_tokens": r.usage.OutputTokens}}, false)
	add("message_stop", obj{"type": "message_stop"}, false)
	return fs
}

// anthropicMessage renders r as a non-streaming Messages API response.
func anthropicMessage(r *reply) []byte {
	content := []any{}
	if r.text != "" {
		content = append(content, obj{"type": "text", "text": r.text})
	}
	for _, c := range r.calls {
		content = append(content, obj{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.args)})
	}
	return mustJSON(obj{"id": r.id, "type": "message", "role": "assistant", "model": r.model,
		"content": content, "stop_reason": r.stop, "stop_sequence": nil,
		"usage": obj{"input_tokens": r.usage.InputTokens, "output_tokens": r.usage.OutputTokens,
			"cache_creation_input_tokens": r.usage.CacheWriteTokens, "cache_read_input_tokens": r.usage.CacheReadTokens}})
}

func openaiFinish(stop string) string {
	switch stop {
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	}
	return "stop"
}

// openaiUsage renders usage the OpenAI way: prompt tokens include cached ones.
func openaiUsage(u Usage) obj {
	prompt := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	return obj{"prompt_tokens": prompt, "completion_tokens": u.OutputTokens, "total_tokens": prompt + u.OutputTokens,
		"prompt_tokens_details": obj{"cached_tokens": u.CacheReadTokens}}
}

// openaiFrames renders r as a Chat Completions chunk stream, ending with
// the usage chunk (when asked for) and [DONE].
func openaiFrames(r *reply, includeUsage bool) []frame {
	var fs []frame
	chunk := func(delta obj, finish any, delta2 bool) {
		c := obj{"id": r.id, "object": "chat.completion.chunk", "created": 1700000000, "model": r.model,
			"system_fingerprint": "fp_llmtest",
			"choices":            []any{obj{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
		fs = append(fs, frame{data: mustJSON(c), delta: delta2})
	}
	chunk(obj{"role": "assistant", "content": "", "refusal": nil}, nil, false)
	for _, c := range splitChunks(r.text, r.chunk) {
		chunk(obj{"content": c}, nil, true)
	}
	for i, c := range r.calls {
		chunk(obj{"tool_calls": []any{obj{"index": i, "id": c.id, "type": "function",
			"function": obj{"name": c.name, "arguments": ""}}}}, nil, true)
		for _, a := range splitChunks(string(c.args), r.chunk) {
			chunk(obj{"tool_calls": []any{obj{"index": i, "function": obj{"arguments": a}}}}, nil, true)
		}
	}
	chunk(obj{}, openaiFinish(r.stop), false)
	if includeUsage {
		fs = append(fs, frame{data: mustJSON(obj{"id": r.id, "object": "chat.completion.chunk", "created": 1700000000,
			"model": r.model, "choices": []any{}, "usage": openaiUsage(r.usage)})})
	}
	fs = append(fs, frame{data: []byte("[DONE]")})
	return fs
}

// openaiCompletion renders r as a non-streaming Chat Completions response.
func openaiCompletion(r *reply) []byte {
	msg := obj{"role": "assistant", "content": r.text, "refusal": nil}
	if r.text == "" && len(r.calls) > 0 {
		msg["content"] = nil
	}
	if len(r.calls) > 0 {
		calls := make([]any, len(r.calls))
		for i, c := range r.calls {
			calls[i] = obj{"id": c.id, "type": "function", "function": obj{"name": c.name, "arguments": string(c.args)}}
		}
		msg["tool_calls"] = calls
	}
	return mustJSON(obj{"id": r.id, "object": "chat.completion", "created": 1700000000, "model": r.model,
		"choices": []any{obj{"index": 0, "message": msg, "logprobs": nil, "finish_reason": openaiFinish(r.stop)}},
		"usage":   openaiUsage(r.usage)})
}

// errorBody renders an error response body in the API's format.
func errorBody(api API, status int, errType, message string) []byte {
	switch api {
	case APIAnthropic:
		return mustJSON(obj{"type": "error", "error": obj{"type": errType, "message": message}})
	case APIGemini:
		return geminiErrorBody(status, message)
	}
	code := any(nil)
	if errType == "context_length_exceeded" {
		code = errType
		errType = "invalid_request_error"
	}
	return mustJSON(obj{"error": obj{"message": message, "type": errType, "param": nil, "code": code}})
}
