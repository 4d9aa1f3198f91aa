package llm

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
)

// Provider names accepted in configuration.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
	ProviderGemini    = "gemini"
)

// Providers lists the provider names accepted in configuration.
func Providers() []string { return []string{ProviderAnthropic, ProviderOpenAI, ProviderGemini} }

// Wire APIs an openai provider may speak (ProviderConfig.API).
const (
	// APIChat is Chat Completions, which OpenAI-compatible servers
	// (Ollama, vLLM, LM Studio, OpenRouter) speak.
	APIChat = "chat"
	// APIResponses is the Responses API, OpenAI's newest (and Codex's).
	APIResponses = "responses"
)

// Tier is a class of work mapped to a concrete model in configuration.
type Tier string

// The model tiers.
const (
	TierRouter Tier = "router"
	TierWorker Tier = "worker"
	TierExpert Tier = "expert"
)

// Tiers lists every tier, cheapest first.
func Tiers() []Tier { return []Tier{TierRouter, TierWorker, TierExpert} }

// Config is the model layer's configuration, embedded by the project's
// config package under the top-level key "llm:". Every field has a usable
// zero value: an empty Config (or DefaultConfig) plus one API key in the
// environment is a working setup (see Resolve).
type Config struct {
	Providers ProvidersConfig `yaml:"providers"`
	Tiers     TiersConfig     `yaml:"tiers"`
	Retry     RetryConfig     `yaml:"retry"`
	// StreamIdleTimeoutSecs ends a stream that delivers nothing for this
	// long; zero means the default (DefaultStreamIdleTimeoutSecs).
	StreamIdleTimeoutSecs int `yaml:"stream_idle_timeout_secs"`
	// Models adds models to the catalogue or overrides built-in entries
	// (matched by provider and name).
	Models []ModelConfig `yaml:"models"`
}

// ProvidersConfig holds per-provider settings.
type ProvidersConfig struct {
	Anthropic ProviderConfig `yaml:"anthropic"`
	OpenAI    ProviderConfig `yaml:"openai"`
	Gemini    ProviderConfig `yaml:"gemini"`
}

// ProviderConfig configures one provider endpoint.
type ProviderConfig struct {
	// BaseURL overrides the endpoint; empty means the provider's base-URL
	// environment variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL,
	// GOOGLE_GEMINI_BASE_URL), else the public API. For openai, point it
	// at Ollama, vLLM, LM Studio or OpenRouter.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the API key; empty
	// means ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY. Keys never
	// live in config.
	APIKeyEnv string `yaml:"api_key_env"`
	// API is the wire API of an openai provider: APIChat (empty means
	// chat) or APIResponses. Other providers speak one API and leave it
	// empty.
	API string `yaml:"api"`
	// MaxConcurrent caps calls in flight to this provider across all tasks;
	// zero means unlimited.
	MaxConcurrent int `yaml:"max_concurrent"`
	// RequestsPerMinute and TokensPerMinute feed token buckets shared by all
	// tasks; zero means unlimited.
	RequestsPerMinute int `yaml:"requests_per_minute"`
	TokensPerMinute   int `yaml:"tokens_per_minute"`
	// MaxOutputTokens is the default reply cap for requests that set none;
	// zero means 8192.
	MaxOutputTokens int `yaml:"max_output_tokens"`
}

// TiersConfig maps every tier to a model.
type TiersConfig struct {
	Router TierConfig `yaml:"router"`
	Worker TierConfig `yaml:"worker"`
	Expert TierConfig `yaml:"expert"`
}

// Get returns the configuration of tier t.
func (c TiersConfig) Get(t Tier) TierConfig {
	switch t {
	case TierRouter:
		return c.Router
	case TierWorker:
		return c.Worker
	case TierExpert:
		return c.Expert
	}
	return TierConfig{}
}

// TierConfig names the provider and model of a tier. An empty Provider
// means "whichever provider has credentials" (see Resolve); an empty Model
// means that provider's default model for the tier.
type TierConfig struct {
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
}

