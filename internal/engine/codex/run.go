package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// resumeNote is the first turn of a resumed thread when no message waits.
const resumeNote = "This session was stopped and now continues (a pause, or a restart of Neuraphage or of the CLI). " +
	"Continue the task where you left off; if it is done, say so and stop."

// finalTimeout bounds the commits a run makes after its context ended.
const finalTimeout = 10 * time.Second

// stderrTail is how much of the CLI's stderr a crash's reason quotes.
const stderrTail = 600

// midTurnPoll is how often the inbox is read during a turn under a Host
// that does not signal arrivals (engine.Arrivals).
const midTurnPoll = time.Second

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, r engine.Run) engine.Outcome {
	if err := e.Ready(); err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: err.Error()}
	}
	msgs, err := r.Host.Conversation(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return engine.Outcome{Status: engine.Stopped}
		}
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("codex engine: loading the conversation: %v", err)}
	}
	turns := 0
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			turns++
		}
	}
	t, out, stop := e.answerPending(ctx, r, turns)
	if stop {
		return out
	}
	r.Task = t
	home := e.Home(r.Task.ID)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("making the CLI's CODEX_HOME: %v", err)}
	}
	e.linkLogin(home)
	launcher := e.o.Launcher
	if launcher != nil {
		// The CLI keeps its threads and logs in its CODEX_HOME.
		l := *launcher
		l.Write = append(append([]string(nil), l.Write...), filepath.Dir(home))
		launcher = &l
	}
	p, err := extproc.Start(ctx, extproc.Spec{
		Args: e.args(e.resolved(), r.Task), Dir: r.Dir, Env: e.env(r.Task, r.Dir, r.Env),
		Launcher: launcher, Task: sandbox.Task{Dir: r.Dir, TempDir: tempDir(r.Env), Repo: r.Task.Repo, Branch: r.Branch},
		Label: "codex (" + string(r.Task.ID) + ")",
	})
	if err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("starting Codex: %v", err)}
	}
	defer p.Stop()
	ru := &run{e: e, r: r, h: r.Host, p: p, log: e.log.With("task_id", r.Task.ID), latest: r.Task, turn: turns,
		msgs: make(chan msg), readErr: make(chan error, 1), pending: map[int64]pending{}, calls: map[string]pendingCall{},
		inflight: map[int64]bool{}}
	if snap, err := git.TakeSnapshot(ctx, r.Dir); err == nil {
		ru.snap, ru.snapTaken = snap, true
	}
	go func() { // owned by ru; ends at EOF, which p.Stop brings about
		ru.readErr <- extproc.ReadLines(p.Stdout(), ru.log, func(b []byte) error {
			var m msg
			if err := json.Unmarshal(b, &m); err != nil {
				ru.log.Warn("skipping a line from the CLI that does not parse", "err", err, "start", words.Clip(string(b), 120))
				return nil
			}
			ru.msgs <- m // Run drains the channel after the loop
			return nil
		})
		close(ru.msgs)
	}()
	out = ru.start(ctx)
	if out.Status == "" {
		out = ru.loop(ctx)
	}
	p.Stop()
	for range ru.msgs { // join the reader
	}
	return out
}

// answerPending applies the user's reply to a widening the task asked
// them about (the interactive strategy): the reply is the last message
// from the user waiting for the task; the widening is made or dropped
// before the run's first turn, whose sandbox follows. The message itself
// still reaches the agent at the boundary.
func (e *Engine) answerPending(ctx context.Context, r engine.Run, turn int) (task.Task, engine.Outcome, bool) {
	m := r.Task.Manifest
	if m == nil || m.Pending == nil || e.o.Recovery == nil {
		return r.Task, engine.Outcome{}, false
	}
	inbox, err := r.Host.Inbox(ctx)
	if err != nil {
		return r.Task, engine.Outcome{Status: engine.Paused, Reason: "codex engine: reading the task's messages: " + err.Error()}, true
	}
	reply := ""
	for _, inj := range inbox {
		if inj.Kind == inject.Message && inj.Source == inject.FromUser {
			reply = strings.TrimSpace(inj.Text)
		}
	}
	if reply == "" {
		return r.Task, engine.Outcome{}, false
	}
	widened, _, ev := lifecycle.Answer(*m, reply, e.o.Recovery.Policy)
	step := engine.Step{Turn: turn, Manifest: &widened}
	if ev != nil {
		step.Events = []event.Payload{ev}
	}
	t, err := r.Host.Commit(ctx, step)
	if err != nil {
		if ctx.Err() != nil {
			return r.Task, engine.Outcome{Status: engine.Stopped}, true
		}
		return r.Task, engine.Outcome{Status: engine.Paused, Reason: "codex engine: " + err.Error()}, true
	}
	if t.ID == "" {
		t = r.Task
		t.Manifest = &widened
	}
	return t, engine.Outcome{}, false
}

