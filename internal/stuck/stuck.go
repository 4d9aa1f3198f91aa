// Package stuck is the Watcher's first tier: deterministic checks over one
// task's recent observations that find a task stuck in a loop or spending
// without progress. A Detector is fed the task's observation events in
// order (Observe) and the clock for silence (Tick); each returns what it
// found, with the steps that match as evidence. It does no I/O and reads no
// clock of its own, so the same code judges a live task in the daemon and a
// recorded event log in `neuraphage watcher replay`.
//
// Repeats are judged by shape: tool calls are canonicalized (CanonicalCall)
// and results and texts compared after masking volatile parts (Mask) with a
// similarity threshold; byte-equal repeats are marked exact. A file change
// between two equal calls makes them different steps: re-running the tests
// after an edit is progress, not a loop.
package stuck

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Check names a tier-1 check.
type Check string

// The checks.
const (
	Repeat        Check = "repeat"         // the same call with the same result, N in a row
	Failing       Check = "failing"        // the same call failing N in a row
	Monologue     Check = "monologue"      // the same message N times with nothing in between
	Alternation   Check = "alternation"    // A-B-A-B over N steps with the same results
	Dense         Check = "dense"          // more than N identical call/result pairs in the last M
	ContextErrors Check = "context-errors" // the conversation overflowing the context window again and again
	EmptyReplies  Check = "empty-replies"  // turns with no text and no tool call, N in a row
	Apologies     Check = "apologies"      // apologies without a successful action between
	NoProgress    Check = "no-progress"    // nothing new for a while, no tool running
	Runaway       Check = "runaway"        // tokens or cost since the last progress over a limit
	Wandering     Check = "wandering"      // many distinct steps without changing a file (for tier 2)
	Persist       Check = "persist"        // the same call N in a row, whatever its noisy result
	SameFailure   Check = "same-failure"   // the same failure N times, through varying calls or across edits
	Talk          Check = "talk"           // turns without a tool call, N in a row
	ModelErrors   Check = "model-errors"   // failed model calls and restarts with no answer between
	Reask         Check = "reask"          // the same question put to the user again after answers
	Circles       Check = "circles"        // the files going back to earlier states again and again, nothing new between
)

// Config holds the checks' thresholds. Zero fields take DefaultConfig's.
type Config struct {
	Window        int           // steps kept (calls, results and texts), default 40
	Grace         int           // steps after a start or resume before the time and spend checks apply, default 3
	Repeat        int           // default 4
	Failing       int           // default 3
	Monologue     int           // default 3
	Alternation   int           // steps (pairs) of A-B-A-B, default 6
	Dense         int           // more than this many identical pairs ..., default 5
	DenseOf       int           // ... among the last this many pairs, default 10
	ContextErrors int           // default 3
	EmptyReplies  int           // default 3
	Apologies     int           // default 3
	NoProgress    time.Duration // default 10m
	RunawayTokens int64         // tokens since progress, default 300000
	RunawayUSD    float64       // cost since progress, default 3
	Wandering     int           // tool results without a file change (tier 2 only), default 30
	WanderingAct  int           // ... and actionable once tier 2 confirms, default 60
	Persist       int           // the same call in a row, results alike under Loose, default 8
	SameFailure   int           // the same failure, any call, edits between, default 5
	Talk          int           // turns without a tool call in a row, default 5
	ModelErrors   int           // failed model calls and restarts without an answer, default 4
	Reask         int           // times the same question is asked, default 3
	Circles       int           // file changes in a row back to earlier states, nothing new between, default 4
	Similarity    float64       // near-duplicate threshold for masked results, default 0.9
	Loose         float64       // similarity of fully masked results for Persist, default 0.7
}

