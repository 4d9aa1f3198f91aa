package llm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

func TestDefaultConfigIsValid(t *testing.T) {
	t.Parallel()
	if err := llm.DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	if err := (llm.Config{}).Validate(); err != nil {
		t.Fatalf("zero Config.Validate() = %v", err)
	}
}

func TestConfigYAMLKeys(t *testing.T) {
	t.Parallel()
	const doc = `
providers:
  anthropic:
    base_url: https://proxy.example.com
    api_key_env: MY_ANTHROPIC_KEY
    max_concurrent: 4
    requests_per_minute: 50
    tokens_per_minute: 40000
    max_output_tokens: 4096
  openai:
    base_url: http://localhost:11434/v1
tiers:
  router: {provider: openai, model: llama3.2}
  worker: {provider: anthropic, model: claude-sonnet-4-5}
  expert: {provider: anthropic}
retry: {max_attempts: 3, base_delay_ms: 250, max_delay_ms: 10000}
stream_idle_timeout_secs: 60
models:
  - {name: llama3.2, provider: openai, context_window: 128000}
`
	var got llm.Config
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	want := llm.Config{
		Providers: llm.ProvidersConfig{
			Anthropic: llm.ProviderConfig{BaseURL: "https://proxy.example.com", APIKeyEnv: "MY_ANTHROPIC_KEY", MaxConcurrent: 4,
				RequestsPerMinute: 50, TokensPerMinute: 40000, MaxOutputTokens: 4096},
			OpenAI: llm.ProviderConfig{BaseURL: "http://localhost:11434/v1"},
		},
		Tiers: llm.TiersConfig{
			Router: llm.TierConfig{Provider: "openai", Model: "llama3.2"},
			Worker: llm.TierConfig{Provider: "anthropic", Model: "claude-sonnet-4-5"},
			Expert: llm.TierConfig{Provider: "anthropic"},
		},
		Retry:                 llm.RetryConfig{MaxAttempts: 3, BaseDelayMs: 250, MaxDelayMs: 10000},
		StreamIdleTimeoutSecs: 60,
		Models:                []llm.ModelConfig{{Name: "llama3.2", Provider: "openai", ContextWindow: 128000}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded config mismatch (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
}

func TestValidateNamesKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		mutate func(*llm.Config)
		want   []string
	}{
		{"unknown tier provider", func(c *llm.Config) { c.Tiers.Worker.Provider = "foo" },
			[]string{`llm.tiers.worker.provider: unknown provider "foo"`}},
		{"model without provider", func(c *llm.Config) { c.Tiers.Router.Model = "gpt-5" },
			[]string{`llm.tiers.router.provider: must be set when model "gpt-5" is set`}},
		{"bad base url", func(c *llm.Config) { c.Providers.OpenAI.BaseURL = "localhost:11434" },
			[]string{`llm.providers.openai.base_url: "localhost:11434" is not an http or https URL`}},
		{"negative limit", func(c *llm.Config) { c.Providers.Anthropic.MaxConcurrent = -1 },
			[]string{`llm.providers.anthropic.max_concurrent: must not be negative`}},
		{"retry delays", func(c *llm.Config) { c.Retry.BaseDelayMs = 5000; c.Retry.MaxDelayMs = 1000 },
			[]string{`llm.retry.base_delay_ms: 5000 exceeds retry.max_delay_ms 1000`}},
		{"unknown openai api", func(c *llm.Config) { c.Providers.OpenAI.API = "completions" },
			[]string{`llm.providers.openai.api: unknown API "completions"`}},
		{"api on a one-api provider", func(c *llm.Config) { c.Providers.Gemini.API = "responses" },
			[]string{`llm.providers.gemini.api: only the openai provider has a choice of API`}},
		{"idle timeout", func(c *llm.Config) { c.StreamIdleTimeoutSecs = -5 },
			[]string{`llm.stream_idle_timeout_secs: must not be negative`}},
		{"model entries", func(c *llm.Config) {
			c.Models = []llm.ModelConfig{
				{Name: "x", Provider: "openai", InputPerMTok: -1},
				{Name: "x", Provider: "openai"},
				{Provider: "nope"},
			}
		}, []string{
			`llm.models.0.input_per_mtok: must be a non-negative price`,
			`llm.models.1.name: duplicates models.0 (openai/x)`,
			`llm.models.2.name: must be set`,
			`llm.models.2.provider: unknown provider "nope"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := llm.DefaultConfig()
			tc.mutate(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate() = nil, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q\nwant it to contain %q", err, w)
				}
			}
			// The config package finds the first field error to point at its line.
			var fe interface{ ConfigField() (string, string) }
			if !errors.As(err, &fe) {
				t.Fatalf("Validate() = %v, want errors with ConfigField", err)
			}
			if key, _ := fe.ConfigField(); !strings.HasPrefix(tc.want[0], "llm."+key+":") {
				t.Errorf("ConfigField key %q does not match %q", key, tc.want[0])
			}
		})
	}
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestResolveZeroConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		env      map[string]string
		cfg      llm.Config
		want     [3]string // provider/model for router, worker, expert
		wantBase string
	}{
		{"only anthropic key", map[string]string{"ANTHROPIC_API_KEY": "k"}, llm.Config{},
			[3]string{"anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-5"}, ""},
		{"only openai key", map[string]string{"OPENAI_API_KEY": "k"}, llm.DefaultConfig(),
			[3]string{"openai/gpt-5-mini", "openai/gpt-5", "openai/gpt-5"}, ""},
		{"both keys prefer anthropic", map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, llm.Config{},
			[3]string{"anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-5"}, ""},
		{"base url from env", map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, llm.Config{},
			[3]string{"anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-5"}, "http://127.0.0.1:9"},
		{"local openai server needs no key", nil,
			llm.Config{Providers: llm.ProvidersConfig{OpenAI: llm.ProviderConfig{BaseURL: "http://localhost:11434/v1"}},
				Tiers: llm.TiersConfig{Router: llm.TierConfig{Provider: "openai", Model: "llama3.2"}}},
			[3]string{"openai/llama3.2", "openai/gpt-5", "openai/gpt-5"}, "http://localhost:11434/v1"},
		{"only gemini key, base url as gemini cli reads it", map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"}, llm.DefaultConfig(),
			[3]string{"gemini/gemini-2.5-flash-lite", "gemini/gemini-2.5-flash", "gemini/gemini-2.5-pro"}, "http://127.0.0.1:9"},
		{"openai before gemini", map[string]string{"GEMINI_API_KEY": "k", "OPENAI_API_KEY": "k"}, llm.Config{},
			[3]string{"openai/gpt-5-mini", "openai/gpt-5", "openai/gpt-5"}, ""},
		{"custom key variable", map[string]string{"WORK_KEY": "k"},
			llm.Config{Providers: llm.ProvidersConfig{Anthropic: llm.ProviderConfig{APIKeyEnv: "WORK_KEY"}}},
			[3]string{"anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-5"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := llm.Resolve(tc.cfg, env(tc.env))
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			got := [3]string{}
			for i, tier := range llm.Tiers() {
				target, _ := res.Target(tier)
				got[i] = target.Endpoint.Provider + "/" + target.Model
				if target.Endpoint.BaseURL != tc.wantBase {
					t.Errorf("%s base URL = %q, want %q", tier, target.Endpoint.BaseURL, tc.wantBase)
				}
			}
			if got != tc.want {
				t.Errorf("tiers = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestResolveExplainsSetup(t *testing.T) {
	t.Parallel()
	_, err := llm.Resolve(llm.Config{}, env(nil))
	var se *llm.SetupError
	if !errors.As(err, &se) {
		t.Fatalf("Resolve with nothing = %v, want *SetupError", err)
	}
	for _, w := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "llm.providers.openai.base_url"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("setup message %q does not mention %s", err, w)
		}
	}

	cfg := llm.Config{Tiers: llm.TiersConfig{Expert: llm.TierConfig{Provider: "anthropic"}}}
	_, err = llm.Resolve(cfg, env(map[string]string{"OPENAI_API_KEY": "k"}))
	if !errors.As(err, &se) || se.EnvVar != "ANTHROPIC_API_KEY" || se.Key != "llm.tiers.expert.provider" {
		t.Fatalf("Resolve with expert on anthropic and no key = %v, want SetupError naming ANTHROPIC_API_KEY", err)
	}
	if !strings.Contains(err.Error(), "set ANTHROPIC_API_KEY") {
		t.Errorf("message %q does not say which variable to set", err)
	}

	cfg.Tiers.Expert.Provider = "bogus"
	if _, err := llm.Resolve(cfg, env(nil)); err == nil || !strings.Contains(err.Error(), "llm.tiers.expert.provider") {
		t.Errorf("Resolve with invalid config = %v, want the validation error", err)
	}
}

func TestCatalogue(t *testing.T) {
	t.Parallel()
	cat := llm.NewCatalogue([]llm.ModelConfig{
		{Name: "claude-sonnet-4-5", Provider: "anthropic", ContextWindow: 1_000_000, InputPerMTok: 6, OutputPerMTok: 22.5},
		{Name: "llama3.2", Provider: "openai", ContextWindow: 128_000},
	})
	m, ok := cat.Lookup("anthropic", "claude-sonnet-4-5-20250929")
	if !ok || m.InputPerMTok != 6 || m.ContextWindow != 1_000_000 {
		t.Errorf("override via dated name = %+v, %t", m, ok)
	}
	if m, ok := cat.Lookup("anthropic", "claude-opus-4-5"); !ok || m.OutputPerMTok != 25 {
		t.Errorf("built-in opus = %+v, %t", m, ok)
	}
	if _, ok := cat.Lookup("openai", "llama3.2"); !ok {
		t.Error("added model not found")
	}
	if _, ok := cat.Lookup("openai", "claude-opus-4-5"); ok {
		t.Error("model found under the wrong provider")
	}
	if m, ok := cat.Lookup("openai", "gpt-5-mini-2025-08-07"); !ok || m.Name != "gpt-5-mini" {
		t.Errorf("dated gpt-5-mini resolved to %q, want the longest match gpt-5-mini", m.Name)
	}
	sonnet, _ := llm.NewCatalogue(nil).Lookup("anthropic", "claude-sonnet-4-5")
	got := sonnet.Cost(llm.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheWriteTokens: 200_000, CacheReadTokens: 2_000_000})
	const want = 3 + 1.5 + 0.75 + 0.6
	if got < want-1e-9 || got > want+1e-9 {
		t.Errorf("cost = %v, want %v", got, want)
	}
	for _, m := range llm.DefaultModels() {
		if m.ContextWindow <= 0 || m.InputPerMTok <= 0 || m.OutputPerMTok <= m.InputPerMTok || m.CacheReadPerMTok >= m.InputPerMTok {
			t.Errorf("implausible default entry %+v", m)
		}
	}
}
