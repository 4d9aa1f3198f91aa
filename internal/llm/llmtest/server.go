package llmtest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// maxBody caps request bodies; real conversations can be large.
const maxBody = 64 << 20

// Server answers model API requests from a Script. It is safe for
// concurrent use. Create one with NewServer (tests) or run one with Serve.
type Server struct {
	script *compiled
	log    io.Writer
	url    string
	// stop is closed when the server shuts down so that stalled and slow
	// handlers return instead of holding the shutdown up.
	stop chan struct{}

	mu       sync.Mutex // guards the fields below and writes to log
	requests []Request
	arrived  chan struct{} // closed, and replaced, when a request arrives
	attempts map[string]int
	seq      int
	holds    map[holdKey]chan struct{}
}

// holdKey names one step of one conversation.
type holdKey struct {
	conv string
	step int
}

func newServer(script *Script, log io.Writer) (*Server, error) {
	if script == nil {
		script = &Script{}
	}
	cs, err := script.compile("script")
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	return &Server{script: cs, log: log, stop: make(chan struct{}), arrived: make(chan struct{}), attempts: make(map[string]int),
		holds: map[holdKey]chan struct{}{}}, nil
}

// NewServer starts a Server for script on a loopback port and closes it
// when tb's test ends. A script that does not compile fails the test.
func NewServer(tb testing.TB, script *Script) *Server {
	tb.Helper()
	s, err := newServer(script, nil)
	if err != nil {
		tb.Fatalf("starting scripted model server: %v", err)
	}
	hs := httptest.NewServer(s)
	s.url = hs.URL
	tb.Cleanup(func() {
		close(s.stop)
		hs.CloseClientConnections()
		hs.Close()
	})
	return s
}

// Serve runs a Server for script on addr (e.g. "127.0.0.1:8089") until ctx
// is done, logging one line per request to log (which may be nil). It
// returns nil after a clean shutdown.
func Serve(ctx context.Context, addr string, script *Script, log io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening for scripted model server: %w", err)
	}
	return ServeListener(ctx, ln, script, log)
}

// ServeListener is Serve on a listener the caller opened; it closes ln.
func ServeListener(ctx context.Context, ln net.Listener, script *Script, log io.Writer) error {
	s, err := newServer(script, log)
	if err != nil {
		ln.Close()
		return err
	}
	s.url = "http://" + ln.Addr().String()
	s.logf("llmtest: serving on %s (ANTHROPIC_BASE_URL=%s, OPENAI_BASE_URL=%s, GOOGLE_GEMINI_BASE_URL=%s)", s.url, s.url, s.OpenAIBaseURL(), s.GeminiBaseURL())
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving scripted model server: %w", err)
	case <-ctx.Done():
	}
	// Release stalled and slow handlers first so that Shutdown can finish.
	close(s.stop)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err = hs.Shutdown(shutdownCtx)
	if err != nil {
		err = hs.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("serving scripted model server: %w", serr)
	}
	if err != nil {
		return fmt.Errorf("shutting down scripted model server: %w", err)
	}
	return nil
}

// URL returns the server's base URL, e.g. "http://127.0.0.1:40123". Use it
// as the Anthropic and Gemini base URL, and URL()+"/v1" as the OpenAI one.
func (s *Server) URL() string { return s.url }

// OpenAIBaseURL returns URL()+"/v1", the form OpenAI clients expect (for
// Chat Completions and the Responses API alike; Codex's base_url).
func (s *Server) OpenAIBaseURL() string { return s.url + "/v1" }

// GeminiBaseURL returns URL(), the form Gemini clients expect: they add
// /v1beta/models/… themselves (GOOGLE_GEMINI_BASE_URL for Gemini CLI).
func (s *Server) GeminiBaseURL() string { return s.url }

// Requests returns a copy of every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// WaitRequests returns once at least n requests have arrived (the request
// is recorded before its reply, latency or fault begins), or with ctx's
// error when ctx ends first.
func (s *Server) WaitRequests(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, arrived := len(s.requests), s.arrived
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Server) logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.log, format+"\n", args...)
}

