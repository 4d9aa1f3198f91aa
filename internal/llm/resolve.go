package llm

import (
	"fmt"
	"strings"
)

// Endpoint is everything needed to reach one provider.
type Endpoint struct {
	Provider string
	// BaseURL is empty for the provider's public API.
	BaseURL string
	// APIKey is the key read from the environment; it may be empty for an
	// OpenAI-compatible local server.
	APIKey string
	// APIKeyEnv is the variable the key was read from.
	APIKeyEnv string
}

// Target is the concrete model a tier resolved to.
type Target struct {
	Tier     Tier
	Model    string
	Endpoint Endpoint
}

// Resolution maps every tier to a Target.
type Resolution struct {
	Router, Worker, Expert Target
}

// Target returns the target of tier t.
func (r Resolution) Target(t Tier) (Target, bool) {
	switch t {
	case TierRouter:
		return r.Router, true
	case TierWorker:
		return r.Worker, true
	case TierExpert:
		return r.Expert, true
	}
	return Target{}, false
}

// SetupError says that no provider can be used and how to configure one.
// The daemon shows its message to the user as is.
type SetupError struct {
	// Key is the config key at fault, e.g. "llm.tiers.worker.provider";
	// empty when nothing at all is configured.
	Key string
	// Provider and EnvVar name the provider lacking a key and the
	// variable to set, when that is the problem.
	Provider string
	EnvVar   string
}

// Error explains what to do.
func (e *SetupError) Error() string {
	if e.Provider != "" {
		return fmt.Sprintf("%s: provider %s has no API key: set %s in the daemon's environment (or set llm.providers.%s.api_key_env to the variable that holds it)",
			e.Key, e.Provider, e.EnvVar, e.Provider)
	}
	return "no model provider is configured: set ANTHROPIC_API_KEY (Anthropic), OPENAI_API_KEY (OpenAI) or GEMINI_API_KEY (Gemini) " +
		"in the daemon's environment, or set llm.providers.openai.base_url to an OpenAI-compatible server " +
		"(for Ollama: http://localhost:11434/v1) and name its models under llm.tiers"
}

// Resolve maps every tier to a provider, model, base URL and API key. It is
// a pure function of cfg and env (use os.Getenv in production).
//
// A tier whose provider is empty uses the first available provider:
// Anthropic when its key variable is set, else OpenAI when its key
// variable is set or an OpenAI base URL is configured (local servers need
// no key), else Gemini when its key variable is set. A tier whose model is empty uses the provider's default model
// for the tier. With nothing available, or a tier naming a provider whose
// key is missing, Resolve returns a *SetupError.
//
// Base URLs come from the config, else from ANTHROPIC_BASE_URL /
// OPENAI_BASE_URL / GOOGLE_GEMINI_BASE_URL (the variable Gemini CLI reads).
// Keys come only from the environment, from the variable named by
// api_key_env (default ANTHROPIC_API_KEY / OPENAI_API_KEY / GEMINI_API_KEY).
func Resolve(cfg Config, env func(string) string) (Resolution, error) {
	if err := cfg.Validate(); err != nil {
		return Resolution{}, err
	}
	endpoints := map[string]Endpoint{
		ProviderAnthropic: endpoint(ProviderAnthropic, cfg.Providers.Anthropic, env),
		ProviderOpenAI:    endpoint(ProviderOpenAI, cfg.Providers.OpenAI, env),
		ProviderGemini:    endpoint(ProviderGemini, cfg.Providers.Gemini, env),
	}
	auto := ""
	switch {
	case endpoints[ProviderAnthropic].APIKey != "":
		auto = ProviderAnthropic
	case endpoints[ProviderOpenAI].APIKey != "" || endpoints[ProviderOpenAI].BaseURL != "":
		auto = ProviderOpenAI
	case endpoints[ProviderGemini].APIKey != "":
		auto = ProviderGemini
	}
	var res Resolution
	for _, t := range Tiers() {
		tc := cfg.Tiers.Get(t)
		provider := tc.Provider
		if provider == "" {
			if auto == "" {
				return Resolution{}, &SetupError{}
			}
			provider = auto
		}
		ep := endpoints[provider]
		if ep.APIKey == "" && (provider == ProviderAnthropic || ep.BaseURL == "") {
			return Resolution{}, &SetupError{Key: "llm.tiers." + string(t) + ".provider", Provider: provider, EnvVar: ep.APIKeyEnv}
		}
		model := tc.Model
		if model == "" {
			model = defaultTierModel(provider, t)
		}
		target := Target{Tier: t, Model: model, Endpoint: ep}
		switch t {
		case TierRouter:
			res.Router = target
		case TierWorker:
			res.Worker = target
		case TierExpert:
			res.Expert = target
		}
	}
	return res, nil
}

func endpoint(provider string, pc ProviderConfig, env func(string) string) Endpoint {
	prefix := strings.ToUpper(provider)
	keyEnv := pc.APIKeyEnv
	if keyEnv == "" {
		keyEnv = prefix + "_API_KEY"
	}
	baseEnv := prefix + "_BASE_URL"
	if provider == ProviderGemini {
		baseEnv = "GOOGLE_GEMINI_BASE_URL"
	}
	base := pc.BaseURL
	if base == "" {
		base = strings.TrimSpace(env(baseEnv))
	}
	return Endpoint{
		Provider:  provider,
		BaseURL:   base,
		APIKey:    strings.TrimSpace(env(keyEnv)),
		APIKeyEnv: keyEnv,
	}
}
