package stuck

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// This file builds observation streams for one task the way the native agent
// emits them (internal/agent/loop.go): a turn is turn.started, the reply's
// text, its tool calls and the call's usage; then each tool's result
// followed by the files it changed; then turn.ended. Times advance as they
// would in a run.

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// testRoot is the task's worktree.
const testRoot = "/home/dev/.neuraphage/worktrees/t-abcde"

// item is one entry of a scripted stream: an event to observe, or a Tick at
// ev.Time.
type item struct {
	ev   event.Event
	tick bool
	// mark says the item is one occurrence of the pattern under test.
	mark bool
	// step is the detector's step count once the item is observed (calls,
	// results and texts count, from the task's start).
	step int
}

// call is one tool call of a turn and what it returns.
type call struct {
	tool    string
	args    json.RawMessage
	out     string // the tool's whole output
	err     bool
	changes []string // the files it changes
	sums    []string // with changes: what each file holds after it, as the native agent sums it ("" none)
	deletes bool     // the changes are deletions
	took    time.Duration
}

// failed returns the call failing with its output.
func (c call) failed() call { c.err = true; return c }

// taking returns the call running for d.
func (c call) taking(d time.Duration) call { c.took = d; return c }

// args encodes a JSON object from key/value pairs as the agent does
// (canonical: keys sorted, no HTML escaping).
func args(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func bash(cmd, out string) call {
	return call{tool: "bash", args: args("command", cmd), out: out, took: 2 * time.Second}
}

// shell is a shell command that leaves files with the given content
// (path, content pairs): the changes git status finds, each with the sum
// the native agent takes of it (contentSum).
func shell(cmd, out string, files ...string) call {
	c := bash(cmd, out)
	for i := 0; i+1 < len(files); i += 2 {
		c.changes = append(c.changes, files[i])
		c.sums = append(c.sums, contentSum(files[i+1]))
	}
	return c
}

// remove is a shell command deleting files.
func remove(paths ...string) call {
	c := bash("rm "+strings.Join(paths, " "), "")
	c.changes, c.deletes = paths, true
	return c
}

// contentSum is a file content's sum as agent/tool.ContentSum gives it.
func contentSum(content string) string {
	h := sha256.Sum256([]byte(content))
	return fmt.Sprintf("%d:%x", len(content), h[:16])
}

func read(path, content string) call {
	return call{tool: "read_file", args: args("path", path), out: content, took: 50 * time.Millisecond}
}

func edit(path, old, new string) call {
	return call{tool: "edit_file", args: args("path", path, "old_text", old, "new_text", new),
		out: "Edited " + strings.TrimPrefix(path, testRoot+"/") + ".", changes: []string{path}, took: 20 * time.Millisecond}
}

// editFails is an edit whose old text is not in the file: nothing changes.
func editFails(path, old, new string) call {
	c := edit(path, old, new)
	c.out, c.changes, c.err = "old_text not found in "+strings.TrimPrefix(path, testRoot+"/")+": read the file again and copy the text exactly", nil, true
	return c
}

func write(path, content string) call {
	return call{tool: "write_file", args: args("path", path, "content", content),
		out: fmt.Sprintf("Wrote %d bytes to %s.", len(content), path), changes: []string{path}, took: 20 * time.Millisecond}
}

// stream builds the events of one task.
type stream struct {
	id    task.ID
	now   time.Time
	turns int
	calls int
	step  int
	items []item
	// engine names the engine in turn.started.
	engine string
	// usage is what each model call costs.
	in, out int64
	usd     float64
	// think is how long a model call takes.
	think time.Duration
}

// newStream starts a task's stream: it moves to running at t0.
func newStream(id task.ID) *stream {
	s := &stream{id: id, now: t0, engine: "native", in: 18_000, out: 600, usd: 0.06, think: 6 * time.Second}
	s.emit(event.TaskStatus{From: task.Queued, To: task.Running})
	return s
}

// emit appends an event a second after the last one.
func (s *stream) emit(p event.Payload) {
	s.now = s.now.Add(time.Second)
	switch p := p.(type) {
	case event.ToolCall, event.ToolResult:
		s.step++
	case event.Text:
		if p.Text != "" {
			s.step++
		}
	}
	s.items = append(s.items, item{ev: event.New(s.now, s.id, p), step: s.step})
}

// turn emits one model turn with its tool calls run in order.
func (s *stream) turn(text string, calls ...call) {
	s.turns++
	s.emit(event.TurnStarted{Turn: s.turns, Engine: s.engine, Model: "claude-sonnet-4-5"})
	s.now = s.now.Add(s.think)
	if text != "" {
		s.emit(event.Text{Turn: s.turns, Text: text})
	}
	ids := make([]string, len(calls))
	for i, c := range calls {
		s.calls++
		ids[i] = fmt.Sprintf("toolu_%05d", s.calls)
		s.emit(event.ToolCall{Turn: s.turns, CallID: ids[i], Name: c.tool, Args: c.args})
	}
	s.usage()
	if len(calls) == 0 {
		s.emit(event.TurnEnded{Turn: s.turns, StopReason: "end_turn", Attempts: 1, DurationMs: s.think.Milliseconds()})
		return
	}
	for i, c := range calls {
		s.now = s.now.Add(c.took)
		s.emit(event.ToolResult{Turn: s.turns, CallID: ids[i], Name: c.tool, Error: c.err, Size: len(c.out),
			Preview: event.ResultPreview(c.out), Tail: event.ResultTail(c.out), Hash: event.ContentHash(c.out), DurationMs: c.took.Milliseconds()})
		for j, p := range c.changes {
			fc := event.FileChanged{Turn: s.turns, Path: p, Op: "modified", Tool: c.tool}
			if c.deletes {
				fc.Op = "deleted"
			}
			if j < len(c.sums) {
				fc.Sum = c.sums[j]
			}
			s.emit(fc)
		}
	}
	s.emit(event.TurnEnded{Turn: s.turns, StopReason: "tool_use", Attempts: 1, DurationMs: s.think.Milliseconds()})
}

// usage emits the cost of one model call.
func (s *stream) usage() {
	s.emit(event.Usage{Turn: s.turns, Provider: "anthropic", Model: "claude-sonnet-4-5",
		InputTokens: s.in, OutputTokens: s.out, CostUSD: s.usd})
}

// emptyTurn is a turn whose reply has no text and no tool call: no
// agent.text, no call, the usage and the end.
func (s *stream) emptyTurn() {
	s.turns++
	s.emit(event.TurnStarted{Turn: s.turns, Engine: s.engine})
	s.now = s.now.Add(s.think)
	s.usage()
	s.emit(event.TurnEnded{Turn: s.turns, StopReason: "end_turn", Attempts: 1, DurationMs: s.think.Milliseconds()})
}

// contextError is a model call that did not fit the context window; the
// agent compacts and calls again.
func (s *stream) contextError(tokens int) {
	s.turns++
	s.emit(event.TurnStarted{Turn: s.turns, Engine: s.engine})
	s.now = s.now.Add(2 * time.Second)
	s.emit(event.ModelError{Turn: s.turns, Class: "context_too_long",
		Message: fmt.Sprintf("prompt is too long: %d tokens > 200000 maximum", tokens)})
}

// status moves the task.
func (s *stream) status(from, to task.Status) { s.emit(event.TaskStatus{From: from, To: to}) }

// tick appends a Tick at the current time.
func (s *stream) tick() {
	s.items = append(s.items, item{ev: event.Event{Time: s.now}, tick: true, step: s.step})
}

// wait lets d pass with a Tick every `every`.
func (s *stream) wait(d, every time.Duration) {
	for end := s.now.Add(d); s.now.Before(end); {
		s.now = s.now.Add(every)
		s.tick()
	}
}

// mark marks the latest item of kind k (a Tick when k is "tick") as one
// occurrence of the pattern.
func (s *stream) mark(k event.Kind) {
	for i := len(s.items) - 1; i >= 0; i-- {
		it := &s.items[i]
		if it.tick && k == "tick" || !it.tick && it.ev.Kind == k {
			it.mark = true
			return
		}
	}
	panic("mark: no " + string(k))
}

// events returns the stream's events, without the ticks.
func (s *stream) events() []event.Event {
	var out []event.Event
	for _, it := range s.items {
		if !it.tick {
			out = append(out, it.ev)
		}
	}
	return out
}

// prelude is a short healthy start: the task reads its package and looks
// around, so the grace period is over.
func (s *stream) prelude() {
	s.turn("I'll start by reading the payment package.", read("internal/pay/pay.go", payGo))
	s.turn("", bash("ls internal/pay", "handler.go\nledger.go\npay.go\npay_test.go"))
}

// hit is a finding met while feeding a stream.
type hit struct {
	at  int // the item's index
	occ int // marked items up to and including this one
	f   Finding
}

// feed runs a detector over the items. With tickEach it also ticks before
// every event at the event's time, as the Watcher's clock would.
func feed(d *Detector, items []item, tickEach bool) []hit {
	var out []hit
	occ := 0
	for i, it := range items {
		if it.mark {
			occ++
		}
		var fs []Finding
		if it.tick {
			fs = d.Tick(it.ev.Time)
		} else {
			if tickEach {
				fs = d.Tick(it.ev.Time)
			}
			fs = append(fs, d.Observe(it.ev)...)
		}
		for _, f := range fs {
			out = append(out, hit{at: i, occ: occ, f: f})
		}
	}
	return out
}

// run feeds a stream to a new detector in testRoot with cfg.
func run(s *stream, cfg Config, tickEach bool) []hit {
	return feed(New(cfg, testRoot, t0), s.items, tickEach)
}

// actionable returns the findings that are not Tier2Only.
func actionable(hs []hit) []hit {
	var out []hit
	for _, h := range hs {
		if !h.f.Tier2Only {
			out = append(out, h)
		}
	}
	return out
}

// first returns the first finding of check c.
func first(hs []hit, c Check) (hit, bool) {
	for _, h := range hs {
		if h.f.Check == c {
			return h, true
		}
	}
	return hit{}, false
}

// describe renders findings for failure messages.
func describe(t *testing.T, items []item, hs []hit) string {
	t.Helper()
	var b strings.Builder
	for _, h := range hs {
		k := string(items[h.at].ev.Kind)
		if items[h.at].tick {
			k = "tick"
		}
		fmt.Fprintf(&b, "\n  item %d (%s): %s", h.at, k, h.f)
		for _, e := range h.f.Evidence {
			fmt.Fprintf(&b, "\n      step %d %s %s", e.Step, e.Kind, e.What)
		}
	}
	return b.String()
}

// markedSteps returns the steps of the marked items.
func markedSteps(items []item) map[int]bool {
	out := map[int]bool{}
	for _, it := range items {
		if it.mark {
			out[it.step] = true
		}
	}
	return out
}

// Outputs the scenarios share.
const (
	payGo = `package pay

import "github.com/acme/shop/internal/ledger"

// Charge books amount cents against the account.
func Charge(l *ledger.Ledger, account string, amount int64) error {
	if amount <= 0 {
		return ErrAmount
	}
	return l.Post(ledger.Entry{Account: account, Amount: -amount})
}
`
	handlerGo = `package pay

import (
	"encoding/json"
	"net/http"
)

// Handler serves POST /charge.
type Handler struct{ Ledger *ledger.Ledger }

func (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Account string ` + "`json:\"account\"`" + `
		Amount  int64  ` + "`json:\"amount\"`" + `
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := Charge(h.Ledger, req.Account, req.Amount); err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
	}
}
`
	buildErr = "# github.com/acme/shop/internal/pay\ninternal/pay/handler.go:9:25: undefined: ledger\nexit status 1"
)