// tempDir is the task's temporary directory: the last TMPDIR in env.
func tempDir(env []string) string {
	dir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			dir = v
		}
	}
	return dir
}

// pending is a request of the engine awaiting its response.
type pending struct {
	method string
	injs   []inject.Injection // turn/steer: the messages it carries
	text   string
}

// pendingCall is a tool call the CLI is running.
type pendingCall struct {
	name  string
	args  json.RawMessage
	start time.Time
}

// run is one run of one task.
type run struct {
	e       *Engine
	r       engine.Run
	h       engine.Host
	p       *extproc.Proc
	log     *slog.Logger
	msgs    chan msg
	readErr chan error

	latest  task.Task
	resumed bool   // the thread existed when the run began
	thread  string // the thread's id
	model   string // the model the CLI said it uses
	nextID  int64
	pending map[int64]pending

	turn         int    // model calls so far (the assistant messages stored)
	turnID       string // the CLI's turn in progress, "" between turns
	turnDone     bool   // the turn in progress ended
	turnStatus   string // how it ended
	turnErr      string // why it failed
	interrupting bool   // a turn/interrupt was sent for it
	steering     int    // turn/steer requests awaiting their answer
	inflight     map[int64]bool
	waiting      bool   // a message may wait undelivered
	cut          bool   // the turn was interrupted
	lastText     string // the CLI's last message
	retryNote    string // a widened manifest: the next turn says so
	asked        string // the interactive recovery's question

	asst      llm.Message // the model call's message being assembled
	inAsst    bool        // a model call is in progress
	callStart time.Time
	calls     map[string]pendingCall
	usage     tokens // the thread's total usage, last reported
	usageTurn tokens // the total when the turn began

	snap      git.Snapshot
	snapTaken bool
	named     map[string]bool
}

// start initializes the app-server and starts or resumes the task's
// thread. A zero Outcome means it is ready for turns.
func (ru *run) start(ctx context.Context) engine.Outcome {
	if _, err := ru.call(ctx, "initialize", map[string]any{
		"clientInfo": map[string]any{"name": "neuraphage", "title": nil, "version": "0.0.0"}, "capabilities": nil}); err != nil {
		return ru.stopOrPause(ctx, err)
	}
	if err := ru.notify("initialized", nil); err != nil {
		return ru.stopOrPause(ctx, ru.crashed(err))
	}
	params := map[string]any{"cwd": ru.r.Dir}
	if m := ru.modelName(); m != "" {
		params["model"] = m
	}
	var res threadResult
	if id := ru.e.Thread(ru.r.Task.ID); id != "" {
		params["threadId"] = id
		params["excludeTurns"] = true // the engine needs none of the history
		raw, err := ru.call(ctx, "thread/resume", params)
		if err == nil {
			err = json.Unmarshal(raw, &res)
		}
		var rerr *rpcError
		switch {
		case errors.As(err, &rerr):
			// The thread is gone (its CODEX_HOME was removed): a new one
			// starts from the task.
			ru.log.Warn("the CLI could not resume the task's thread; starting a new one", "thread", id, "err", err)
			delete(params, "threadId")
			delete(params, "excludeTurns")
		case err != nil:
			return ru.stopOrPause(ctx, err)
		default:
			ru.resumed = true
		}
	}
	if !ru.resumed {
		raw, err := ru.call(ctx, "thread/start", params)
		if err == nil {
			err = json.Unmarshal(raw, &res)
		}
		if err != nil {
			return ru.stopOrPause(ctx, err)
		}
		if res.Thread.ID == "" {
			return ru.stopOrPause(ctx, errors.New("thread/start answered no thread id"))
		}
		if err := ru.e.storeThread(ru.r.Task.ID, res.Thread.ID); err != nil {
			return ru.stopOrPause(ctx, err)
		}
	}
	ru.thread, ru.model = res.Thread.ID, res.Model
	return engine.Outcome{}
}

