package llmtest_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

func benchServer(b *testing.B, api string) (url, body string) {
	srv := llmtest.NewServer(b, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{
		Text:      strings.Repeat("streamed text ", 20),
		ToolCalls: []llmtest.ToolCall{{Name: "read", Input: map[string]any{"path": "internal/auth/jwt.go"}}},
		ChunkSize: 16,
	}}}})
	if api == "openai" {
		return srv.OpenAIBaseURL() + "/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}]}`
	}
	return srv.URL() + "/v1/messages", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"go"}]}`
}

// BenchmarkRawStream is one streamed call at a time with a plain HTTP
// client, reading the body without parsing it: the baseline to subtract
// from the providers' BenchmarkStream to see their own overhead.
func BenchmarkRawStream(b *testing.B) {
	for _, api := range []string{"anthropic", "openai"} {
		b.Run(api, func(b *testing.B) {
			url, body := benchServer(b, api)
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// BenchmarkServerStreaming100 measures the scripted server under 100
// concurrent streaming clients (plain HTTP, no SDK). b.N requests in all;
// see requests/s in the output.
func BenchmarkServerStreaming100(b *testing.B) {
	for _, api := range []string{"anthropic", "openai"} {
		b.Run(api, func(b *testing.B) {
			url, body := benchServer(b, api)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
			defer client.CloseIdleConnections()
			b.SetParallelism(100 / max(1, runtimeProcs()))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
