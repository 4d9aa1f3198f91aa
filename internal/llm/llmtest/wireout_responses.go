package llmtest

import "fmt"

// responsesUsage renders usage the Responses way: input tokens include
// cached ones.
func responsesUsage(u Usage) obj {
	input := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	return obj{"input_tokens": input, "input_tokens_details": obj{"cached_tokens": u.CacheReadTokens},
		"output_tokens": u.OutputTokens, "output_tokens_details": obj{"reasoning_tokens": 0},
		"total_tokens": input + u.OutputTokens}
}

// responsesStatus is the response's final status and incomplete_details.
func responsesStatus(stop string) (string, any) {
	if stop == "max_tokens" {
		return "incomplete", obj{"reason": "max_output_tokens"}
	}
	return "completed", nil
}

func responsesMessageItem(r *reply, status string, text string) obj {
	content := []any{}
	if status == "completed" {
		content = append(content, obj{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}})
	}
	return obj{"id": "msg_" + r.id, "type": "message", "status": status, "role": "assistant", "content": content}
}

func responsesCallItem(r *reply, i int, status string, args string) obj {
	c := r.calls[i]
	return obj{"id": fmt.Sprintf("fc_%s_%d", r.id, i), "type": "function_call", "status": status,
		"arguments": args, "call_id": c.id, "name": c.name}
}

// responsesOutput is the complete output item list.
func responsesOutput(r *reply) []any {
	out := []any{}
	if r.text != "" {
		out = append(out, responsesMessageItem(r, "completed", r.text))
	}
	for i, c := range r.calls {
		out = append(out, responsesCallItem(r, i, "completed", string(c.args)))
	}
	return out
}

// responsesObject is the response object; final says whether it is the
// completed one (with output and usage) or the in-progress one that
// response.created carries.
func responsesObject(r *reply, final bool) obj {
	o := obj{"id": r.id, "object": "response", "created_at": 1700000000, "model": r.model,
		"status": "in_progress", "output": []any{}, "usage": nil, "error": nil, "incomplete_details": nil,
		"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}
	if final {
		o["status"], o["incomplete_details"] = responsesStatus(r.stop)
		o["output"] = responsesOutput(r)
		o["usage"] = responsesUsage(r.usage)
	}
	return o
}

// responsesFrames renders r as a Responses API event stream: created,
// in_progress, then per output item added / deltas / done, then completed
// (or incomplete, for a max-tokens stop).
func responsesFrames(r *reply) []frame {
	var fs []frame
	seq := 0
	add := func(event string, v obj, delta bool) {
		v["type"] = event
		v["sequence_number"] = seq
		seq++
		fs = append(fs, frame{event: event, data: mustJSON(v), delta: delta})
	}
	add("response.created", obj{"response": responsesObject(r, false)}, false)
	add("response.in_progress", obj{"response": responsesObject(r, false)}, false)
	index := 0
	if r.text != "" {
		item := responsesMessageItem(r, "in_progress", "")
		itemID := item["id"]
		add("response.output_item.added", obj{"output_index": index, "item": item}, false)
		add("response.content_part.added", obj{"item_id": itemID, "output_index": index, "content_index": 0,
			"part": obj{"type": "output_text", "text": "", "annotations": []any{}}}, false)
		for _, c := range splitChunks(r.text, r.chunk) {
			add("response.output_text.delta", obj{"item_id": itemID, "output_index": index, "content_index": 0,
				"delta": c, "logprobs": []any{}}, true)
		}
		add("response.output_text.done", obj{"item_id": itemID, "output_index": index, "content_index": 0,
			"text": r.text, "logprobs": []any{}}, false)
		add("response.content_part.done", obj{"item_id": itemID, "output_index": index, "content_index": 0,
			"part": obj{"type": "output_text", "text": r.text, "annotations": []any{}}}, false)
		add("response.output_item.done", obj{"output_index": index, "item": responsesMessageItem(r, "completed", r.text)}, false)
		index++
	}
	for i, c := range r.calls {
		item := responsesCallItem(r, i, "in_progress", "")
		itemID := item["id"]
		add("response.output_item.added", obj{"output_index": index, "item": item}, true)
		for _, a := range splitChunks(string(c.args), r.chunk) {
			add("response.function_call_arguments.delta", obj{"item_id": itemID, "output_index": index, "delta": a}, true)
		}
		add("response.function_call_arguments.done", obj{"item_id": itemID, "output_index": index, "arguments": string(c.args)}, false)
		add("response.output_item.done", obj{"output_index": index, "item": responsesCallItem(r, i, "completed", string(c.args))}, false)
		index++
	}
	end := "response.completed"
	if status, _ := responsesStatus(r.stop); status == "incomplete" {
		end = "response.incomplete"
	}
	add(end, obj{"response": responsesObject(r, true)}, false)
	return fs
}

// responsesWhole renders r as a non-streaming Responses API response.
func responsesWhole(r *reply) []byte { return mustJSON(responsesObject(r, true)) }

// responsesFailed is the response.failed event a stream ends with when the
// service gives up mid-reply.
func responsesFailed(r *reply, code, message string) frame {
	o := responsesObject(r, false)
	o["status"] = "failed"
	o["error"] = obj{"code": code, "message": message}
	return frame{event: "response.failed", data: mustJSON(obj{"type": "response.failed", "sequence_number": 9999, "response": o})}
}
