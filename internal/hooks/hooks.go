// Package hooks runs the user's commands at persona and supervision decision
// points (docs/hooks.md). A hook gets the decision as JSON on stdin; at the
// points that allow it, its stdout may change the decision or block it.
//
// A hook never holds up the daemon: each runs with a timeout; a hook that
// fails, times out or replies with something unusable is reported (a
// hook.failed event) and the decision goes ahead as if it had not run.
// Hooks at points that only observe run in the background, owned by the
// Runner and joined by Close.
package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Point is a decision point.
type Point string

// The decision points.
const (
	PersonaSelected       Point = "PersonaSelected"
	PersonaEscalated      Point = "PersonaEscalated"
	PersonaPromptAssembly Point = "PersonaPromptAssembly"
	WatcherCheck          Point = "WatcherCheck"
	WatcherNudge          Point = "WatcherNudge"
	WatcherEscalate       Point = "WatcherEscalate"
	WatcherPause          Point = "WatcherPause"
	WatcherAbort          Point = "WatcherAbort"
	SyncerEvaluate        Point = "SyncerEvaluate"
	SyncerRelay           Point = "SyncerRelay"
	SyncerDelivered       Point = "SyncerDelivered"
	SyncerIgnored         Point = "SyncerIgnored"
)

// Points lists every decision point.
func Points() []Point {
	return []Point{PersonaSelected, PersonaEscalated, PersonaPromptAssembly,
		WatcherCheck, WatcherNudge, WatcherEscalate, WatcherPause, WatcherAbort,
		SyncerEvaluate, SyncerRelay, SyncerDelivered, SyncerIgnored}
}

// CanModify reports whether a hook at p may change the decision (seed 004:
// the persona chosen, the persona's prompt, a nudge, a learning being
// evaluated, a relayed message).
func (p Point) CanModify() bool {
	switch p {
	case PersonaSelected, PersonaPromptAssembly, WatcherNudge, SyncerEvaluate, SyncerRelay:
		return true
	}
	return false
}

// CanBlock reports whether a hook at p may stop the decision (a nudge, a
// relayed message).
func (p Point) CanBlock() bool { return p == WatcherNudge || p == SyncerRelay }

// Observes reports whether hooks at p only observe: they run in the
// background and their reply is ignored.
func (p Point) Observes() bool { return !p.CanModify() && !p.CanBlock() }

// Hook is one configured command.
type Hook struct {
	Point   Point
	Command string // run with /bin/sh -c
	Timeout time.Duration
}

// Options configures a Runner.
type Options struct {
	Hooks []Hook
	// Dir is where hooks run; empty means the daemon's directory.
	Dir string
	// Env is added to the daemon's environment for every hook.
	Env []string
	// Report records what hooks did (hook.acted, hook.failed) about a task
	// ("" when the decision concerns none). It must not block for long.
	Report func(id task.ID, p event.Payload)
	Logger *slog.Logger
	// Now is the clock of the input's time; nil means time.Now.
	Now func() time.Time
}

// Runner runs hooks. It is safe for concurrent use.
type Runner struct {
	o      Options
	by     map[Point][]Hook
	ctx    context.Context // ends background hooks on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
}