// RetryConfig configures the retry decorator.
type RetryConfig struct {
	// MaxAttempts counts the first try; 1 disables retries, zero means 5.
	MaxAttempts int `yaml:"max_attempts"`
	// BaseDelayMs is the first backoff; zero means 500.
	BaseDelayMs int `yaml:"base_delay_ms"`
	// MaxDelayMs caps one backoff; zero means 30000.
	MaxDelayMs int `yaml:"max_delay_ms"`
}

// ModelConfig is one catalogue entry. Prices are US dollars per million tokens.
type ModelConfig struct {
	Name              string  `yaml:"name"`
	Provider          string  `yaml:"provider"`
	ContextWindow     int     `yaml:"context_window"`
	InputPerMTok      float64 `yaml:"input_per_mtok"`
	OutputPerMTok     float64 `yaml:"output_per_mtok"`
	CacheWritePerMTok float64 `yaml:"cache_write_per_mtok"`
	CacheReadPerMTok  float64 `yaml:"cache_read_per_mtok"`
}

// Defaults used when a field is zero.
const (
	DefaultStreamIdleTimeoutSecs = 90
	DefaultMaxAttempts           = 5
	DefaultBaseDelayMs           = 500
	DefaultMaxDelayMs            = 30_000
	DefaultMaxOutputTokens       = 8192
)

// DefaultConfig returns the configuration used when the user wrote none:
// tiers follow whichever provider has a key, with conservative shared limits.
func DefaultConfig() Config {
	return Config{
		Providers: ProvidersConfig{
			Anthropic: ProviderConfig{APIKeyEnv: "ANTHROPIC_API_KEY", MaxConcurrent: 8},
			OpenAI:    ProviderConfig{APIKeyEnv: "OPENAI_API_KEY", MaxConcurrent: 8},
			Gemini:    ProviderConfig{APIKeyEnv: "GEMINI_API_KEY", MaxConcurrent: 8},
		},
		Retry: RetryConfig{
			MaxAttempts: DefaultMaxAttempts,
			BaseDelayMs: DefaultBaseDelayMs,
			MaxDelayMs:  DefaultMaxDelayMs,
		},
		StreamIdleTimeoutSecs: DefaultStreamIdleTimeoutSecs,
	}
}

// Provider returns the configuration of the named provider.
func (c Config) Provider(name string) (ProviderConfig, bool) {
	switch name {
	case ProviderAnthropic:
		return c.Providers.Anthropic, true
	case ProviderOpenAI:
		return c.Providers.OpenAI, true
	case ProviderGemini:
		return c.Providers.Gemini, true
	}
	return ProviderConfig{}, false
}

// ConfigError is one problem found by Config.Validate.
type ConfigError struct {
	// Key is the dotted key relative to the llm section, with list indexes
	// as path elements: "tiers.worker.provider", "models.0.name".
	Key string
	Msg string
}

// Error renders the full key, e.g. `llm.tiers.worker.provider: unknown provider "foo"`.
func (e *ConfigError) Error() string { return "llm." + e.Key + ": " + e.Msg }

// ConfigField returns the key relative to the section and the message; the
// config package uses it to point at the file line of the key.
func (e *ConfigError) ConfigField() (key, msg string) { return e.Key, e.Msg }

