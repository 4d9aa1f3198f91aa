package llmtest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

func TestResponsesStreamFraming(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, wireScript)
	resp, body := post(t, srv.OpenAIBaseURL()+"/responses", `{"model":"gpt-x","stream":true,"input":"hi"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var types []string
	var last map[string]any
	for i, ev := range parseSSE(t, body) {
		var data map[string]any
		if err := json.Unmarshal([]byte(ev.data), &data); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if data["type"] != ev.event || data["sequence_number"] != float64(i) {
			t.Errorf("event %d: name %q, type %v, sequence %v", i, ev.event, data["type"], data["sequence_number"])
		}
		if len(types) == 0 || types[len(types)-1] != ev.event {
			types = append(types, ev.event)
		}
		last = data
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.output_item.done", "response.completed"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event order (-want +got):\n%s", diff)
	}
	r := last["response"].(map[string]any)
	usage := r["usage"].(map[string]any)
	if r["status"] != "completed" || usage["input_tokens"] != 15.0 || usage["output_tokens"] != 5.0 || len(r["output"].([]any)) != 2 {
		t.Errorf("completed response %v", r)
	}
}

func TestResponsesMaxTokensIsIncomplete(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{Text: "cut", Stop: "max_tokens"}}}})
	_, body := post(t, srv.OpenAIBaseURL()+"/responses", `{"model":"m","input":"hi"}`)
	var r map[string]any
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if r["status"] != "incomplete" || r["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" {
		t.Errorf("response %s", body)
	}
}

func TestGeminiStreamFraming(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, wireScript)
	resp, body := post(t, srv.GeminiBaseURL()+"/v1beta/models/gemini-x:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	// Google ends lines with CRLF.
	events := strings.Split(strings.TrimSuffix(string(body), "\r\n\r\n"), "\r\n\r\n")
	if len(events) != 4 { // two text chunks, one call, the finish
		t.Fatalf("got %d events: %q", len(events), body)
	}
	var text []string
	for i, ev := range events {
		var c struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text         string         `json:"text"`
						FunctionCall map[string]any `json:"functionCall"`
					} `json:"parts"`
				} `json:"content"`
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
			UsageMetadata map[string]float64 `json:"usageMetadata"`
			ModelVersion  string             `json:"modelVersion"`
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || json.Unmarshal([]byte(data), &c) != nil || len(c.Candidates) != 1 || c.ModelVersion != "gemini-x" {
			t.Fatalf("event %d: %q", i, ev)
		}
		p := c.Candidates[0].Content.Parts[0]
		text = append(text, p.Text)
		if i == 2 && (p.FunctionCall["name"] != "read" || p.FunctionCall["id"] != "toolu_1") {
			t.Errorf("call chunk %q", ev)
		}
		if last := i == len(events)-1; last != (c.Candidates[0].FinishReason == "STOP") {
			t.Errorf("event %d finish %q", i, c.Candidates[0].FinishReason)
		}
		if i == len(events)-1 && (c.UsageMetadata["promptTokenCount"] != 15 || c.UsageMetadata["cachedContentTokenCount"] != 3 || c.UsageMetadata["candidatesTokenCount"] != 5) {
			t.Errorf("usage %v", c.UsageMetadata)
		}
	}
	if got := strings.Join(text, ""); got != "Hi there" {
		t.Errorf("text %q", got)
	}
}

func TestGeminiErrors(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{Text: "x",
		Fault: &llmtest.Fault{Kind: llmtest.FaultRateLimit, RetryAfterSecs: 7, Always: true}}}}})
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/v1beta/models/g:generateContent", 429, `"status":"RESOURCE_EXHAUSTED"`},
		{"/v1beta/models/g:generateContent", 429, `"retryDelay":"7s"`},
		{"/v1beta/models/g:streamGenerateContent", 400, `"status":"INVALID_ARGUMENT"`},
		{"/v1beta/models/g:countTokens", 404, "unknown endpoint"},
	} {
		resp, body := post(t, srv.GeminiBaseURL()+tc.path, `{"contents":[]}`)
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.path, resp.StatusCode, body, tc.status, tc.want)
		}
		if resp.Header.Get("Retry-After") != "" {
			t.Errorf("%s: Retry-After header %q; Google sends the wait in RetryInfo only", tc.path, resp.Header.Get("Retry-After"))
		}
	}
}

// TestAfterMatchesASteerBeforeAnyReply: Codex sends a message steered into
// a turn before the first reply as one more user message, which the
// Responses format merges into the first; After still finds it there, but
// not in the prompt itself.
func TestAfterMatchesASteerBeforeAnyReply(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, &llmtest.Script{Conversations: []llmtest.Conversation{
		{Name: "steered", Match: llmtest.Match{After: "STEER"}, Steps: []llmtest.Step{{Text: "saw it"}}},
		{Name: "plain", Steps: []llmtest.Step{{Text: "plain"}}},
	}})
	for body, want := range map[string]string{
		`{"model":"m","input":[{"role":"user","content":"<env/>"},{"role":"user","content":"do it"},{"role":"user","content":"STEER: hello"}]}`: "steered",
		`{"model":"m","input":[{"role":"user","content":"STEER in the prompt is not a steer"}]}`:                                                "plain",
	} {
		post(t, srv.OpenAIBaseURL()+"/responses", body)
		reqs := srv.Requests()
		if got := reqs[len(reqs)-1].Conversation; got != want {
			t.Errorf("%s answered by %q, want %q", body, got, want)
		}
	}
}