// route tells which API a request is for, and for Gemini the model and
// whether it streams, which its URL carries.
func route(r *http.Request) (api API, model string, stream bool, ok bool) {
	if r.Method != http.MethodPost {
		return "", "", false, false
	}
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/messages"):
		return APIAnthropic, "", false, true
	case strings.HasSuffix(p, "/chat/completions"):
		return APIOpenAI, "", false, true
	case strings.HasSuffix(p, "/responses"):
		return APIResponses, "", false, true
	}
	_, rest, found := strings.Cut(p, "/models/")
	if !found {
		return "", "", false, false
	}
	model, method, found := strings.Cut(rest, ":")
	switch {
	case !found || model == "":
	case method == "generateContent":
		return APIGemini, model, false, true
	case method == "streamGenerateContent":
		return APIGemini, model, true, true
	}
	return "", "", false, false
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api, model, stream, ok := route(r)
	if !ok {
		http.Error(w, "llmtest: unknown endpoint "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return
	}
	var req *Request
	switch api {
	case APIAnthropic:
		req, err = parseAnthropicRequest(body)
	case APIOpenAI:
		req, err = parseOpenAIRequest(body)
	case APIResponses:
		req, err = parseResponsesRequest(body)
	case APIGemini:
		req, err = parseGeminiRequest(body, model, stream)
		if err == nil && stream && r.URL.Query().Get("alt") != "sse" {
			err = errors.New("llmtest serves streamGenerateContent only with alt=sse (as the Gemini SDKs ask)")
		}
	}
	if err != nil {
		writeError(w, api, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	req.Header = r.Header.Clone()

	conv := s.match(req)
	step, stepOK := s.stepFor(conv, req)
	key := attemptKey(conv.name, req)
	s.mu.Lock()
	s.attempts[key]++
	req.Attempt = s.attempts[key]
	s.seq++
	seq := s.seq
	var fault *Fault
	if f := step.Fault; stepOK && f != nil && (f.Always || req.Attempt <= max(f.Times, 1)) {
		fault = f
		req.Fault = f.Kind
	}
	s.requests = append(s.requests, *req)
	close(s.arrived)
	s.arrived = make(chan struct{})
	hold := s.holds[holdKey{req.Conversation, req.Step}]
	s.mu.Unlock()
	s.logf("llmtest: %s %s model=%s conversation=%s step=%d attempt=%d stream=%t fault=%s key=%s",
		r.Method, r.URL.Path, req.Model, req.Conversation, req.Step, req.Attempt, req.Stream, req.Fault, requestKey(r.Header))

	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		}
	}
	if !s.wait(r.Context(), step.LatencyMs) {
		return
	}
	rep := s.render(req, conv, step, seq)
	if fault != nil && s.refuse(w, api, fault) {
		return
	}
	w.Header().Set("Request-Id", fmt.Sprintf("req_llmtest_%d", seq))
	if !req.Stream {
		s.replyWhole(r.Context(), w, api, rep, fault)
		return
	}
	var frames []frame
	switch api {
	case APIAnthropic:
		frames = anthropicFrames(rep)
	case APIOpenAI:
		frames = openaiFrames(rep, req.IncludeUsage)
	case APIResponses:
		frames = responsesFrames(rep)
	case APIGemini:
		frames = geminiFrames(rep)
	}
	s.stream(w, r, api, rep, frames, step.ChunkDelayMs, fault)
}

