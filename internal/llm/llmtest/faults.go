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
	_, _ = w.Write(errorBody(api, errType, message))
}

// refuse answers with an error status for the faults that are whole
// responses; it reports whether it did.
func (s *Server) refuse(w http.ResponseWriter, api API, f *Fault) bool {
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
	if api == APIAnthropic {
		_, _ = w.Write(anthropicMessage(rep))
	} else {
		_, _ = w.Write(openaiCompletion(rep))
	}
}

// stream sends frames as server-sent events, injecting f.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, api API, frames []frame, delayMs int, f *Fault) {
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
				if api == APIAnthropic {
					fr = frame{event: "error", data: errorBody(api, "overloaded_error", "Overloaded")}
				} else {
					fr = frame{data: errorBody(api, "server_error", "llmtest: the server had an error while processing your request (injected)")}
				}
				_ = writeFrame(w, fr)
				_ = rc.Flush()
				return
			case FaultMalformed:
				if api == APIAnthropic {
					fr = frame{event: "content_block_delta", data: []byte(`{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "unterminated`)}
				} else {
					fr = frame{data: []byte(`{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "unterminated`)}
				}
				_ = writeFrame(w, fr)
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
		if err := writeFrame(w, fr); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

func writeFrame(w http.ResponseWriter, f frame) error {
	var err error
	if f.event != "" {
		_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", f.event, f.data)
	} else {
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