// New returns a Runner for the configured hooks.
func New(o Options) *Runner {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Report == nil {
		o.Report = func(task.ID, event.Payload) {}
	}
	r := &Runner{o: o, by: map[Point][]Hook{}}
	for _, h := range o.Hooks {
		if h.Timeout <= 0 {
			h.Timeout = 5 * time.Second
		}
		r.by[h.Point] = append(r.by[h.Point], h)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// Has reports whether any hook is attached to p.
func (r *Runner) Has(p Point) bool { return r != nil && len(r.by[p]) > 0 }

// Input is what a hook reads on stdin.
type Input struct {
	Hook     Point           `json:"hook"`
	TaskID   task.ID         `json:"task_id,omitempty"`
	Time     time.Time       `json:"time"`
	Decision json.RawMessage `json:"decision"`
	// CanModify and CanBlock tell the hook what its reply may do.
	CanModify bool `json:"can_modify"`
	CanBlock  bool `json:"can_block"`
}

// Reply is what a hook may print on stdout. Nothing (or {}) lets the
// decision go ahead unchanged.
type Reply struct {
	// Block stops the decision, where the point allows it.
	Block bool `json:"block,omitempty"`
	// Reason says why (shown in the events).
	Reason string `json:"reason,omitempty"`
	// Decision holds the fields to change, where the point allows it; they
	// are laid over the decision's JSON object.
	Decision map[string]json.RawMessage `json:"decision,omitempty"`
}

// Verdict is the outcome of the hooks at one decision.
type Verdict struct {
	Blocked  bool
	Reason   string
	Modified bool
}

// maxStdout bounds what a hook's reply may be.
const maxStdout = 256 << 10

// Decide runs the hooks at p, in configuration order, on the decision that
// decision points to (a pointer to a struct that marshals to a JSON
// object). Each hook sees the decision as the previous one left it. A
// modifying reply is laid over the decision and unmarshalled back into it;
// check lets the caller refuse a change (an unknown persona): the change
// is then dropped and reported as a failure. A blocking reply ends the run.
// Decide returns when every hook has finished or timed out; with no hooks
// at p it returns at once. At observe-only points it starts the hooks in
// the background and returns.
func (r *Runner) Decide(ctx context.Context, p Point, id task.ID, decision any, check func() error) Verdict {
	if !r.Has(p) {
		return Verdict{}
	}
	if p.Observes() {
		r.Notify(p, id, decision)
		return Verdict{}
	}
	var v Verdict
	for _, h := range r.by[p] {
		raw, err := json.Marshal(decision)
		if err != nil {
			r.o.Logger.Error("hook decision does not marshal", "point", p, "err", err)
			return v
		}
		reply, ok := r.run(ctx, h, id, raw)
		if !ok {
			continue
		}
		if reply.Block {
			if !p.CanBlock() {
				r.failed(id, h, "replied block, which "+string(p)+" does not allow; ignored", proc.Result{})
				continue
			}
			v.Blocked, v.Reason = true, reply.Reason
			r.o.Report(id, event.HookActed{Point: string(p), Command: h.Command, Action: "blocked", Reason: reply.Reason})
			return v
		}
		if len(reply.Decision) == 0 {
			continue
		}
		if !p.CanModify() {
			r.failed(id, h, "replied with changes, which "+string(p)+" does not allow; ignored", proc.Result{})
			continue
		}
		if err := overlay(decision, raw, reply.Decision, check); err != nil {
			r.failed(id, h, "its change was not used: "+err.Error(), proc.Result{})
			continue
		}
		v.Modified = true
		v.Reason = reply.Reason
		r.o.Report(id, event.HookActed{Point: string(p), Command: h.Command, Action: "modified", Reason: reply.Reason})
	}
	return v
}

// overlay lays changes over the decision's JSON and stores the result in
// decision (a pointer), replacing it whole: fields the hook names are set
// (maps and slices replaced, not merged), the others keep their values.
// When check refuses the result, decision is put back as it was.
func overlay(decision any, orig []byte, changes map[string]json.RawMessage, check func() error) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(orig, &obj); err != nil {
		return fmt.Errorf("the decision is not a JSON object: %w", err)
	}
	dst := reflect.ValueOf(decision)
	if dst.Kind() != reflect.Pointer || dst.IsNil() || dst.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("the decision is a %T, not a pointer to a struct", decision)
	}
	fields := jsonFields(dst.Elem().Type())
	for _, k := range slices.Sorted(maps.Keys(changes)) {
		if !fields[k] {
			return fmt.Errorf("the decision has no field %q", k)
		}
	}
	maps.Copy(obj, changes)
	merged, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	fresh := reflect.New(dst.Elem().Type())
	if err := json.Unmarshal(merged, fresh.Interface()); err != nil {
		return fmt.Errorf("a changed field has the wrong type: %w", err)
	}
	saved := reflect.New(dst.Elem().Type()).Elem()
	saved.Set(dst.Elem())
	dst.Elem().Set(fresh.Elem())
	if check != nil {
		if err := check(); err != nil {
			dst.Elem().Set(saved)
			return err
		}
	}
	return nil
}

