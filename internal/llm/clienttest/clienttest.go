// Package clienttest is the conformance suite every llm.Client provider
// passes. Run starts scripted model servers (package llmtest), points the
// provider under test at them and checks the llm.Client contract:
// streaming text, tool-call round trips, parallel tool calls, usage,
// retries through every retryable fault, classification of the others,
// cancellation mid-stream and the idle timeout (which a slow but steady
// stream must not trip).
package clienttest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

// Options are the settings the suite asks a client to be built with.
type Options struct {
	// IdleTimeout is the stream idle timeout to configure.
	IdleTimeout time.Duration
	// Model is the default model to configure.
	Model string
}

// Harness builds the client under test.
type Harness struct {
	// NewClient returns a client of the provider under test talking to srv
	// (use srv.URL(), srv.OpenAIBaseURL() or srv.GeminiBaseURL() as fits
	// the wire format) with
	// the SDK's retries disabled and any API key.
	NewClient func(t testing.TB, srv *llmtest.Server, o Options) llm.Client
	// Provider is the name the provider's errors carry (llm.ProviderAnthropic, …).
	Provider string
	// Overloaded is how the provider reports overload: its class and HTTP
	// status (Anthropic: ClassOverloaded, 529; Chat Completions: ClassServer, 503).
	Overloaded Overload
	// AuthStatus is the HTTP status of a rejected API key; zero means 401.
	// (The Gemini API answers 400 with the reason API_KEY_INVALID.)
	AuthStatus int
}

// Overload is a provider's way of saying it is overloaded.
type Overload struct {
	Class  llm.Class
	Status int
}

const testModel = "test-model-1"

// Run runs the suite. Subtests run in parallel, each with its own server.
func Run(t *testing.T, h Harness) {
	s := suite{h: h}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"StreamText", s.streamText},
		{"CompleteText", s.completeText},
		{"ToolRoundTrip", s.toolRoundTrip},
		{"ParallelToolCalls", s.parallelToolCalls},
		{"CompleteToolCall", s.completeToolCall},
		{"UsageAndCost", s.usageAndCost},
		{"ConversationsByMatch", s.conversationsByMatch},
		{"RetryFaults", s.retryFaults},
		{"NonRetryableFaults", s.nonRetryableFaults},
		{"MalformedStream", s.malformed},
		{"CancelMidStream", s.cancelMidStream},
		{"StalledStream", s.stalled},
		{"SlowStreamWithinIdleTimeout", s.slowWithinIdle},
		{"ConcurrentStreams", s.concurrent},
		{"ErrorClassification", s.errorClassification},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t)
		})
	}
}

type suite struct{ h Harness }

func (s suite) start(t *testing.T, script *llmtest.Script, idle time.Duration) (*llmtest.Server, llm.Client) {
	t.Helper()
	srv := llmtest.NewServer(t, script)
	if idle == 0 {
		idle = 30 * time.Second
	}
	return srv, s.h.NewClient(t, srv, Options{IdleTimeout: idle, Model: testModel})
}

func oneStep(st llmtest.Step) *llmtest.Script {
	return &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{st}}}
}

// recorder collects streamed events.
type recorder struct {
	events []llm.Event
}

func (r *recorder) handle(ev llm.Event) { r.events = append(r.events, ev) }

// text returns the text since the last reset, as the contract defines it.
func (r *recorder) text() string {
	var b strings.Builder
	for _, ev := range r.events {
		switch ev.Kind {
		case llm.EventText:
			b.WriteString(ev.Text)
		case llm.EventReset:
			b.Reset()
		}
	}
	return b.String()
}

func (r *recorder) count(k llm.EventKind) int {
	n := 0
	for _, ev := range r.events {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

func ask(text string) *llm.Request {
	return &llm.Request{System: "You are a test.", Messages: []llm.Message{llm.UserText(text)}}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (s suite) streamText(t *testing.T) {
	const want = "Hello, world! This reply is streamed in small chunks: ünïcödé too."
	srv, c := s.start(t, oneStep(llmtest.Step{Text: want, ChunkSize: 5}), 0)
	var rec recorder
	resp, err := c.Stream(ctxFor(t), ask("say hello"), rec.handle)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got := rec.text(); got != want {
		t.Errorf("streamed text = %q, want %q", got, want)
	}
	if rec.count(llm.EventText) < 2 {
		t.Errorf("got %d text events, want several deltas", rec.count(llm.EventText))
	}
	if got := resp.Message.Text(); got != want {
		t.Errorf("response text = %q, want %q", got, want)
	}
	if resp.Message.Role != llm.RoleAssistant || resp.StopReason != llm.StopEndTurn {
		t.Errorf("role, stop = %q, %q; want assistant, end_turn", resp.Message.Role, resp.StopReason)
	}
	if resp.Model != testModel {
		t.Errorf("model = %q, want %q", resp.Model, testModel)
	}
	if resp.Usage.OutputTokens <= 0 || resp.Usage.InputTokens <= 0 {
		t.Errorf("usage = %+v, want positive input and output", resp.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if !r.Stream || r.System != "You are a test." || r.Model != testModel || len(r.Messages) != 1 || r.Messages[0].Text() != "say hello" {
		t.Errorf("server saw stream=%t system=%q model=%q messages=%+v", r.Stream, r.System, r.Model, r.Messages)
	}
}

func (s suite) completeText(t *testing.T) {
	srv, c := s.start(t, oneStep(llmtest.Step{Text: "whole reply", Usage: &llmtest.Usage{InputTokens: 11, OutputTokens: 3}}), 0)
	resp, err := c.Complete(ctxFor(t), ask("hi"))
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Text() != "whole reply" || resp.StopReason != llm.StopEndTurn || resp.Usage.OutputTokens != 3 {
		t.Errorf("Complete = text %q stop %q usage %+v", resp.Message.Text(), resp.StopReason, resp.Usage)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Stream {
		t.Errorf("server saw %d requests (stream=%v), want 1 non-streaming", len(reqs), reqs)
	}
}

func jsonEqual(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: %q is not JSON: %v", what, got, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want %q: %v", what, want, err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, diff)
	}
}