// DefaultConfig returns the default thresholds.
func DefaultConfig() Config {
	return Config{Window: 40, Grace: 3, Repeat: 4, Failing: 3, Monologue: 3, Alternation: 6, Dense: 5, DenseOf: 10,
		ContextErrors: 3, EmptyReplies: 3, Apologies: 3, NoProgress: 10 * time.Minute,
		RunawayTokens: 300_000, RunawayUSD: 3, Wandering: 30, WanderingAct: 60, Persist: 8, SameFailure: 5,
		Talk: 5, ModelErrors: 4, Reask: 3, Circles: 4, Similarity: 0.9, Loose: 0.7}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&c.Window, d.Window)
	pick(&c.Grace, d.Grace)
	pick(&c.Repeat, d.Repeat)
	pick(&c.Failing, d.Failing)
	pick(&c.Monologue, d.Monologue)
	pick(&c.Alternation, d.Alternation)
	pick(&c.Dense, d.Dense)
	pick(&c.DenseOf, d.DenseOf)
	pick(&c.ContextErrors, d.ContextErrors)
	pick(&c.EmptyReplies, d.EmptyReplies)
	pick(&c.Apologies, d.Apologies)
	pick(&c.Wandering, d.Wandering)
	pick(&c.WanderingAct, d.WanderingAct)
	pick(&c.Persist, d.Persist)
	pick(&c.SameFailure, d.SameFailure)
	pick(&c.Talk, d.Talk)
	pick(&c.ModelErrors, d.ModelErrors)
	pick(&c.Reask, d.Reask)
	pick(&c.Circles, d.Circles)
	if c.Loose <= 0 || c.Loose > 1 {
		c.Loose = d.Loose
	}
	if c.NoProgress <= 0 {
		c.NoProgress = d.NoProgress
	}
	if c.RunawayTokens <= 0 {
		c.RunawayTokens = d.RunawayTokens
	}
	if c.RunawayUSD <= 0 {
		c.RunawayUSD = d.RunawayUSD
	}
	if c.Similarity <= 0 || c.Similarity > 1 {
		c.Similarity = d.Similarity
	}
	c.Window = max(c.Window, 2*c.DenseOf, 2*c.Alternation, 2*c.Repeat, 2*c.Persist, 2*c.SameFailure)
	return c
}

// Finding is what a check found at one step.
type Finding struct {
	Check Check `json:"check"`
	// Status is the tier-1 verdict: stuck, runaway or struggling.
	Status    string `json:"status"`
	Diagnosis string `json:"diagnosis"`
	// Step is the step (or, for the clock checks, the last step) at which
	// it was found.
	Step int `json:"step"`
	// Key identifies the loop: the check and the call it is about, so the
	// same loop found again after a pause in it is known.
	Key string `json:"key"`
	// Exact is set when the repeats are byte for byte.
	Exact bool `json:"exact,omitempty"`
	// Tier2Only marks a signal too weak to act on alone: the Watcher asks
	// its persona instead of nudging.
	Tier2Only bool `json:"tier2_only,omitempty"`
	// Confirm marks a finding to act on once tier 2 agrees (a long read
	// without change may be a survey before a large write); it is also
	// Tier2Only, so a Watcher that does not know Confirm asks, never nudges.
	Confirm  bool             `json:"confirm,omitempty"`
	Evidence []event.Evidence `json:"evidence"`
}

// Step is one step of the window, for snapshots.
type Step struct {
	N     int    `json:"n"`
	Kind  string `json:"kind"` // call | result | text
	Tool  string `json:"tool,omitempty"`
	What  string `json:"what"`
	Error bool   `json:"error,omitempty"`
	// Epoch names the state of the task's files this step saw: a new
	// state gets the next number, a return to an earlier state (the same
	// bytes rewritten, an edit undone) its number again. Steps of
	// different epochs saw different files.
	Epoch int `json:"epoch"`

	sorry bool     // a text that apologizes
	key   string   // canonical call (calls and results)
	kw    uint64   // keyWords(key), computed once
	shape string   // masked text (results: MaskResult, or Mask for errors; texts: Mask)
	words []uint64 // wordSet(shape)
	loose string   // fully masked result (Mask), for Persist
	exact string   // exact identity (results and texts)
	// like records which results before this one are the same (results
	// only): bit k for the k-th before it, of the likeN it was compared with.
	like  uint64
	likeN int
}

// Counters summarize the task since it started (a resume does not reset
// them).
type Counters struct {
	Steps        int       `json:"steps"`
	Calls        int       `json:"calls"`
	Errors       int       `json:"errors"`
	FileChanges  int       `json:"file_changes"`
	Turns        int       `json:"turns"`
	LastProgress time.Time `json:"last_progress"`
	// StepsSinceProgress, TokensSinceProgress and USDSinceProgress are
	// deltas since the last progress, never totals.
	StepsSinceProgress  int     `json:"steps_since_progress"`
	TokensSinceProgress int64   `json:"tokens_since_progress"`
	USDSinceProgress    float64 `json:"usd_since_progress"`
	// Progress counts progress moments; the Watcher compares it before
	// and after a nudge.
	Progress int `json:"progress"`
}

var apology = regexp.MustCompile(`(?i)\b(sorry|apologi[sz]e|apologies|my (mistake|bad)|I was wrong)\b`)