// jsonFields returns the JSON names of struct type t's fields, those of
// embedded structs included.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-", !f.IsExported() && !f.Anonymous:
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			maps.Copy(out, jsonFields(f.Type))
		case name != "":
			out[name] = true
		default:
			out[f.Name] = true
		}
	}
	return out
}

// Notify runs the hooks at p in the background; their replies are ignored.
// Failures are reported like Decide's. After Close it does nothing.
func (r *Runner) Notify(p Point, id task.ID, decision any) {
	if !r.Has(p) {
		return
	}
	raw, err := json.Marshal(decision)
	if err != nil {
		r.o.Logger.Error("hook decision does not marshal", "point", p, "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	for _, h := range r.by[p] {
		r.wg.Go(func() { r.run(r.ctx, h, id, raw) })
	}
}

// Close stops background hooks (they are killed) and waits for them.
func (r *Runner) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

// run runs one hook and parses its reply; ok is false when it failed (and
// was reported).
func (r *Runner) run(ctx context.Context, h Hook, id task.ID, decision []byte) (Reply, bool) {
	in, err := json.Marshal(Input{Hook: h.Point, TaskID: id, Time: r.o.Now().UTC(), Decision: decision,
		CanModify: h.Point.CanModify(), CanBlock: h.Point.CanBlock()})
	if err != nil {
		return Reply{}, false
	}
	env := append([]string{}, r.o.Env...)
	env = append(env, "NEURAPHAGE_HOOK="+string(h.Point), "NEURAPHAGE_TASK_ID="+string(id))
	res, err := proc.Run(ctx, proc.Cmd{Shell: h.Command, Dir: r.o.Dir, Env: withEnviron(env), Stdin: in,
		Timeout: h.Timeout, SeparateStderr: true, MaxOutput: maxStdout, Grace: time.Second})
	switch {
	case err != nil:
		r.failed(id, h, err.Error(), res)
		return Reply{}, false
	case res.TimedOut:
		r.failed(id, h, fmt.Sprintf("timed out after %s", h.Timeout), res)
		return Reply{}, false
	case res.Cancelled:
		r.failed(id, h, "cancelled: the daemon is stopping", res)
		return Reply{}, false
	case res.ExitCode != 0:
		r.failed(id, h, fmt.Sprintf("exited %d%s", res.ExitCode, stderrTail(res.Stderr)), res)
		return Reply{}, false
	}
	out := strings.TrimSpace(res.Output)
	if out == "" || h.Point.Observes() {
		return Reply{}, true
	}
	var reply Reply
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&reply); err != nil {
		r.failed(id, h, fmt.Sprintf("stdout is not a reply (%v): %q", err, words.Clip(out, 120)), res)
		return Reply{}, false
	}
	if dec.More() {
		r.failed(id, h, "stdout has more than one JSON object", res)
		return Reply{}, false
	}
	return reply, true
}

func (r *Runner) failed(id task.ID, h Hook, msg string, res proc.Result) {
	r.o.Logger.Warn("hook failed; the decision goes ahead", "point", h.Point, "command", h.Command, "task", id, "err", msg)
	r.o.Report(id, event.HookFailed{Point: string(h.Point), Command: h.Command, Error: msg,
		ExitCode: res.ExitCode, TimedOut: res.TimedOut, DurationMs: res.Duration.Milliseconds()})
}

func stderrTail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return ": " + words.Clip(s, 200)
}

// withEnviron is the daemon's environment with env added.
func withEnviron(env []string) []string {
	return append(os.Environ(), env...)
}
