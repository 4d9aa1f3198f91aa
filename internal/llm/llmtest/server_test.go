package llmtest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

func post(t testing.TB, url, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "sk-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp, b
}

type sseEvent struct {
	event string
	data  string
}

// parseSSE splits a body into events, checking the framing strictly.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\n\n")) {
		t.Fatalf("body does not end with a blank line: %q", body)
	}
	var evs []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			name, value, ok := strings.Cut(line, ": ")
			switch {
			case !ok:
				t.Fatalf("bad SSE line %q", line)
			case name == "event":
				ev.event = value
			case name == "data":
				ev.data = value
			default:
				t.Fatalf("unexpected SSE field %q", name)
			}
		}
		evs = append(evs, ev)
	}
	return evs
}

var wireScript = &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{
	Text:      "Hi there",
	ChunkSize: 4,
	ToolCalls: []llmtest.ToolCall{{ID: "toolu_1", Name: "read", Input: map[string]any{"path": "a.go"}}},
	Usage:     &llmtest.Usage{InputTokens: 12, OutputTokens: 5, CacheReadTokens: 3},
}}}}

func TestAnthropicStreamFraming(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, wireScript)
	resp, body := post(t, srv.URL()+"/v1/messages",
		`{"model":"claude-x","max_tokens":100,"stream":true,"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hello"}]}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("content type %q", ct)
	}
	var got []string
	for _, ev := range parseSSE(t, body) {
		var d struct {
			Type  string `json:"type"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
			t.Fatalf("event %s: data %q is not JSON: %v", ev.event, ev.data, err)
		}
		if d.Type != ev.event {
			t.Errorf("event line %q but data type %q", ev.event, d.Type)
		}
		desc := ev.event
		switch {
		case d.Delta.Type == "text_delta":
			desc += " text " + d.Delta.Text
		case d.Delta.Type == "input_json_delta":
			desc += " json " + d.Delta.PartialJSON
		case ev.event == "message_delta":
			desc += fmt.Sprintf(" %s %d", d.Delta.StopReason, d.Usage.OutputTokens)
		}
		got = append(got, desc)
	}
	want := []string{
		"message_start", "content_block_start", "ping",
		"content_block_delta text Hi t", "content_block_delta text here", "content_block_stop",
		"content_block_start", "content_block_delta json ", `content_block_delta json {"pa`, `content_block_delta json th":`,
		`content_block_delta json "a.g`, `content_block_delta json o"}`, "content_block_stop",
		"message_delta tool_use 5", "message_stop",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event sequence (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].CacheBreakpoints != 1 || reqs[0].Header.Get("X-Api-Key") != "sk-test" || reqs[0].System != "sys" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestOpenAIStreamFraming(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, wireScript)
	for _, includeUsage := range []bool{true, false} {
		_, body := post(t, srv.OpenAIBaseURL()+"/chat/completions", fmt.Sprintf(
			`{"model":"gpt-x","stream":true,"stream_options":{"include_usage":%t},"messages":[{"role":"system","content":"sys"},{"role":"user","content":"hello"}]}`, includeUsage))
		evs := parseSSE(t, body)
		var got []string
		for _, ev := range evs {
			if ev.event != "" {
				t.Errorf("OpenAI streams have no event lines, got %q", ev.event)
			}
			if ev.data == "[DONE]" {
				got = append(got, "[DONE]")
				continue
			}
			var c struct {
				Object  string `json:"object"`
				Choices []struct {
					Delta struct {
						Role      string `json:"role"`
						Content   string `json:"content"`
						ToolCalls []struct {
							Index    int    `json:"index"`
							ID       string `json:"id"`
							Function struct {
								Name      string `json:"name"`
								Arguments string `json:"arguments"`
							} `json:"function"`
						} `json:"tool_calls"`
					} `json:"delta"`
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
				Usage *struct {
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
					Details          struct {
						Cached int `json:"cached_tokens"`
					} `json:"prompt_tokens_details"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(ev.data), &c); err != nil || c.Object != "chat.completion.chunk" {
				t.Fatalf("chunk %q: %v", ev.data, err)
			}
			if c.Usage != nil {
				got = append(got, fmt.Sprintf("usage %d %d %d", c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.Details.Cached))
				continue
			}
			ch := c.Choices[0]
			switch {
			case ch.FinishReason != nil:
				got = append(got, "finish "+*ch.FinishReason)
			case ch.Delta.Role != "":
				got = append(got, "role "+ch.Delta.Role)
			case len(ch.Delta.ToolCalls) > 0:
				tc := ch.Delta.ToolCalls[0]
				got = append(got, fmt.Sprintf("tool %d %s %s %s", tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments))
			default:
				got = append(got, "content "+ch.Delta.Content)
			}
		}
		want := []string{"role assistant", "content Hi t", "content here",
			"tool 0 toolu_1 read ", `tool 0   {"pa`, `tool 0   th":`, `tool 0   "a.g`, `tool 0   o"}`, "finish tool_calls"}
		if includeUsage {
			want = append(want, "usage 15 5 3")
		}
		want = append(want, "[DONE]")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("include_usage=%t chunk sequence (-want +got):\n%s", includeUsage, diff)
		}
	}
}

func TestStepsFollowAssistantTurns(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, &llmtest.Script{Conversations: []llmtest.Conversation{{
		Name:  "two",
		Match: llmtest.Match{User: "^go$"},
		Steps: []llmtest.Step{{Text: "first", Fault: &llmtest.Fault{Kind: llmtest.FaultServerError, Times: 2}}, {Text: "second"}},
	}}})
	turn := func(assistantTurns int) (int, string) {
		msgs := `[{"role":"user","content":"go"}`
		for i := range assistantTurns {
			msgs += fmt.Sprintf(`,{"role":"assistant","content":"a%d"},{"role":"user","content":"more"}`, i)
		}
		resp, body := post(t, srv.URL()+"/v1/messages", `{"model":"m","max_tokens":10,"messages":`+msgs+`]}`)
		return resp.StatusCode, string(body)
	}
	for i, want := range []struct {
		status int
		text   string
	}{
		{500, `"api_error"`}, {500, `"api_error"`}, {200, `"first"`},
	} {
		if status, body := turn(0); status != want.status || !strings.Contains(body, want.text) {
			t.Errorf("attempt %d at step 0 = %d %s, want %d with %s", i+1, status, body, want.status, want.text)
		}
	}
	if status, body := turn(1); status != 200 || !strings.Contains(body, `"second"`) {
		t.Errorf("step 1 = %d %s", status, body)
	}
	if _, body := turn(2); !strings.Contains(body, "exhausted") {
		t.Errorf("step 2 = %s, want the exhausted reply", body)
	}
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, fmt.Sprintf("%s/%d/%d/%s", r.Conversation, r.Step, r.Attempt, r.Fault))
	}
	want := []string{"two/0/1/server_error", "two/0/2/server_error", "two/0/3/", "two/1/1/", "two/2/1/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{
		{Text: "x", Fault: &llmtest.Fault{Kind: llmtest.FaultRateLimit, RetryAfterSecs: 7, Always: true}},
	}}})
	resp, body := post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !strings.Contains(string(body), `"error"`) {
		t.Errorf("got %d retry-after %q body %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

func TestUnknownEndpointAndBadBody(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, nil)
	if resp, _ := post(t, srv.URL()+"/v1/complete", `{}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown endpoint = %d, want 404", resp.StatusCode)
	}
	if resp, body := post(t, srv.URL()+"/v1/messages", `{"messages": 7}`); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "invalid_request_error") {
		t.Errorf("bad body = %d %s, want 400 invalid_request_error", resp.StatusCode, body)
	}
}

// syncBuffer is an io.Writer safe for the server's logging goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServeListenerStopsOnCancel(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var log syncBuffer
	done := make(chan error, 1)
	script := &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{
		{Text: "stalls", Fault: &llmtest.Fault{Kind: llmtest.FaultStall, Always: true}},
	}}}
	go func() { done <- llmtest.ServeListener(ctx, ln, script, &log) }()

	// A stalled stream is in flight when the server is told to stop.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+ln.Addr().String()+"/v1/messages",
		strings.NewReader(`{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatalf("reading the first event: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ServeListener = %v, want nil after cancel", err)
	}
	if !strings.Contains(log.String(), "serving on http://") || !strings.Contains(log.String(), "fault=stall") {
		t.Errorf("log = %q", log.String())
	}
}
