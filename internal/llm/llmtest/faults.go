package llmtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

func writeError(w http.ResponseWriter, api API, status int, errType, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Should-Retry", "false") // the SDKs' retries are off, but be explicit
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(api, status, errType, message))
}

// writeGeminiError answers with a Google API error carrying details.
func writeGeminiError(w http.ResponseWriter, status int, message string, details ...any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(geminiErrorBody(status, message, details...))
}

// refuseGemini answers the whole-response faults as the Gemini API does:
// a bad key is a 400 whose ErrorInfo reason says API_KEY_INVALID, a rate
// limit carries its wait in a RetryInfo detail (no Retry-After header), an
// overloaded model is a 503 UNAVAILABLE.
func refuseGemini(w http.ResponseWriter, f *Fault) bool {
	switch f.Kind {
	case FaultRateLimit:
		details := []any{obj{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []any{obj{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests"}}}}
		if f.RetryAfterSecs > 0 {
			details = append(details, obj{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(f.RetryAfterSecs) + "s"})
		}
		writeGeminiError(w, http.StatusTooManyRequests, "You exceeded your current quota, please check your plan and billing details. (injected by llmtest)", details...)
	case FaultOverloaded:
		writeGeminiError(w, http.StatusServiceUnavailable, "The model is overloaded. Please try again later.")
	case FaultServerError:
		writeGeminiError(w, http.StatusInternalServerError, "An internal error has occurred. (injected by llmtest)")
	case FaultContextTooLong:
		writeGeminiError(w, http.StatusBadRequest, "The input token count (212345) exceeds the maximum number of tokens allowed (1048576).")
	case FaultAuth:
		writeGeminiError(w, http.StatusBadRequest, "API key not valid. Please pass a valid API key.",
			obj{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"})
	default:
		return false
	}
	return true
}

// refuse answers with an error status for the faults that are whole
// responses; it reports whether it did.
func (s *Server) refuse(w http.ResponseWriter, api API, f *Fault) bool {
	if api == APIGemini {
		return refuseGemini(w, f)
	}
	if f.RetryAfterSecs > 0 && (f.Kind == FaultRateLimit || f.Kind == FaultOverloaded) {
		w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfterSecs))
	}
	switch f.Kind {
	case FaultRateLimit:
		writeError(w, api, http.StatusTooManyRequests, "rate_limit_error", "llmtest: rate limit (injected)")
	case FaultOverloaded:
		if api == APIAnthropic {
			writeError(w, api, 529, "overloaded_error", "Overloaded")
		} else {
			writeError(w, api, http.StatusServiceUnavailable, "server_error", "llmtest: overloaded (injected)")
		}
	case FaultServerError:
		writeError(w, api, http.StatusInternalServerError, "api_error", "llmtest: internal server error (injected)")
	case FaultContextTooLong:
		if api == APIAnthropic {
			writeError(w, api, http.StatusBadRequest, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum")
		} else {
			writeError(w, api, http.StatusBadRequest, "context_length_exceeded",
				"This model's maximum context length is 128000 tokens. However, your messages resulted in 212345 tokens.")
		}
	case FaultAuth:
		if api == APIAnthropic {
			writeError(w, api, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		} else {
			writeError(w, api, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided.")
		}
	default:
		return false
	}
	return true
}

// replyWhole sends a non-streaming response, or its fault.
func (s *Server) replyWhole(ctx context.Context, w http.ResponseWriter, api API, rep *reply, f *Fault) {
	if f != nil {
		switch f.Kind {
		case FaultStreamError:
			if api == APIGemini {
				writeGeminiError(w, http.StatusInternalServerError, "An internal error has occurred. (injected by llmtest)")
				return
			}
			writeError(w, api, http.StatusInternalServerError, "api_error", "llmtest: internal server error (injected)")
			return
		case FaultReset:
			resetConn(w)
			return
		case FaultStall:
			select {
			case <-ctx.Done():
			case <-s.stop:
			}
			return
		case FaultMalformed, FaultTruncate:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id": "broken", "content": [`))
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	switch api {
	case APIAnthropic:
		_, _ = w.Write(anthropicMessage(rep))
	case APIOpenAI:
		_, _ = w.Write(openaiCompletion(rep))
	case APIResponses:
		_, _ = w.Write(responsesWhole(rep))
	case APIGemini:
		_, _ = w.Write(geminiWhole(rep))
	}
}

// streamErrorFrame is the error event that ends a stream when the service
// gives up mid-reply, in each API's form.
func streamErrorFrame(api API, rep *reply) frame {
	switch api {
	case APIAnthropic:
		return frame{event: "error", data: errorBody(api, 0, "overloaded_error", "Overloaded")}
	case APIResponses:
		return responsesFailed(rep, "server_error", "llmtest: the server had an error while processing your request (injected)")
	case APIGemini:
		return frame{data: geminiErrorBody(http.StatusServiceUnavailable, "The model is overloaded. Please try again later.")}
	}
	return frame{data: errorBody(api, 0, "server_error", "llmtest: the server had an error while processing your request (injected)")}
}

// malformedFrame is an event whose data is cut inside a JSON string.
func malformedFrame(api API) frame {
	switch api {
	case APIAnthropic:
		return frame{event: "content_block_delta", data: []byte(`{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "unterminated`)}
	case APIResponses:
		return frame{event: "response.output_text.delta", data: []byte(`{"type": "response.output_text.delta", "output_index": 0, "delta": "unterminated`)}
	case APIGemini:
		return frame{data: []byte(`{"candidates": [{"content": {"parts": [{"text": "unterminated`)}
	}
	return frame{data: []byte(`{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "unterminated`)}
}

// stream sends frames as server-sent events, injecting f.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, api API, rep *reply, frames []frame, delayMs int, f *Fault) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	after := 1
	if f != nil && f.AfterChunks > 0 {
		after = f.AfterChunks
	}
	deltas := 0
	for i, fr := range frames {
		if f != nil && fr.delta && deltas == after {
			switch f.Kind {
			case FaultReset:
				resetConn(w)
				return
			case FaultStall:
				select {
				case <-r.Context().Done():
				case <-s.stop:
				}
				return
			case FaultTruncate:
				return
			case FaultStreamError:
				_ = writeFrame(w, api, streamErrorFrame(api, rep))
				_ = rc.Flush()
				return
			case FaultMalformed:
				_ = writeFrame(w, api, malformedFrame(api))
				_ = rc.Flush()
				return
			}
		}
		if fr.delta {
			deltas++
		}
		if i > 0 && !s.wait(r.Context(), delayMs) {
			return
		}
		if err := writeFrame(w, api, fr); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// writeFrame writes one event; Google ends its lines with CRLF.
func writeFrame(w http.ResponseWriter, api API, f frame) error {
	var err error
	switch {
	case api == APIGemini:
		_, err = fmt.Fprintf(w, "data: %s\r\n\r\n", f.data)
	case f.event != "":
		_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", f.event, f.data)
	default:
		_, err = fmt.Fprintf(w, "data: %s\n\n", f.data)
	}
	return err
}

// resetConn aborts the connection with a TCP reset, as a crashing proxy
// would: whatever was flushed stays delivered, the rest never comes.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.SetDeadline(time.Now())
	_ = conn.Close()
}
