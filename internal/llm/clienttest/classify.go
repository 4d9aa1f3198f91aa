package clienttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

// errorClassification checks that every fault, always injected, comes back
// as an *llm.Error of the right class, status, Retry-After and provider.
func (s suite) errorClassification(t *testing.T) {
	ov := s.h.Overloaded
	auth := s.h.AuthStatus
	if auth == 0 {
		auth = 401
	}
	for _, tc := range []struct {
		fault      llmtest.Fault
		class      llm.Class
		status     int
		retryAfter time.Duration
	}{
		{llmtest.Fault{Kind: llmtest.FaultRateLimit, RetryAfterSecs: 3}, llm.ClassRateLimit, 429, 3 * time.Second},
		{llmtest.Fault{Kind: llmtest.FaultOverloaded}, ov.Class, ov.Status, 0},
		{llmtest.Fault{Kind: llmtest.FaultServerError}, llm.ClassServer, 500, 0},
		{llmtest.Fault{Kind: llmtest.FaultStreamError}, ov.Class, 0, 0},
		{llmtest.Fault{Kind: llmtest.FaultReset}, llm.ClassNetwork, 0, 0},
		{llmtest.Fault{Kind: llmtest.FaultTruncate}, llm.ClassNetwork, 0, 0},
		{llmtest.Fault{Kind: llmtest.FaultMalformed}, llm.ClassMalformed, 0, 0},
		{llmtest.Fault{Kind: llmtest.FaultContextTooLong}, llm.ClassContextTooLong, 400, 0},
		{llmtest.Fault{Kind: llmtest.FaultAuth}, llm.ClassAuth, auth, 0},
	} {
		t.Run(string(tc.fault.Kind), func(t *testing.T) {
			t.Parallel()
			f := tc.fault
			f.Always = true
			_, c := s.start(t, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{Text: "some text", ChunkSize: 2, Fault: &f}}}}, 0)
			_, err := c.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("x")}}, nil)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("Stream = %v, want an *llm.Error", err)
			}
			if e.Class != tc.class || e.StatusCode != tc.status || e.RetryAfter != tc.retryAfter || e.Provider != s.h.Provider {
				t.Errorf("got class %v status %d retry-after %v provider %q (%v); want %v %d %v %q",
					e.Class, e.StatusCode, e.RetryAfter, e.Provider, err, tc.class, tc.status, tc.retryAfter, s.h.Provider)
			}
		})
	}
}