func (ru *run) loop(ctx context.Context) engine.Outcome {
	first := true
	for {
		if ctx.Err() != nil {
			return ru.stopped()
		}
		if q := ru.asked; q != "" {
			ru.asked = ""
			if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Events: []event.Payload{event.NeedsInput{Turn: ru.turn, Question: q}}}); err != nil {
				return ru.stopOrPause(ctx, err)
			}
			return engine.Outcome{Status: engine.Waiting, Reason: q, Turn: ru.turn}
		}
		out, sent, stop := ru.boundary(ctx, first)
		if stop {
			return out
		}
		if !sent {
			summary := words.Or(strings.TrimSpace(ru.lastText), "Codex ended its turn.")
			if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Events: []event.Payload{event.Completed{Turn: ru.turn, Summary: summary}}}); err != nil {
				return ru.stopOrPause(ctx, err)
			}
			return engine.Outcome{Status: engine.Completed, Reason: summary, Turn: ru.turn}
		}
		first = false
		if out, stop := ru.await(ctx); stop {
			return out
		}
		if ru.cut {
			continue // the boundary delivers what interrupted the turn
		}
		if ru.turnStatus == "failed" {
			reason := words.Clip(words.Or(ru.turnErr, "Codex reported the turn failed"), 1000)
			if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Events: []event.Payload{event.Failed{Turn: ru.turn, Reason: reason}}}); err != nil {
				return ru.stopOrPause(ctx, err)
			}
			return engine.Outcome{Status: engine.Failed, Reason: reason, Turn: ru.turn}
		}
	}
}

// boundary takes the injections waiting for the task: a pause ends the
// run; other messages start the next turn, their receipt committed once
// the CLI accepted it. The first boundary of a run sends the task (a new
// thread) or a note to continue (a resumed one) when nothing else waits.
func (ru *run) boundary(ctx context.Context, first bool) (out engine.Outcome, sent, stop bool) {
	drain(ru.h.Interrupts())
	t, err := ru.h.Prepare(ctx)
	if err != nil {
		return ru.stopOrPause(ctx, fmt.Errorf("preparing the task's messages: %w", err)), false, true
	}
	if t.ID != "" {
		ru.latest = t
	}
	drain(ru.h.Interrupts())
	ru.waiting = false
	inbox, err := ru.h.Inbox(ctx)
	if err != nil {
		return ru.stopOrPause(ctx, fmt.Errorf("reading the task's messages: %w", err)), false, true
	}
	var seen string
	if first && ru.resumed {
		seen = ru.rollout()
	}
	var pauses, shown, taken []inject.Injection
	for _, inj := range inbox {
		switch {
		case inj.Kind == inject.Pause:
			pauses = append(pauses, inj)
		case first && ru.resumed && delivered(seen, inj.ID):
			taken = append(taken, inj) // the CLI took it; only its receipt was lost
		default:
			shown = append(shown, inj)
		}
	}
	if len(taken) > 0 {
		if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Delivered: taken, Events: []event.Payload{receipt(ru.turn, taken, ru.h.Now())}}); err != nil {
			return ru.stopOrPause(ctx, err), false, true
		}
	}
	if len(pauses) > 0 {
		reason := words.Or(strings.TrimSpace(pauses[len(pauses)-1].Text), "paused")
		if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Delivered: pauses, Events: []event.Payload{receipt(ru.turn, pauses, ru.h.Now())}}); err != nil {
			return ru.stopOrPause(ctx, err), false, true
		}
		return engine.Outcome{Status: engine.Paused, Reason: reason, Turn: ru.turn}, false, true
	}
	intro := ru.retryNote
	ru.retryNote = ""
	if first {
		switch {
		case !ru.resumed:
			intro = taskPrompt(ru.r.Task)
		case len(shown) == 0 && intro == "":
			intro = engine.Note(resumeNote)
		}
	}
	if intro == "" && len(shown) == 0 {
		return engine.Outcome{}, false, false
	}
	if stop := ru.h.Allow(ctx); stop != nil {
		return engine.Outcome{Status: stop.Status, Reason: stop.Reason, Turn: ru.turn}, false, true
	}
	if err := ru.startTurn(ctx, intro, shown); err != nil {
		return ru.stopOrPause(ctx, err), false, true
	}
	return engine.Outcome{}, true, false
}

// message is the text of a turn's input or a steer: intro, the
// injections rendered, their delivery marker.
func message(intro string, injs []inject.Injection) string {
	var parts []string
	if intro != "" {
		parts = append(parts, intro)
	}
	for _, inj := range injs {
		parts = append(parts, engine.Render(inj))
	}
	if len(injs) > 0 {
		parts = append(parts, marker(injs))
	}
	return strings.Join(parts, "\n\n")
}

