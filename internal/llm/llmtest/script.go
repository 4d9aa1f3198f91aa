package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// Script is a reply script. Build one with ParseScript or LoadScript, or as
// a Go literal. A Script is only read, never modified, by servers, so one
// value may back many servers at once.
type Script struct {
	// Conversations are tried in order; the first whose Match matches
	// the request answers it.
	Conversations []Conversation `yaml:"conversations"`
	// Default answers requests no conversation matches. Without one, such
	// requests get a short fixed text reply.
	Default *Conversation `yaml:"default"`
}

// Conversation is an ordered list of replies for requests that match.
type Conversation struct {
	Name  string `yaml:"name"`
	Match Match  `yaml:"match"`
	Steps []Step `yaml:"steps"`

	line int
}

// Match selects the requests a conversation answers. Every non-empty field
// is a Go regular expression that must match; an empty Match matches
// everything.
type Match struct {
	// System matches the system prompt.
	System string `yaml:"system"`
	// User matches the text of the first user message.
	User string `yaml:"user"`
	// Model matches the requested model name.
	Model string `yaml:"model"`
	// After matches the text parts of a later user message (an injected
	// nudge or message; tool results are not text): the conversation
	// answers only requests holding such a message, and its steps count the assistant messages after the
	// first one that matches. It scripts how an agent reacts to something
	// that arrives at a time the script cannot know.
	After string `yaml:"after"`
	// Capture names values taken from the first user message: each is a
	// Go regular expression with one group, whose first match replaces
	// ${name} in the conversation's step texts and tool call inputs. It
	// scripts replies that name what the script cannot know (the ids of
	// tasks in a prompt). A capture that does not match the first user
	// message is looked for in the request's tool results, the newest
	// first (an id a tool returned); one that matches neither leaves
	// ${name} as it is. It does not select requests.
	Capture map[string]string `yaml:"capture"`
}

// Step is one assistant reply.
type Step struct {
	// Text is the reply's text, streamed in chunks of ChunkSize bytes.
	Text string `yaml:"text"`
	// ToolCalls follow the text, in order.
	ToolCalls []ToolCall `yaml:"tool_calls"`
	// Stop is the stop reason: end_turn, tool_use, max_tokens or
	// stop_sequence. Empty means tool_use with tool calls, else end_turn.
	Stop string `yaml:"stop"`
	// Usage overrides the computed token counts.
	Usage *Usage `yaml:"usage"`
	// LatencyMs delays the response headers.
	LatencyMs int `yaml:"latency_ms"`
	// ChunkDelayMs delays every streamed event after the first.
	ChunkDelayMs int `yaml:"chunk_delay_ms"`
	// ChunkSize is the size in bytes of text and argument deltas; zero means 16.
	ChunkSize int `yaml:"chunk_size"`
	// Fault, when set, makes the first attempts at this step fail.
	Fault *Fault `yaml:"fault"`

	line int
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	// ID is the call's id; empty means a deterministic generated one.
	ID   string `yaml:"id"`
	Name string `yaml:"name"`
	// Input is the call's arguments, written as YAML, sent as JSON.
	Input map[string]any `yaml:"input"`

	line int
}

// Usage gives a step's token counts. Zero fields are computed: input as a
// quarter of the request's text bytes, output as a quarter of the reply's.
type Usage struct {
	InputTokens      int64 `yaml:"input_tokens"`
	OutputTokens     int64 `yaml:"output_tokens"`
	CacheWriteTokens int64 `yaml:"cache_write_tokens"`
	CacheReadTokens  int64 `yaml:"cache_read_tokens"`
}

// FaultKind names an injected failure.
type FaultKind string

