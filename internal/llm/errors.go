package llm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Class is what the caller may do about a failed call.
type Class uint8

// Classes of failure. The first five are retryable.
const (
	ClassUnknown Class = iota
	// ClassRateLimit: HTTP 429; wait (Retry-After if given) and retry.
	ClassRateLimit
	// ClassOverloaded: the service is overloaded (Anthropic 529); retry after a longer wait.
	ClassOverloaded
	// ClassServer: HTTP 5xx.
	ClassServer
	// ClassNetwork: connection refused or reset, or a stream cut before its end.
	ClassNetwork
	// ClassTimeout: the stream was idle longer than the idle timeout.
	ClassTimeout
	// ClassContextTooLong: the prompt does not fit the model's context window.
	ClassContextTooLong
	// ClassAuth: missing, invalid or unauthorised API key (401, 403).
	ClassAuth
	// ClassBadRequest: the request is invalid (400, 404, 422…); do not retry.
	ClassBadRequest
	// ClassMalformed: the service sent something that could not be parsed.
	ClassMalformed
)

var classNames = [...]string{
	ClassUnknown:        "unknown",
	ClassRateLimit:      "rate_limit",
	ClassOverloaded:     "overloaded",
	ClassServer:         "server",
	ClassNetwork:        "network",
	ClassTimeout:        "timeout",
	ClassContextTooLong: "context_too_long",
	ClassAuth:           "auth",
	ClassBadRequest:     "bad_request",
	ClassMalformed:      "malformed",
}

// String returns the class's snake_case name.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Retryable reports whether a call that failed with c may succeed if sent again.
func (c Class) Retryable() bool {
	switch c {
	case ClassRateLimit, ClassOverloaded, ClassServer, ClassNetwork, ClassTimeout:
		return true
	}
	return false
}

// Error is a classified failure of a model call.
type Error struct {
	Class Class
	// Provider is "anthropic", "openai" or "gemini".
	Provider string
	// StatusCode is the HTTP status, or zero when none was received.
	StatusCode int
	// RetryAfter is the wait the service asked for, or zero.
	RetryAfter time.Duration
	// Message is the service's own explanation, when it gave one.
	Message string
	// RequestID is the service's id for the failed request, for support.
	RequestID string
	// Err is the underlying error, if any.
	Err error
}

// Error describes the failure.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	b.WriteString(e.Class.String())
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the Class of the first *Error in err's chain, or
// ClassUnknown.
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ClassUnknown
}

// IsRetryable reports whether err is a classified, retryable failure.
func IsRetryable(err error) bool { return ClassOf(err).Retryable() }

// ClassifyStatus classifies an HTTP error response, or an error event
// inside a stream (status 200). errType is the provider's error type or
// code from the body ("overloaded_error", "context_length_exceeded", ...)
// and message its human explanation; both may be empty. Looking at the
// provider's own wire message is the only way to tell "prompt too long"
// from other 400s on the Anthropic API.
func ClassifyStatus(status int, errType, message string) Class {
	switch errType {
	case "overloaded_error":
		return ClassOverloaded
	case "context_length_exceeded", "request_too_large":
		return ClassContextTooLong
	case "rate_limit_error", "rate_limit_exceeded":
		return ClassRateLimit
	case "authentication_error", "permission_error", "invalid_api_key":
		return ClassAuth
	case "api_error", "server_error", "timeout_error":
		return ClassServer
	}
	switch {
	case status == 529:
		return ClassOverloaded
	case status == http.StatusRequestEntityTooLarge:
		return ClassContextTooLong
	case status == http.StatusTooManyRequests:
		return ClassRateLimit
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ClassAuth
	case status >= 500:
		return ClassServer
	case status == http.StatusRequestTimeout || status == http.StatusConflict:
		// Both APIs document these as transient.
		return ClassServer
	case status >= 400 || errType != "":
		if isContextMessage(message) {
			return ClassContextTooLong
		}
		return ClassBadRequest
	}
	return ClassUnknown
}

// ClassifyTransport classifies an error that did not come with an HTTP
// error response: network failures and cut streams are ClassNetwork,
// undecodable payloads ClassMalformed, anything else ClassUnknown.
func ClassifyTransport(err error) Class {
	var (
		netErr    net.Error
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED),
		errors.As(err, &netErr):
		return ClassNetwork
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr), errors.Is(err, bufio.ErrTooLong):
		return ClassMalformed
	}
	return ClassUnknown
}

func isContextMessage(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "prompt is too long") ||
		strings.Contains(m, "context length") ||
		strings.Contains(m, "context window") ||
		strings.Contains(m, "maximum context")
}

// ParseRetryAfter returns the wait a response asks for in its
// "retry-after-ms" or "retry-after" header (seconds or an HTTP date,
// relative to now). It returns zero when there is no usable value.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
