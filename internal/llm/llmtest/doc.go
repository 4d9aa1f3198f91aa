// Package llmtest is a scripted model server for tests, demos and local
// development. It listens on loopback and speaks the Anthropic Messages API
// (POST /v1/messages), OpenAI Chat Completions (POST /v1/chat/completions),
// the OpenAI Responses API (POST /v1/responses) and the Gemini API (POST
// /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse),
// streaming and not, framed exactly as the real services frame them, so the
// real providers and the real agent CLIs (Claude Code, Codex, Gemini CLI)
// are exercised end to end over real HTTP.
//
// Replies come from a Script (YAML, see ParseScript and docs/llm.md):
// conversations selected by regular expressions on the request, each an
// ordered list of steps. The step answering a request is the number of
// assistant messages in it, so the server needs no session state and
// survives restarts; only fault counters ("fail the first N attempts") are
// kept per server. Faults can be injected per step, in each API's own
// form: 429 with Retry-After (Gemini: a RetryInfo detail), overload, 500,
// connection reset mid-stream, an error event mid-stream, a malformed
// event, a stalled or cut stream, slow streaming and latency. Every request
// is recorded, parsed into one provider-neutral form, for assertions.
//
// Its tests also run the pinned Codex and Gemini CLIs against it (see
// docs/engines-wire.md) and replay what they sent from testdata/clis.
//
// The package imports neither vendor SDK.
package llmtest