// Validate checks c. It reports every problem, joined, each a *ConfigError
// naming the offending key, e.g. `llm.tiers.worker.provider: unknown
// provider "foo"`.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	for _, name := range Providers() {
		p, _ := c.Provider(name)
		key := "providers." + name
		if p.BaseURL != "" {
			if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(key+".base_url", "%q is not an http or https URL", p.BaseURL)
			}
		}
		switch {
		case name == ProviderOpenAI && p.API != "" && p.API != APIChat && p.API != APIResponses:
			bad(key+".api", "unknown API %q (want %q or %q)", p.API, APIChat, APIResponses)
		case name != ProviderOpenAI && p.API != "":
			bad(key+".api", "only the openai provider has a choice of API; leave it empty")
		}
		for _, f := range []struct {
			key string
			v   int
		}{
			{"max_concurrent", p.MaxConcurrent},
			{"requests_per_minute", p.RequestsPerMinute},
			{"tokens_per_minute", p.TokensPerMinute},
			{"max_output_tokens", p.MaxOutputTokens},
		} {
			if f.v < 0 {
				bad(key+"."+f.key, "must not be negative, got %d", f.v)
			}
		}
	}
	for _, t := range Tiers() {
		tc := c.Tiers.Get(t)
		if tc.Provider != "" && !slices.Contains(Providers(), tc.Provider) {
			bad("tiers."+string(t)+".provider", "unknown provider %q (want one of %q)", tc.Provider, Providers())
		}
		if tc.Model != "" && tc.Provider == "" {
			bad("tiers."+string(t)+".provider", "must be set when model %q is set", tc.Model)
		}
	}
	if c.Retry.MaxAttempts < 0 {
		bad("retry.max_attempts", "must not be negative, got %d", c.Retry.MaxAttempts)
	}
	if c.Retry.BaseDelayMs < 0 {
		bad("retry.base_delay_ms", "must not be negative, got %d", c.Retry.BaseDelayMs)
	}
	if c.Retry.MaxDelayMs < 0 {
		bad("retry.max_delay_ms", "must not be negative, got %d", c.Retry.MaxDelayMs)
	}
	if c.Retry.MaxDelayMs > 0 && c.Retry.BaseDelayMs > c.Retry.MaxDelayMs {
		bad("retry.base_delay_ms", "%d exceeds retry.max_delay_ms %d", c.Retry.BaseDelayMs, c.Retry.MaxDelayMs)
	}
	if c.StreamIdleTimeoutSecs < 0 {
		bad("stream_idle_timeout_secs", "must not be negative, got %d", c.StreamIdleTimeoutSecs)
	}
	seen := make(map[string]int)
	for i, m := range c.Models {
		key := fmt.Sprintf("models.%d", i)
		if m.Name == "" {
			bad(key+".name", "must be set")
		}
		if !slices.Contains(Providers(), m.Provider) {
			bad(key+".provider", "unknown provider %q (want one of %q)", m.Provider, Providers())
		}
		if m.ContextWindow < 0 {
			bad(key+".context_window", "must not be negative, got %d", m.ContextWindow)
		}
		for _, f := range []struct {
			key string
			v   float64
		}{
			{"input_per_mtok", m.InputPerMTok},
			{"output_per_mtok", m.OutputPerMTok},
			{"cache_write_per_mtok", m.CacheWritePerMTok},
			{"cache_read_per_mtok", m.CacheReadPerMTok},
		} {
			if f.v < 0 || f.v != f.v {
				bad(key+"."+f.key, "must be a non-negative price, got %v", f.v)
			}
		}
		id := m.Provider + "/" + m.Name
		if j, ok := seen[id]; ok {
			bad(key+".name", "duplicates models.%d (%s)", j, id)
		}
		seen[id] = i
	}
	return errors.Join(errs...)
}

// StreamIdleTimeoutSecsOrDefault returns the idle timeout in seconds,
// applying the default for zero.
func (c Config) StreamIdleTimeoutSecsOrDefault() int {
	if c.StreamIdleTimeoutSecs > 0 {
		return c.StreamIdleTimeoutSecs
	}
	return DefaultStreamIdleTimeoutSecs
}

// WithDefaults returns r with zero fields replaced by their defaults.
func (r RetryConfig) WithDefaults() RetryConfig {
	if r.MaxAttempts == 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.BaseDelayMs == 0 {
		r.BaseDelayMs = DefaultBaseDelayMs
	}
	if r.MaxDelayMs == 0 {
		r.MaxDelayMs = max(DefaultMaxDelayMs, r.BaseDelayMs)
	}
	return r
}