// Fault kinds.
const (
	// FaultRateLimit answers 429 with a Retry-After header.
	FaultRateLimit FaultKind = "rate_limit"
	// FaultOverloaded answers 529 overloaded_error (503 on the OpenAI API,
	// which has no 529).
	FaultOverloaded FaultKind = "overloaded"
	// FaultServerError answers 500.
	FaultServerError FaultKind = "server_error"
	// FaultReset sends AfterChunks deltas, then resets the TCP connection.
	FaultReset FaultKind = "reset"
	// FaultMalformed sends AfterChunks deltas, then an event whose data is
	// not JSON (a non-JSON body when not streaming).
	FaultMalformed FaultKind = "malformed"
	// FaultStall sends AfterChunks deltas, then nothing until the client
	// gives up.
	FaultStall FaultKind = "stall"
	// FaultTruncate sends AfterChunks deltas, then ends the response
	// cleanly without the final events, as a proxy cutting a stream would
	// (without streaming: a body cut in the middle).
	FaultTruncate FaultKind = "truncate"
	// FaultStreamError sends AfterChunks deltas, then an error inside the
	// stream, as the services do when they fail mid-reply: an Anthropic
	// "event: error" with overloaded_error, or an OpenAI chunk holding an
	// error object. Without streaming it behaves like server_error.
	FaultStreamError FaultKind = "stream_error"
	// FaultContextTooLong answers 400 with the provider's "prompt too
	// long" error.
	FaultContextTooLong FaultKind = "context_too_long"
	// FaultAuth answers 401.
	FaultAuth FaultKind = "auth"
)

var faultKinds = []FaultKind{FaultRateLimit, FaultOverloaded, FaultServerError, FaultReset,
	FaultMalformed, FaultStall, FaultTruncate, FaultStreamError, FaultContextTooLong, FaultAuth}

// Fault is a failure injected into the first Times attempts at a step (an
// attempt is a request for the same conversation, step and first user
// message). After that the step replies normally, so a retrying client
// succeeds.
type Fault struct {
	Kind FaultKind `yaml:"kind"`
	// Times is how many attempts fail; zero means 1.
	Times int `yaml:"times"`
	// Always makes every attempt fail.
	Always bool `yaml:"always"`
	// RetryAfterSecs sets the Retry-After header of rate_limit and
	// overloaded; zero omits it.
	RetryAfterSecs int `yaml:"retry_after_secs"`
	// AfterChunks is how many content deltas reset, malformed and stall
	// send first; zero means 1, so the client has seen partial output.
	AfterChunks int `yaml:"after_chunks"`

	line int
}

// LoadScript reads and parses a script file. Errors name file:line.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading script: %w", err)
	}
	return ParseScript(path, data)
}

// ParseScript parses a YAML script; name (usually the file name) prefixes
// every error as name:line. Unknown keys are errors.
func ParseScript(name string, data []byte) (*Script, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: script is empty", name)
		}
		return nil, fmt.Errorf("%s:%s", name, yamlMessage(err))
	}
	p := parser{name: name}
	s := p.script(&root)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	if _, err := s.compile(name); err != nil {
		return nil, err
	}
	return s, nil
}

// yamlMessage turns "yaml: line 3: msg" into "3: msg".
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		return rest
	}
	return " " + msg
}

// Validate checks a Script built in Go: regular expressions, stop
// reasons, fault kinds, tool inputs. Servers validate their script too.
func (s *Script) Validate() error {
	_, err := s.compile("script")
	return err
}

// compiled is a validated script with its regular expressions compiled.
type compiled struct {
	convs []*compiledConv
	def   *compiledConv // nil without a default
}

type compiledConv struct {
	name                string
	system, user, model *regexp.Regexp
	after               *regexp.Regexp
	capture             map[string]*regexp.Regexp
	steps               []Step
}

