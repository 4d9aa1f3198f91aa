package llmtest

import (
	"encoding/json"
	"net/http"
)

// geminiUsage renders usage as usageMetadata: the prompt count includes
// cached tokens.
func geminiUsage(u Usage) obj {
	prompt := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	m := obj{"promptTokenCount": prompt, "candidatesTokenCount": u.OutputTokens, "totalTokenCount": prompt + u.OutputTokens}
	if u.CacheReadTokens > 0 {
		m["cachedContentTokenCount"] = u.CacheReadTokens
	}
	return m
}

func geminiFinish(stop string) string {
	switch stop {
	case "max_tokens":
		return "MAX_TOKENS"
	case "refusal":
		return "SAFETY"
	}
	// The Gemini API ends a reply holding function calls with STOP too.
	return "STOP"
}

// geminiCallPart renders a function call. The Gemini API sends no call ids
// of its own, so the part carries one only when the script gave one.
func geminiCallPart(c replyCall) obj {
	fc := obj{"name": c.name, "args": json.RawMessage(c.args)}
	if c.scriptedID {
		fc["id"] = c.id
	}
	return obj{"functionCall": fc}
}

func geminiChunk(r *reply, parts []any, last bool) obj {
	cand := obj{"content": obj{"role": "model", "parts": parts}, "index": 0}
	c := obj{"candidates": []any{cand}, "modelVersion": r.model, "responseId": r.id}
	if last {
		cand["finishReason"] = geminiFinish(r.stop)
		c["usageMetadata"] = geminiUsage(r.usage)
	} else {
		c["usageMetadata"] = obj{"promptTokenCount": r.usage.InputTokens + r.usage.CacheReadTokens + r.usage.CacheWriteTokens,
			"totalTokenCount": r.usage.InputTokens + r.usage.CacheReadTokens + r.usage.CacheWriteTokens}
	}
	return c
}

// geminiFrames renders r as streamGenerateContent chunks: text pieces, each
// function call whole in its own chunk (the API does not split calls),
// and a last chunk with the finish reason and the full usage.
func geminiFrames(r *reply) []frame {
	var fs []frame
	for _, c := range splitChunks(r.text, r.chunk) {
		fs = append(fs, frame{data: mustJSON(geminiChunk(r, []any{obj{"text": c}}, false)), delta: true})
	}
	for _, c := range r.calls {
		fs = append(fs, frame{data: mustJSON(geminiChunk(r, []any{geminiCallPart(c)}, false)), delta: true})
	}
	fs = append(fs, frame{data: mustJSON(geminiChunk(r, []any{obj{"text": ""}}, true))})
	return fs
}

// geminiWhole renders r as a generateContent response.
func geminiWhole(r *reply) []byte {
	parts := []any{}
	if r.text != "" {
		parts = append(parts, obj{"text": r.text})
	}
	for _, c := range r.calls {
		parts = append(parts, geminiCallPart(c))
	}
	return mustJSON(geminiChunk(r, parts, true))
}

// geminiStatus is the google.rpc status name Google's APIs give an HTTP
// status.
func geminiStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

// geminiErrorBody renders a Google API error: {"error": {code, message,
// status, details}}.
func geminiErrorBody(code int, message string, details ...any) []byte {
	e := obj{"code": code, "message": message, "status": geminiStatus(code)}
	if len(details) > 0 {
		e["details"] = details
	}
	return mustJSON(obj{"error": e})
}
