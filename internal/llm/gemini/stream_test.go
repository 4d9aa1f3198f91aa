package gemini

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// FuzzAccumulator feeds arbitrary chunk sequences (one JSON chunk per
// line): no panic, only classified errors, and an accepted response holds
// tool calls with ids, names and JSON-object inputs and no negative usage.
func FuzzAccumulator(f *testing.F) {
	f.Add([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"index":0}],"responseId":"r"}
{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read","args":{"p":1}}}]},"index":0}]}
{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3,"cachedContentTokenCount":4}}`))
	f.Add([]byte(`{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}]}}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"","args":"x"}}]}}]}`))
	f.Add([]byte(`{"promptFeedback":{"blockReason":"SAFETY"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var acc accumulator
		for _, line := range bytes.Split(data, []byte("\n")) {
			if err := acc.add(line, func(llm.Event) {}); err != nil {
				if llm.ClassOf(err) == llm.ClassUnknown {
					t.Fatalf("unclassified error %v", err)
				}
				return
			}
		}
		resp, err := acc.response()
		if err != nil {
			if llm.ClassOf(err) == llm.ClassUnknown {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		for _, c := range resp.Message.ToolCalls() {
			var obj map[string]any
			if c.ID == "" || c.Name == "" || json.Unmarshal(c.Input, &obj) != nil {
				t.Fatalf("bad tool call %+v", c)
			}
		}
		if u := resp.Usage; u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 {
			t.Fatalf("negative usage %+v", u)
		}
	})
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body   string
		status int
		want   llm.Class
		wait   time.Duration
	}{
		{`{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}`, 429, llm.ClassRateLimit, 1500 * time.Millisecond},
		{`{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}`, 400, llm.ClassAuth, 0},
		{`{"code":400,"message":"The input token count (2000000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}`, 400, llm.ClassContextTooLong, 0},
		{`{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}`, 400, llm.ClassBadRequest, 0},
		{`{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}`, 0, llm.ClassOverloaded, 0},
		{`{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}`, 404, llm.ClassBadRequest, 0},
		{`{"code":403,"message":"denied","status":"PERMISSION_DENIED"}`, 403, llm.ClassAuth, 0},
		{`{"code":500,"message":"internal","status":"INTERNAL"}`, 500, llm.ClassServer, 0},
	} {
		var e wireError
		if err := json.Unmarshal([]byte(tc.body), &e); err != nil {
			t.Fatal(err)
		}
		got := e.classify(tc.status)
		if got.Class != tc.want || got.RetryAfter != tc.wait || got.StatusCode != tc.status {
			t.Errorf("%s: class %v wait %v status %d; want %v %v %d", tc.body, got.Class, got.RetryAfter, got.StatusCode, tc.want, tc.wait, tc.status)
		}
	}
}