// Detector is the window and checks of one task. It is not safe for
// concurrent use: its owner feeds it in order.
type Detector struct {
	cfg  Config
	root string

	steps   []Step // the window, oldest first (win.s)
	win     window
	rwin    window         // the window's results
	pending []pendingEntry // few at a time: a slice is cheaper than a map
	running int            // tool calls without a result yet

	n        int // steps since the task started (step numbers)
	started  int // steps since the last start or resume, for the grace period
	epoch    int
	c        Counters
	sinceFS  int // results since the last file change
	readsFS  int // ... of which reads (pendingCall.read)
	empty    int
	ctxErrs  int
	apolog   int
	turnBusy bool // the turn in flight had text or a call
	turnCall bool // the turn in flight had a tool call
	talk     int  // turns in a row without a tool call
	// tree is what the task's files hold; it outlives Reset (files do not
	// change while a task is paused). lastCall is the call of the latest
	// result: the files changed next are its changes.
	tree     *tree
	lastCall pendingCall
	changes  []fileChange // recent file changes, oldest first
	// modelErrs counts failed model calls and model-failure pauses since a
	// model call last answered; it outlives Reset, so a loop of failures
	// and resumes is one loop.
	modelErrs int
	modelLog  []string
	restarts  int      // restarts on its own since the last progress; outlives Reset
	ran       bool     // the task has been running before
	questions []string // questions asked, newest last (at most 8)
	// returns are the file changes in a row, since the last progress, that
	// took the tree back to a state it had been in (newest last, at most
	// Circles).
	returns []fileReturn
	// toolStart is when the tools running now started; busy is the time
	// tools ran since the last progress, which is not idle time.
	toolStart time.Time
	busy      time.Duration
	halted    bool // the task left running; Tick waits for its next start
	// progressText is the evidence of no-progress, for progressAt.
	progressAt   time.Time
	progressText string
}

// New returns a detector for a task working in root (its worktree, used
// to make paths relative), started at now.
func New(cfg Config, root string, now time.Time) *Detector {
	d := &Detector{cfg: cfg.withDefaults(), root: root, tree: newTree(), c: Counters{LastProgress: now}}
	d.Reset(now)
	return d
}

// Config returns the thresholds in use.
func (d *Detector) Config() Config { return d.cfg }

// Reset marks a start or a resume (after a pause, an answer, a restart).
// The window, the files' state and the counters since progress are kept: a
// loop that spans a pause is still one loop. What restarts is the clock
// (the time paused is not idle), the turn in flight (calls without a result
// are dropped) and the grace period of the clock and spend checks.
func (d *Detector) Reset(now time.Time) {
	d.clearPending()
	d.running, d.started, d.empty = 0, 0, 0
	d.toolStart, d.busy, d.halted = time.Time{}, 0, false
	d.turnBusy, d.turnCall, d.talk = false, false, 0
	d.lastCall = pendingCall{}
	d.c.LastProgress = now
}

// Counters returns the task's counters.
func (d *Detector) Counters() Counters { return d.c }

// Window returns a copy of the steps kept.
func (d *Detector) Window() []Step { return append([]Step(nil), d.steps...) }

// Running reports whether a tool call is in flight.
func (d *Detector) Running() bool { return d.running > 0 }

