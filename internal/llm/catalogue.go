package llm

import "strings"

// DefaultModels returns the built-in catalogue: list prices in US dollars
// per million tokens as published by the providers (late 2025). OpenAI does
// not bill cache writes separately, so its write price equals its input
// price.
func DefaultModels() []ModelConfig {
	return []ModelConfig{
		{Name: "claude-opus-4-5", Provider: ProviderAnthropic, ContextWindow: 200_000, InputPerMTok: 5, OutputPerMTok: 25, CacheWritePerMTok: 6.25, CacheReadPerMTok: 0.50},
		{Name: "claude-sonnet-4-5", Provider: ProviderAnthropic, ContextWindow: 200_000, InputPerMTok: 3, OutputPerMTok: 15, CacheWritePerMTok: 3.75, CacheReadPerMTok: 0.30},
		{Name: "claude-haiku-4-5", Provider: ProviderAnthropic, ContextWindow: 200_000, InputPerMTok: 1, OutputPerMTok: 5, CacheWritePerMTok: 1.25, CacheReadPerMTok: 0.10},
		{Name: "claude-opus-4-1", Provider: ProviderAnthropic, ContextWindow: 200_000, InputPerMTok: 15, OutputPerMTok: 75, CacheWritePerMTok: 18.75, CacheReadPerMTok: 1.50},
		{Name: "claude-sonnet-4", Provider: ProviderAnthropic, ContextWindow: 200_000, InputPerMTok: 3, OutputPerMTok: 15, CacheWritePerMTok: 3.75, CacheReadPerMTok: 0.30},
		{Name: "gpt-5", Provider: ProviderOpenAI, ContextWindow: 400_000, InputPerMTok: 1.25, OutputPerMTok: 10, CacheWritePerMTok: 1.25, CacheReadPerMTok: 0.125},
		{Name: "gpt-5-mini", Provider: ProviderOpenAI, ContextWindow: 400_000, InputPerMTok: 0.25, OutputPerMTok: 2, CacheWritePerMTok: 0.25, CacheReadPerMTok: 0.025},
		{Name: "gpt-5-nano", Provider: ProviderOpenAI, ContextWindow: 400_000, InputPerMTok: 0.05, OutputPerMTok: 0.40, CacheWritePerMTok: 0.05, CacheReadPerMTok: 0.005},
		{Name: "gpt-4.1", Provider: ProviderOpenAI, ContextWindow: 1_047_576, InputPerMTok: 2, OutputPerMTok: 8, CacheWritePerMTok: 2, CacheReadPerMTok: 0.50},
		{Name: "gpt-4.1-mini", Provider: ProviderOpenAI, ContextWindow: 1_047_576, InputPerMTok: 0.40, OutputPerMTok: 1.60, CacheWritePerMTok: 0.40, CacheReadPerMTok: 0.10},
		// Gemini prices are those of prompts up to 200k tokens; implicit
		// caching has no write charge.
		{Name: "gemini-2.5-pro", Provider: ProviderGemini, ContextWindow: 1_048_576, InputPerMTok: 1.25, OutputPerMTok: 10, CacheWritePerMTok: 1.25, CacheReadPerMTok: 0.125},
		{Name: "gemini-2.5-flash", Provider: ProviderGemini, ContextWindow: 1_048_576, InputPerMTok: 0.30, OutputPerMTok: 2.50, CacheWritePerMTok: 0.30, CacheReadPerMTok: 0.03},
		{Name: "gemini-2.5-flash-lite", Provider: ProviderGemini, ContextWindow: 1_048_576, InputPerMTok: 0.10, OutputPerMTok: 0.40, CacheWritePerMTok: 0.10, CacheReadPerMTok: 0.01},
	}
}

// defaultTierModel is the provider's model for tier t when config names none.
func defaultTierModel(provider string, t Tier) string {
	switch provider {
	case ProviderAnthropic:
		switch t {
		case TierRouter:
			return "claude-haiku-4-5"
		case TierWorker:
			return "claude-sonnet-4-5"
		case TierExpert:
			return "claude-opus-4-5"
		}
	case ProviderOpenAI:
		switch t {
		case TierRouter:
			return "gpt-5-mini"
		case TierWorker, TierExpert:
			return "gpt-5"
		}
	case ProviderGemini:
		switch t {
		case TierRouter:
			return "gemini-2.5-flash-lite"
		case TierWorker:
			return "gemini-2.5-flash"
		case TierExpert:
			return "gemini-2.5-pro"
		}
	}
	return ""
}

// Catalogue answers "what does this model cost and how much does it hold".
// It is immutable and safe for concurrent use.
type Catalogue struct {
	models map[string]ModelConfig // keyed by provider + "/" + name
}

// NewCatalogue returns the built-in models with overrides applied: an
// override with the provider and name of a built-in entry replaces it,
// others are added.
func NewCatalogue(overrides []ModelConfig) *Catalogue {
	c := &Catalogue{models: make(map[string]ModelConfig)}
	for _, m := range DefaultModels() {
		c.models[m.Provider+"/"+m.Name] = m
	}
	for _, m := range overrides {
		c.models[m.Provider+"/"+m.Name] = m
	}
	return c
}

// Lookup returns the entry for a model. A dated snapshot name such as
// "claude-sonnet-4-5-20250929" or "gpt-4.1-2025-04-14" matches the longest
// catalogue name it extends with a "-".
func (c *Catalogue) Lookup(provider, model string) (ModelConfig, bool) {
	if m, ok := c.models[provider+"/"+model]; ok {
		return m, true
	}
	var best ModelConfig
	found := false
	for _, m := range c.models {
		if m.Provider == provider && strings.HasPrefix(model, m.Name+"-") && len(m.Name) > len(best.Name) {
			best, found = m, true
		}
	}
	return best, found
}

// Cost returns the price in US dollars of usage u on model m.
func (m ModelConfig) Cost(u Usage) float64 {
	return (float64(u.InputTokens)*m.InputPerMTok +
		float64(u.OutputTokens)*m.OutputPerMTok +
		float64(u.CacheWriteTokens)*m.CacheWritePerMTok +
		float64(u.CacheReadTokens)*m.CacheReadPerMTok) / 1e6
}
