package providers_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/llm/providers"
	"github.com/neuraphage/neuraphage-go/internal/llm/retry"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

var script = &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{{
	Text:  "hello from the fake model",
	Usage: &llmtest.Usage{InputTokens: 1000, OutputTokens: 100},
	Fault: &llmtest.Fault{Kind: llmtest.FaultOverloaded},
}}}}

func TestZeroConfigTiers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cfg   llm.Config
		env   func(*llmtest.Server) map[string]string
		tiers map[llm.Tier]string
		// cost of 1000 input and 100 output tokens on the worker model
		workerCost float64
	}{
		{
			name: "anthropic",
			env: func(s *llmtest.Server) map[string]string {
				return map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_BASE_URL": s.URL()}
			},
			tiers:      map[llm.Tier]string{llm.TierRouter: "claude-haiku-4-5", llm.TierWorker: "claude-sonnet-4-5", llm.TierExpert: "claude-opus-4-5"},
			workerCost: (1000*3 + 100*15) / 1e6,
		},
		{
			name: "openai",
			env: func(s *llmtest.Server) map[string]string {
				return map[string]string{"OPENAI_API_KEY": "sk-oa", "OPENAI_BASE_URL": s.OpenAIBaseURL()}
			},
			tiers:      map[llm.Tier]string{llm.TierRouter: "gpt-5-mini", llm.TierWorker: "gpt-5", llm.TierExpert: "gpt-5"},
			workerCost: (1000*1.25 + 100*10) / 1e6,
		},
		{
			name: "openai responses",
			cfg:  llm.Config{Providers: llm.ProvidersConfig{OpenAI: llm.ProviderConfig{API: llm.APIResponses}}},
			env: func(s *llmtest.Server) map[string]string {
				return map[string]string{"OPENAI_API_KEY": "sk-oa", "OPENAI_BASE_URL": s.OpenAIBaseURL()}
			},
			tiers:      map[llm.Tier]string{llm.TierRouter: "gpt-5-mini", llm.TierWorker: "gpt-5", llm.TierExpert: "gpt-5"},
			workerCost: (1000*1.25 + 100*10) / 1e6,
		},
		{
			name: "gemini",
			env: func(s *llmtest.Server) map[string]string {
				return map[string]string{"GEMINI_API_KEY": "gm", "GOOGLE_GEMINI_BASE_URL": s.GeminiBaseURL()}
			},
			tiers:      map[llm.Tier]string{llm.TierRouter: "gemini-2.5-flash-lite", llm.TierWorker: "gemini-2.5-flash", llm.TierExpert: "gemini-2.5-pro"},
			workerCost: (1000*0.30 + 100*2.50) / 1e6,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, script)
			set, err := providers.New(tc.cfg, env(tc.env(srv)), providers.Options{Retry: retry.Options{Sleep: noSleep}})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			for _, tier := range llm.Tiers() {
				c, err := set.Client(tier)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := c.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText(string(tier))}}, nil)
				if err != nil {
					t.Fatalf("%s: Stream: %v", tier, err)
				}
				if resp.Model != tc.tiers[tier] || resp.Message.Text() != "hello from the fake model" {
					t.Errorf("%s answered by %q with %q, want %q", tier, resp.Model, resp.Message.Text(), tc.tiers[tier])
				}
				// The first attempt is overloaded; the retry decorator is in the chain.
				if resp.Attempts != 2 {
					t.Errorf("%s took %d attempts, want 2", tier, resp.Attempts)
				}
				if api := srv.Requests()[0].API; api != wantAPI[tc.name] {
					t.Errorf("%s spoke %q, want %q", tier, api, wantAPI[tc.name])
				}
				if tier == llm.TierWorker && (resp.CostUSD < tc.workerCost*0.999 || resp.CostUSD > tc.workerCost*1.001) {
					t.Errorf("worker cost = %v, want %v", resp.CostUSD, tc.workerCost)
				}
			}
		})
	}
}

var wantAPI = map[string]llmtest.API{"anthropic": llmtest.APIAnthropic, "openai": llmtest.APIOpenAI,
	"openai responses": llmtest.APIResponses, "gemini": llmtest.APIGemini}

func TestNothingConfigured(t *testing.T) {
	t.Parallel()
	_, err := providers.New(llm.DefaultConfig(), env(nil), providers.Options{})
	var se *llm.SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("New with nothing = %v, want a SetupError explaining what to set", err)
	}
}

func TestMissingKeyForConfiguredProvider(t *testing.T) {
	t.Parallel()
	cfg := llm.DefaultConfig()
	cfg.Tiers.Expert = llm.TierConfig{Provider: "openai", Model: "gpt-5"}
	_, err := providers.New(cfg, env(map[string]string{"ANTHROPIC_API_KEY": "k"}), providers.Options{})
	if err == nil || !strings.Contains(err.Error(), "set OPENAI_API_KEY") || !strings.Contains(err.Error(), "llm.tiers.expert") {
		t.Fatalf("New = %v, want an error naming OPENAI_API_KEY and the tier", err)
	}
}

func TestUnknownTier(t *testing.T) {
	t.Parallel()
	set, err := providers.New(llm.Config{}, env(map[string]string{"ANTHROPIC_API_KEY": "k"}), providers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Client("genius"); err == nil {
		t.Error("Client(genius) succeeded")
	}
	if w := set.Resolution().Worker; w.Model != "claude-sonnet-4-5" || w.Endpoint.APIKeyEnv != "ANTHROPIC_API_KEY" {
		t.Errorf("worker resolved to %+v", w)
	}
}