// Observe feeds one event of the task and returns what the checks found
// at it. A task.status event moving the task to running resets the window.
func (d *Detector) Observe(e event.Event) []Finding {
	switch p := e.Payload.(type) {
	case event.TaskStatus:
		if p.To == task.Running {
			d.Reset(e.Time)
			// A task started again after failing, or queued again after
			// running, restarted on its own: a loop of restarts is one
			// loop, however many windows it spans.
			restart := p.From == task.Failed || p.From == task.Queued && d.ran
			d.ran = true
			if restart {
				d.restarts++
				return d.modelError(e.Time, fmt.Sprintf("restarted (%s → running)", p.From))
			}
		} else {
			d.halted = true // waiting, paused or done: its clock stops
		}
		if p.To == task.Paused && strings.HasPrefix(p.Reason, "model call failed") {
			return d.modelError(e.Time, "paused: "+p.Reason)
		}
	case event.TurnStarted:
		d.c.Turns++
		d.turnBusy, d.turnCall = false, false
	case event.TurnEnded:
		// No tool runs between turns: calls an urgent message dropped
		// never get a result.
		d.toolsDone(e.Time)
		d.clearPending()
		var out []Finding
		if d.turnCall {
			d.talk = 0
		} else if d.talk++; d.talk >= d.cfg.Talk {
			out = append(out, Finding{Check: Talk, Status: "stuck", Step: d.n, Key: string(Talk),
				Diagnosis: fmt.Sprintf("%d turns in a row without a tool call", d.talk),
				Evidence:  d.lastTexts(d.talk, func(Step) bool { return true })})
			if len(out[0].Evidence) == 0 {
				out[0].Evidence = []event.Evidence{{Step: d.n, Kind: "text", What: fmt.Sprintf("turn %d: no tool call (%s)", p.Turn, p.StopReason)}}
			}
		}
		if d.turnBusy {
			d.empty = 0
			return out
		}
		d.empty++
		if d.empty >= d.cfg.EmptyReplies {
			out = append(out, Finding{Check: EmptyReplies, Status: "stuck", Step: d.n, Key: string(EmptyReplies),
				Diagnosis: fmt.Sprintf("%d replies in a row with no text and no tool call", d.empty),
				Evidence:  []event.Evidence{{Step: d.n, Kind: "text", What: fmt.Sprintf("turn %d: empty reply (%s)", p.Turn, p.StopReason)}}})
		}
		return out
	case event.Text:
		d.turnBusy = true
		return d.text(e, p)
	case event.ToolCall:
		d.turnBusy, d.turnCall = true, true
		d.n++
		d.started++
		d.c.Steps++
		d.c.Calls++
		if d.running == 0 {
			d.toolStart = e.Time
		}
		d.running++
		key := CanonicalCall(p.Name, p.Args, d.root)
		c := pendingCall{key: key, kw: keyWords(key), args: p.Args, read: isRead(p.Name, p.Args)}
		d.putPending(p.CallID, c)
		d.push(Step{N: d.n, Kind: "call", Tool: p.Name, What: words.Clip(key, 160), key: key, kw: c.kw})
	case event.ToolResult:
		return d.result(e, p)
	case event.FileChanged:
		d.c.FileChanges++
		var args json.RawMessage
		if d.lastCall.key != "" && strings.HasPrefix(d.lastCall.key, p.Tool+" ") {
			args = d.lastCall.args
		}
		path := canonPath(p.Path, d.root)
		epoch, fresh := d.tree.change(path, p.Op, args, p.Sum)
		moved := epoch != d.epoch
		d.epoch = epoch
		d.changes = append(d.changes, fileChange{n: d.n, path: path})
		if len(d.changes) > 2*d.cfg.Window {
			d.changes = append(d.changes[:0], d.changes[len(d.changes)-d.cfg.Window:]...)
		}
		if fresh {
			d.sinceFS, d.readsFS = 0, 0
			d.progress(e.Time)
		} else if moved {
			return d.circle(path, epoch)
		}
	case event.NeedsInput:
		d.talk = 0 // asking the user is not talking to oneself
		return d.ask(p)
	case event.Usage:
		d.modelErrs = 0 // a model call answered
		if d.restarts == 0 {
			d.modelLog = d.modelLog[:0]
		}
		d.c.TokensSinceProgress += p.InputTokens + p.OutputTokens
		d.c.USDSinceProgress += p.CostUSD
		return d.spend()
	case event.ModelError:
		if p.Class != "context_too_long" {
			return d.modelError(e.Time, p.Class+": "+p.Message)
		}
		d.ctxErrs++
		if d.ctxErrs >= d.cfg.ContextErrors {
			return []Finding{{Check: ContextErrors, Status: "stuck", Step: d.n, Key: string(ContextErrors),
				Diagnosis: fmt.Sprintf("the conversation overflowed the context window %d times without progress", d.ctxErrs),
				Evidence:  []event.Evidence{{Step: d.n, Kind: "usage", What: words.Clip(p.Message, 160)}}}}
		}
	}
	return nil
}

// Tick runs the clock checks at now: no progress for too long while no
// tool runs, and spending since progress.
func (d *Detector) Tick(now time.Time) []Finding {
	if d.halted || d.started < d.cfg.Grace || d.running > 0 {
		return nil
	}
	if idle := now.Sub(d.c.LastProgress) - d.busy; idle >= d.cfg.NoProgress {
		// Found again at every tick while the task stays idle: built
		// without fmt, the time of the last progress formatted once.
		if !d.progressAt.Equal(d.c.LastProgress) || d.progressText == "" {
			d.progressAt, d.progressText = d.c.LastProgress, "last progress at "+d.c.LastProgress.UTC().Format(time.RFC3339)
		}
		return []Finding{{Check: NoProgress, Status: "stuck", Step: d.n, Key: string(NoProgress),
			Diagnosis: "no progress for " + idle.Round(time.Second).String() + " (no file changed, no new tool result)",
			Evidence:  []event.Evidence{{Step: d.n, Kind: "silence", What: d.progressText}}}}
	}
	return nil
}

