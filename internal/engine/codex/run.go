package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// midTurnPoll is how often the inbox is read during a turn under a Host
// that does not signal arrivals (engine.Arrivals).
const midTurnPoll = time.Second

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, r engine.Run) engine.Outcome {
	turns, out, stop := extproc.Begin(ctx, r, Name, e.Ready)
	if stop {
		return out
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
	p, err := extproc.StartRun(ctx, extproc.Launch{
		Run: r, Args: e.args(e.Path(), r.Task), Env: e.env(r.Task, r.Dir, r.Env),
		Launcher: e.o.Launcher, State: filepath.Dir(home), // the CLI keeps its threads and logs in its CODEX_HOME
		Label: "codex (" + string(r.Task.ID) + ")",
	})
	if err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("starting Codex: %v", err)}
	}
	defer p.Stop()
	log := e.log.With("task_id", r.Task.ID)
	ru := &run{e: e, r: r, h: r.Host, p: p, log: log, latest: r.Task, turn: turns,
		out: extproc.Read[msg](p, log), pending: map[int64]pending{}, calls: map[string]pendingCall{},
		inflight: map[int64]bool{}, changes: extproc.NewChanges(r.Dir, log)}
	ru.changes.Take(ctx)
	out = ru.start(ctx)
	if out.Status == "" {
		out = ru.loop(ctx)
	}
	p.Stop()
	ru.out.Join()
	return out
}

// answerPending applies the user's reply to a widening the task asked
// them about (the interactive strategy): the reply is the last message
// from the user waiting for the task; the widening is made or dropped
// before the run's first turn, whose sandbox follows. The message itself
// still reaches the agent at the boundary.
func (e *Engine) answerPending(ctx context.Context, r engine.Run, turn int) (task.Task, engine.Outcome, bool) {
	step, err := extproc.AnswerStep(ctx, r.Host, r.Task.Manifest, e.o.Recovery, turn)
	if err != nil {
		return r.Task, engine.Outcome{Status: engine.Paused, Reason: "codex engine: reading the task's messages: " + err.Error()}, true
	}
	if step == nil {
		return r.Task, engine.Outcome{}, false
	}
	t, err := r.Host.Commit(ctx, *step)
	if err != nil {
		if ctx.Err() != nil {
			return r.Task, engine.Outcome{Status: engine.Stopped}, true
		}
		return r.Task, engine.Outcome{Status: engine.Paused, Reason: "codex engine: " + err.Error()}, true
	}
	if t.ID == "" {
		t = r.Task
		t.Manifest = step.Manifest
	}
	return t, engine.Outcome{}, false
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
	out     *extproc.Reader[msg]
	changes *extproc.Changes

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
			return ru.finish(ctx, engine.Waiting, q)
		}
		out, sent, stop := ru.boundary(ctx, first)
		if stop {
			return out
		}
		if !sent {
			summary := words.Or(strings.TrimSpace(ru.lastText), "Codex ended its turn.")
			return ru.finish(ctx, engine.Completed, summary)
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
			return ru.finish(ctx, engine.Failed, reason)
		}
	}
}

// boundary takes the injections waiting for the task: a pause ends the
// run; other messages start the next turn, their receipt committed once
// the CLI accepted it. The first boundary of a run sends the task (a new
// thread) or a note to continue (a resumed one) when nothing else waits.
func (ru *run) boundary(ctx context.Context, first bool) (out engine.Outcome, sent, stop bool) {
	ru.waiting = false
	var taken func(int64) bool
	if first && ru.resumed {
		seen, read := "", false
		taken = func(id int64) bool { // the CLI took it; only its receipt was lost
			if !read {
				seen, read = ru.rollout(), true
			}
			return extproc.Delivered(seen, id)
		}
	}
	in, err := extproc.TakeInbox(ctx, ru.h, &ru.latest, taken)
	if err != nil {
		return ru.stopOrPause(ctx, err), false, true
	}
	if out, stop, err := in.Acknowledge(ctx, ru.turn, ru.h.Now(), ru.commit); stop {
		if err != nil {
			return ru.stopOrPause(ctx, err), false, true
		}
		return out, false, true
	}
	shown := in.Shown
	intro := ru.retryNote
	ru.retryNote = ""
	if first {
		switch {
		case !ru.resumed:
			intro = taskPrompt(ru.r.Task)
		case len(shown) == 0 && intro == "":
			intro = engine.Note(extproc.ResumeNote)
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

// startTurn starts a turn (turn/start) and commits its input with the
// injections' receipt once the CLI answered it.
func (ru *run) startTurn(ctx context.Context, intro string, injs []inject.Injection) error {
	text := extproc.Message(intro, injs)
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
	return ru.commit(ctx, extproc.UserStep(ru.turn, text, injs, ru.h.Now()))
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
		case m, ok := <-ru.out.C:
			if !ok {
				return ru.stopOrPause(ctx, ru.crashed(ru.out.Err())), true
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

// crashed describes the CLI's end: its exit status and stderr's tail.
func (ru *run) crashed(cause error) error { return ru.p.Exited("Codex", cause, "thread") }

func (ru *run) stopped() engine.Outcome { return engine.Outcome{Status: engine.Stopped, Turn: ru.turn} }

// stopOrPause ends the run after err: stopped when the context ended,
// else paused with the reason (a crash of the CLI quotes its stderr).
func (ru *run) stopOrPause(ctx context.Context, err error) engine.Outcome {
	return extproc.StopOrPause(ctx, ru.log, "codex engine: ", err, ru.turn)
}

// commit stores a step (extproc.Commit).
func (ru *run) commit(ctx context.Context, s engine.Step) error {
	return extproc.Commit(ctx, ru.h, s, &ru.latest)
}

// modelName is the model for the task, "" for the CLI's choice.
func (ru *run) modelName() string {
	if ru.e.o.Model != nil {
		return ru.e.o.Model(ru.latest)
	}
	return ""
}

// finish ends the run with status and reason (extproc.Finish).
func (ru *run) finish(ctx context.Context, status engine.Status, reason string) engine.Outcome {
	return extproc.Finish(ctx, ru.turn, status, reason, ru.commit, ru.stopOrPause)
}