func (s *Script) compile(name string) (*compiled, error) {
	var errs []error
	bad := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	conv := func(c *Conversation, defaultName string) *compiledConv {
		cc := &compiledConv{name: c.Name, steps: c.Steps}
		if cc.name == "" {
			cc.name = defaultName
		}
		for _, f := range []struct {
			key, src string
			dst      **regexp.Regexp
		}{
			{"system", c.Match.System, &cc.system},
			{"user", c.Match.User, &cc.user},
			{"model", c.Match.Model, &cc.model},
			{"after", c.Match.After, &cc.after},
		} {
			if f.src == "" {
				continue
			}
			var err error
			if *f.dst, err = regexp.Compile(f.src); err != nil {
				bad(c.line, "conversation %q: match.%s: %v", cc.name, f.key, err)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(c.Match.Capture)) {
			re, err := regexp.Compile(c.Match.Capture[k])
			switch {
			case !captureName.MatchString(k):
				bad(c.line, "conversation %q: match.capture: name %q is not letters, digits and _", cc.name, k)
			case err != nil:
				bad(c.line, "conversation %q: match.capture.%s: %v", cc.name, k, err)
			case re.NumSubexp() != 1:
				bad(c.line, "conversation %q: match.capture.%s: want one group, have %d", cc.name, k, re.NumSubexp())
			default:
				if cc.capture == nil {
					cc.capture = map[string]*regexp.Regexp{}
				}
				cc.capture[k] = re
			}
		}
		if len(c.Steps) == 0 {
			bad(c.line, "conversation %q has no steps", cc.name)
		}
		for j := range c.Steps {
			checkStep(&c.Steps[j], bad)
		}
		return cc
	}
	out := &compiled{}
	for i := range s.Conversations {
		out.convs = append(out.convs, conv(&s.Conversations[i], "conversation-"+strconv.Itoa(i)))
	}
	if s.Default != nil {
		out.def = conv(s.Default, "default")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func checkStep(st *Step, bad func(line int, format string, args ...any)) {
	switch st.Stop {
	case "", "end_turn", "tool_use", "max_tokens", "stop_sequence":
	default:
		bad(st.line, "stop: unknown stop reason %q", st.Stop)
	}
	if st.LatencyMs < 0 || st.ChunkDelayMs < 0 || st.ChunkSize < 0 {
		bad(st.line, "latency_ms, chunk_delay_ms and chunk_size must not be negative")
	}
	for k, tc := range st.ToolCalls {
		if tc.Name == "" {
			bad(tc.line, "tool_calls[%d]: name must be set", k)
		}
		if _, err := json.Marshal(tc.Input); err != nil {
			bad(tc.line, "tool_calls[%d]: input cannot be sent as JSON: %v", k, err)
		}
	}
	if f := st.Fault; f != nil {
		if !slices.Contains(faultKinds, f.Kind) {
			bad(f.line, "fault.kind: unknown kind %q (want one of %q)", f.Kind, faultKinds)
		}
		if f.Times < 0 || f.RetryAfterSecs < 0 || f.AfterChunks < 0 {
			bad(f.line, "fault: times, retry_after_secs and after_chunks must not be negative")
		}
	}
}

// matches reports whether c answers a request.
func (c *compiledConv) matches(req *Request, firstUser string) bool {
	return (c.system == nil || c.system.MatchString(req.System)) &&
		(c.user == nil || c.user.MatchString(firstUser)) &&
		(c.model == nil || c.model.MatchString(req.Model)) &&
		(c.after == nil || c.afterIndex(req) >= 0)
}

// afterIndex returns the index of the first message after the first one
// that matches After, or -1 when none matches. The first user message
// counts from its second text part on: the Responses and Gemini formats
// merge user messages sent before any reply into it (Codex steers a
// message into a turn whose first reply has not come), one part each.
func (c *compiledConv) afterIndex(req *Request) int {
	for i, m := range req.Messages {
		if m.Role != llm.RoleUser {
			continue
		}
		if i > 0 && c.after.MatchString(m.Text()) {
			return i + 1
		}
		if i == 0 {
			for _, p := range m.Parts[min(1, len(m.Parts)):] {
				if p.Text != "" && c.after.MatchString(p.Text) {
					return 1
				}
			}
		}
	}
	return -1
}

var captureName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// captured replaces ${name} in text by what c's captures find in the
// request's first user message or, failing that, in its tool results, the
// newest first; escape, when not nil, encodes each value first.
func (c *compiledConv) captured(req *Request, text string, escape func(string) string) string {
	if len(c.capture) == 0 || !strings.Contains(text, "${") {
		return text
	}
	for k, re := range c.capture {
		if v, ok := req.capture(re); ok {
			if escape != nil {
				v = escape(v)
			}
			text = strings.ReplaceAll(text, "${"+k+"}", v)
		}
	}
	return text
}