// toolsDone ends the time tools were running at now.
func (d *Detector) toolsDone(now time.Time) {
	if d.running > 0 && !d.toolStart.IsZero() && now.After(d.toolStart) {
		d.busy += now.Sub(d.toolStart)
	}
	d.running, d.toolStart = 0, time.Time{}
}

func (d *Detector) progress(now time.Time) {
	d.busy = 0
	if d.running > 0 {
		d.toolStart = now // tool time before the progress is not counted twice
	}
	d.c.Progress++
	d.c.LastProgress = now
	d.c.StepsSinceProgress = 0
	d.c.TokensSinceProgress, d.c.USDSinceProgress = 0, 0
	d.ctxErrs, d.apolog = 0, 0
	d.restarts = 0
	d.returns = d.returns[:0]
	if d.modelErrs == 0 {
		d.modelLog = d.modelLog[:0]
	}
}

func (d *Detector) spend() []Finding {
	if d.started < d.cfg.Grace {
		return nil
	}
	c := d.c
	if c.TokensSinceProgress < d.cfg.RunawayTokens && c.USDSinceProgress < d.cfg.RunawayUSD {
		return nil
	}
	return []Finding{{Check: Runaway, Status: "runaway", Step: d.n, Key: string(Runaway),
		Diagnosis: fmt.Sprintf("%d tokens ($%.2f) spent over %d steps since the last progress", c.TokensSinceProgress, c.USDSinceProgress, c.StepsSinceProgress),
		Evidence:  []event.Evidence{{Step: d.n, Kind: "usage", What: fmt.Sprintf("%d tokens, $%.4f since progress at %s", c.TokensSinceProgress, c.USDSinceProgress, c.LastProgress.UTC().Format(time.RFC3339))}}}}
}

func (d *Detector) text(e event.Event, p event.Text) []Finding {
	if p.Text == "" {
		return nil
	}
	d.n++
	d.started++
	d.c.Steps++
	d.c.StepsSinceProgress++
	shape := Mask(words.Clip(p.Text, 600))
	s := Step{N: d.n, Kind: "text", What: words.Clip(words.OneLine(p.Text), 160), shape: shape, words: wordSet(shape),
		exact: event.ContentHash(p.Text), sorry: apology.MatchString(p.Text)}
	d.push(s)
	var out []Finding
	if s.sorry {
		d.apolog++
		if d.apolog >= d.cfg.Apologies {
			out = append(out, Finding{Check: Apologies, Status: "struggling", Step: d.n, Key: string(Apologies),
				Diagnosis: fmt.Sprintf("%d apologies without a successful action in between", d.apolog),
				Evidence:  d.lastTexts(d.apolog, func(st Step) bool { return st.sorry })})
		}
	}
	// Monologue: the same message again with nothing in between.
	run := []Step{s}
	exact := true
	for i := len(d.steps) - 2; i >= 0 && len(run) < d.cfg.Monologue; i-- {
		t := d.steps[i]
		if t.Kind != "text" || !d.similar(&t, &s) {
			break
		}
		exact = exact && t.exact == s.exact
		run = append(run, t)
	}
	if len(run) >= d.cfg.Monologue {
		out = append(out, Finding{Check: Monologue, Status: "stuck", Step: d.n, Key: string(Monologue), Exact: exact,
			Diagnosis: fmt.Sprintf("the same message %d times with no action in between", len(run)),
			Evidence:  evidence(run, s)})
	}
	return out
}

func (d *Detector) lastTexts(n int, ok func(Step) bool) []event.Evidence {
	var run []Step
	for i := len(d.steps) - 1; i >= 0 && len(run) < n; i-- {
		if d.steps[i].Kind == "text" && ok(d.steps[i]) {
			run = append(run, d.steps[i])
		}
	}
	return evidence(run, Step{})
}

// similar reports whether two steps' shapes are near-duplicates (Similar,
// over the word sets computed when the steps were made).
func (d *Detector) similar(a, b *Step) bool {
	if a.shape == b.shape {
		return true
	}
	t := d.cfg.Similarity
	if t >= 1 || a.shape == "" || b.shape == "" || !closeLengths(len(a.shape), len(b.shape), t) {
		return false
	}
	return similarSets(a.words, b.words, t)
}
