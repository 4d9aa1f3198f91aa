// Package llm holds Neuraphage's provider-neutral model layer: messages, tool
// definitions, the narrow [Client] interface every provider implements, error
// classification, model tiers, the price catalogue and the configuration that
// the config package embeds under the top-level key "llm:".
//
// The package does no I/O. Providers live in subpackages (anthropic, openai),
// each linking exactly one vendor SDK; decorators for retries (retry) and
// shared rate limits (limit) wrap any Client; the providers package is the
// composition point that builds a decorated Client for a tier. The scripted
// model server used by tests lives in llmtest and the conformance suite every
// provider passes in clienttest.
package llm
