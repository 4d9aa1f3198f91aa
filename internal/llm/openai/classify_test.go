package openai_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

func TestErrorClassification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fault      llmtest.Fault
		class      llm.Class
		status     int
		retryAfter time.Duration
	}{
		{llmtest.Fault{Kind: llmtest.FaultRateLimit, RetryAfterSecs: 3}, llm.ClassRateLimit, 429, 3 * time.Second},
		{llmtest.Fault{Kind: llmtest.FaultOverloaded}, llm.ClassServer, 503, 0},
		{llmtest.Fault{Kind: llmtest.FaultServerError}, llm.ClassServer, 500, 0},
		{llmtest.Fault{Kind: llmtest.FaultStreamError}, llm.ClassServer, 0, 0},
		{llmtest.Fault{Kind: llmtest.FaultReset}, llm.ClassNetwork, 0, 0},
		{llmtest.Fault{Kind: llmtest.FaultTruncate}, llm.ClassNetwork, 0, 0},
		{llmtest.Fault{Kind: llmtest.FaultMalformed}, llm.ClassMalformed, 0, 0},
		{llmtest.Fault{Kind: llmtest.FaultContextTooLong}, llm.ClassContextTooLong, 400, 0},
		{llmtest.Fault{Kind: llmtest.FaultAuth}, llm.ClassAuth, 401, 0},
	} {
		t.Run(string(tc.fault.Kind), func(t *testing.T) {
			t.Parallel()
			f := tc.fault
			f.Always = true
			srv := llmtest.NewServer(t, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{Text: "some text", ChunkSize: 2, Fault: &f}}}})
			_, err := newClient(t, srv, clientOptions()).Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("x")}}, nil)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("Stream = %v, want an *llm.Error", err)
			}
			if e.Class != tc.class || e.StatusCode != tc.status || e.RetryAfter != tc.retryAfter || e.Provider != llm.ProviderOpenAI {
				t.Errorf("got class %v status %d retry-after %v provider %q (%v); want %v %d %v", e.Class, e.StatusCode, e.RetryAfter, e.Provider, err, tc.class, tc.status, tc.retryAfter)
			}
		})
	}
}