// startTurn starts a turn (turn/start) and commits its input with the
// injections' receipt once the CLI answered it.
func (ru *run) startTurn(ctx context.Context, intro string, injs []inject.Injection) error {
	text := message(intro, injs)
	ru.turnID, ru.turnDone, ru.turnStatus, ru.turnErr, ru.interrupting = "", false, "", "", false
	ru.usageTurn = ru.usage
	params := map[string]any{"threadId": ru.thread, "input": textInput(text)}
	if sp := sandboxPolicy(ru.latest.Manifest, ru.e.o.Network, ru.e.confined()); sp != nil {
		params["sandboxPolicy"] = sp // a manifest widened by recovery holds from this turn on
	}
	if ap := approvalPolicy(ru.latest.Manifest); ap != "" {
		params["approvalPolicy"] = ap
	}
	raw, err := ru.call(ctx, "turn/start", params)
	if err != nil {
		return err
	}
	var res struct {
		Turn turn `json:"turn"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("turn/start's answer: %w", err)
	}
	if ru.turnID == "" {
		ru.turnID = res.Turn.ID
	}
	step := engine.Step{Turn: ru.turn, Messages: []llm.Message{llm.UserText(text)}, Delivered: injs}
	if len(injs) > 0 {
		step.Events = []event.Payload{receipt(ru.turn+1, injs, ru.h.Now())}
	}
	return ru.commit(ctx, step)
}

// await handles the CLI's messages until the turn ends. It interrupts the
// turn when an urgent message arrives, and steers non-urgent ones into it.
func (ru *run) await(ctx context.Context) (engine.Outcome, bool) {
	ru.cut = false
	var arrivals <-chan struct{}
	var tick <-chan time.Time
	if a, ok := ru.h.(engine.Arrivals); ok {
		arrivals = a.Arrivals()
	} else {
		poll := time.NewTicker(midTurnPoll)
		defer poll.Stop()
		tick = poll.C
	}
	for !ru.turnDone || ru.steering > 0 {
		select {
		case <-ctx.Done():
			return ru.stopped(), true
		case <-ru.h.Interrupts():
			if !ru.interrupting && !ru.turnDone && ru.turnID != "" && ru.h.UrgentWaiting(ctx) {
				ru.interrupting = true
				if err := ru.send("turn/interrupt", map[string]any{"threadId": ru.thread, "turnId": ru.turnID}, pending{method: "turn/interrupt"}); err != nil {
					return ru.stopOrPause(ctx, ru.crashed(err)), true
				}
			}
		case <-arrivals:
			ru.waiting = true
			if err := ru.steer(ctx); err != nil {
				return ru.stopOrPause(ctx, err), true
			}
		case <-tick:
			ru.waiting = true
			if err := ru.steer(ctx); err != nil {
				return ru.stopOrPause(ctx, err), true
			}
		case m, ok := <-ru.msgs:
			if !ok {
				return ru.stopOrPause(ctx, ru.crashed(ru.readError())), true
			}
			if err := ru.dispatch(ctx, m); err != nil {
				return ru.stopOrPause(ctx, err), true
			}
		}
	}
	ru.turnID = ""
	ru.cut = ru.turnStatus == "interrupted"
	return engine.Outcome{}, false
}

// crashErr is the CLI gone while the run needed it.
type crashErr struct{ msg string }

func (c *crashErr) Error() string { return c.msg }

// crashed describes the CLI's end: its exit status and stderr's tail.
func (ru *run) crashed(cause error) error {
	select {
	case <-ru.p.Done():
	case <-time.After(2 * time.Second):
	}
	msg := "Codex exited"
	if code := ru.p.ExitCode(); code >= 0 {
		msg += " with status " + strconv.Itoa(code)
	} else if cause != nil {
		msg = "Codex stopped answering: " + cause.Error()
	}
	if tail := ru.p.StderrTail(stderrTail); tail != "" {
		msg += ": " + words.OneLine(tail)
	}
	return &crashErr{msg: msg + "; resume the task to continue its thread"}
}

func (ru *run) stopped() engine.Outcome { return engine.Outcome{Status: engine.Stopped, Turn: ru.turn} }

// stopOrPause ends the run after err: stopped when the context ended,
// else paused with the reason (a crash of the CLI quotes its stderr).
func (ru *run) stopOrPause(ctx context.Context, err error) engine.Outcome {
	if ctx.Err() != nil {
		return ru.stopped()
	}
	reason := err.Error()
	var ce *crashErr
	if !errors.As(err, &ce) {
		reason = "codex engine: " + reason
	}
	ru.log.Warn("pausing the task", "err", err)
	return engine.Outcome{Status: engine.Paused, Reason: reason, Turn: ru.turn}
}

// commit stores a step; after the run's context ended it still gets a
// bounded chance, so the step in flight is not lost.
func (ru *run) commit(ctx context.Context, s engine.Step) error {
	if ctx.Err() != nil {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
		defer cancel()
		ctx = c
	}
	t, err := ru.h.Commit(ctx, s)
	if err != nil {
		return err
	}
	ru.latest = t
	return engine.StepLearnings(ctx, ru.h, s, t.Tags)
}

// modelName is the model for the task, "" for the CLI's choice.
func (ru *run) modelName() string {
	if ru.e.o.Model != nil {
		return ru.e.o.Model(ru.latest)
	}
	return ""
}
