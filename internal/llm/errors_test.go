package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

func TestClassifyStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status  int
		errType string
		msg     string
		want    llm.Class
	}{
		{429, "rate_limit_error", "", llm.ClassRateLimit},
		{429, "", "", llm.ClassRateLimit},
		{529, "overloaded_error", "Overloaded", llm.ClassOverloaded},
		{200, "overloaded_error", "", llm.ClassOverloaded},
		{500, "api_error", "", llm.ClassServer},
		{503, "", "", llm.ClassServer},
		{200, "api_error", "", llm.ClassServer},
		{400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum", llm.ClassContextTooLong},
		{400, "context_length_exceeded", "", llm.ClassContextTooLong},
		{413, "request_too_large", "", llm.ClassContextTooLong},
		{400, "invalid_request_error", "messages: field required", llm.ClassBadRequest},
		{404, "not_found_error", "model: nope", llm.ClassBadRequest},
		{401, "authentication_error", "invalid x-api-key", llm.ClassAuth},
		{403, "permission_error", "", llm.ClassAuth},
		{408, "", "", llm.ClassServer},
		{200, "", "", llm.ClassUnknown},
	} {
		if got := llm.ClassifyStatus(tc.status, tc.errType, tc.msg); got != tc.want {
			t.Errorf("ClassifyStatus(%d, %q, %q) = %v, want %v", tc.status, tc.errType, tc.msg, got, tc.want)
		}
	}
}

func TestClassifyTransport(t *testing.T) {
	t.Parallel()
	var v any
	syntaxErr := json.Unmarshal([]byte(`{"a":`+"\x01"), &v)
	for _, tc := range []struct {
		err  error
		want llm.Class
	}{
		{fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), llm.ClassNetwork},
		{fmt.Errorf("read tcp: %w", syscall.ECONNRESET), llm.ClassNetwork},
		{syntaxErr, llm.ClassMalformed},
		{errors.New("something else"), llm.ClassUnknown},
	} {
		if got := llm.ClassifyTransport(tc.err); got != tc.want {
			t.Errorf("ClassifyTransport(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestErrorClassThroughWrapping(t *testing.T) {
	t.Parallel()
	base := &llm.Error{Class: llm.ClassOverloaded, Provider: "anthropic", StatusCode: 529, Message: "Overloaded"}
	err := fmt.Errorf("streaming from anthropic: %w", base)
	if llm.ClassOf(err) != llm.ClassOverloaded || !llm.IsRetryable(err) {
		t.Errorf("ClassOf(wrapped) = %v, retryable %t", llm.ClassOf(err), llm.IsRetryable(err))
	}
	if got, want := err.Error(), "streaming from anthropic: anthropic: overloaded (HTTP 529): Overloaded"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if llm.ClassOf(errors.New("plain")) != llm.ClassUnknown || llm.IsRetryable(nil) {
		t.Error("unclassified errors must be ClassUnknown and not retryable")
	}
	for c := llm.ClassUnknown; c <= llm.ClassMalformed; c++ {
		if c.String() == "" {
			t.Errorf("class %d has no name", c)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"7"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
	} {
		if got := llm.ParseRetryAfter(tc.h, now); got != tc.want {
			t.Errorf("ParseRetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "1.5", "0", "-1", "1e400", "NaN", "Wed, 21 Oct 2015 07:28:00 GMT", ""} {
		f.Add(s, s)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ra, ms string) {
		h := http.Header{"Retry-After": {ra}, "Retry-After-Ms": {ms}}
		if d := llm.ParseRetryAfter(h, now); d < 0 {
			t.Errorf("ParseRetryAfter(%q, %q) = %v, want >= 0", ra, ms, d)
		}
	})
}

func TestIdleWatch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, w := llm.WatchIdle(t.Context(), time.Second)
		defer w.Stop()
		for range 5 {
			time.Sleep(900 * time.Millisecond)
			w.Touch()
		}
		if ctx.Err() != nil {
			t.Fatal("watch expired although touched in time")
		}
		time.Sleep(1100 * time.Millisecond)
		if !llm.Expired(ctx) || !errors.Is(context.Cause(ctx), llm.ErrStreamIdle) {
			t.Fatalf("after idling, cause = %v, want ErrStreamIdle", context.Cause(ctx))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, w := llm.WatchIdle(t.Context(), 0)
		time.Sleep(time.Hour)
		if ctx.Err() != nil {
			t.Fatal("disabled watch expired")
		}
		w.Stop()
		if ctx.Err() == nil || llm.Expired(ctx) {
			t.Fatal("Stop must release the context without calling it idle")
		}
	})
}