// Hold holds every request for step (0 for the first reply, as
// Request.Step counts) of conversation conv open once it is recorded
// (WaitRequests sees it), before its latency and reply, until release is
// called: a test acts while that model call is in flight. Release may be
// called more than once.
func (s *Server) Hold(conv string, step int) (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.holds[holdKey{conv, step}] = ch
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// match returns the conversation answering req.
func (s *Server) match(req *Request) *compiledConv {
	first := req.firstUserText()
	for _, c := range s.script.convs {
		if c.matches(req, first) {
			return c
		}
	}
	if s.script.def != nil {
		return s.script.def
	}
	return &compiledConv{name: "(none)", steps: []Step{{Text: "llmtest: no conversation in the script matches this request."}}}
}

// stepFor picks the step by counting assistant turns. Past the end of the
// script it returns an "exhausted" text step and false.
func (s *Server) stepFor(c *compiledConv, req *Request) (Step, bool) {
	req.Conversation = c.name
	req.Step = req.assistantTurns()
	if c.after != nil {
		req.Step = 0
		for _, m := range req.Messages[c.afterIndex(req):] {
			if m.Role == llm.RoleAssistant {
				req.Step++
			}
		}
	}
	if req.Step < len(c.steps) {
		return c.steps[req.Step], true
	}
	return Step{Text: fmt.Sprintf("llmtest: script for conversation %q is exhausted (step %d of %d).", c.name, req.Step, len(c.steps))}, false
}

// wait sleeps for ms milliseconds unless the client goes away or the
// server stops; it reports whether to carry on.
func (s *Server) wait(ctx context.Context, ms int) bool {
	if ms <= 0 {
		return true
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.stop:
	}
	return false
}

// jsonStringContents encodes s as the inside of a JSON string.
func jsonStringContents(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// render computes the reply to req: deterministic ids and usage.
func (s *Server) render(req *Request, c *compiledConv, st Step, seq int) *reply {
	rep := &reply{model: req.Model, text: c.captured(req, st.Text, nil), stop: st.Stop, chunk: st.ChunkSize}
	if rep.model == "" {
		rep.model = "llmtest"
	}
	if rep.chunk <= 0 {
		rep.chunk = 16
	}
	prefix, callPrefix := "msg_llmtest_", "toolu_llmtest_"
	switch req.API {
	case APIOpenAI:
		prefix, callPrefix = "chatcmpl-llmtest-", "call_llmtest_"
	case APIResponses:
		prefix, callPrefix = "resp_llmtest_", "call_llmtest_"
	case APIGemini:
		prefix, callPrefix = "llmtest-", "llmtest_call_"
	}
	rep.id = fmt.Sprintf("%s%d", prefix, seq)
	out := len(rep.text)
	for i, tc := range st.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("%s%s_%d_%d", callPrefix, idSafe(c.name), req.Step, i)
		}
		input := tc.Input
		if input == nil {
			input = map[string]any{}
		}
		// A captured value goes into the JSON as a string's contents.
		args := []byte(c.captured(req, string(mustJSON(input)), jsonStringContents))
		rep.calls = append(rep.calls, replyCall{id: id, name: tc.Name, args: args, scriptedID: tc.ID != ""})
		out += len(tc.Name) + len(args)
	}
	if rep.stop == "" {
		rep.stop = "end_turn"
		if len(rep.calls) > 0 {
			rep.stop = "tool_use"
		}
	}
	rep.usage = Usage{InputTokens: int64(max(1, (req.textBytes()+3)/4)), OutputTokens: int64(max(1, (out+3)/4))}
	if u := st.Usage; u != nil {
		if u.InputTokens > 0 {
			rep.usage.InputTokens = u.InputTokens
		}
		if u.OutputTokens > 0 {
			rep.usage.OutputTokens = u.OutputTokens
		}
		rep.usage.CacheWriteTokens = u.CacheWriteTokens
		rep.usage.CacheReadTokens = u.CacheReadTokens
	}
	return rep
}

// attemptKey identifies "the same request again" for fault counting: the
// conversation, the step, the system prompt and the first user message.
func attemptKey(conv string, req *Request) string {
	h := sha256.New()
	for _, part := range []string{conv, strconv.Itoa(req.Step), req.System, req.firstUserText()} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return string(h.Sum(nil))
}

func idSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// requestKey is the API key a request authenticated with (x-api-key or
// x-goog-api-key, else a bearer token), logged so a test can check which
// key a client sent; this server is for tests, whose keys are fake.
func requestKey(h http.Header) string {
	if k := h.Get("X-Api-Key"); k != "" {
		return k
	}
	if k := h.Get("X-Goog-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
}
