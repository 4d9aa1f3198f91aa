// Package llmtest is a scripted model server for tests, demos and local
// development. It listens on loopback and speaks the Anthropic Messages API
// (POST /v1/messages) and OpenAI Chat Completions (POST
// /v1/chat/completions), streaming and not, framed exactly as the real
// services frame them, so the real SDK-based providers are exercised end to
// end over real HTTP.
//
// Replies come from a Script (YAML, see ParseScript and docs/llm.md):
// conversations selected by regular expressions on the request, each an
// ordered list of steps. The step answering a request is the number of
// assistant messages in it, so the server needs no session state and
// survives restarts; only fault counters ("fail the first N attempts") are
// kept per server. Faults can be injected per step: 429 with Retry-After,
// 529 overloaded, 500, connection reset mid-stream, a malformed event, a
// stalled stream, slow streaming and latency. Every request is recorded,
// parsed, for assertions.
//
// The package imports neither vendor SDK.
package llmtest
