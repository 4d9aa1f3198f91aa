package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// midTurnPoll is how often the inbox is read while one of the CLI's tools
// runs, under a Host that does not signal arrivals (engine.Arrivals): a
// message that arrives then reaches the model in the same turn.
const midTurnPoll = time.Second

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, r engine.Run) engine.Outcome {
	turns, out, stop := extproc.Begin(ctx, r, Name, e.Ready)
	if stop {
		return out
	}
	cfgDir := e.ConfigDir(r.Task.ID)
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("making the CLI's config directory: %v", err)}
	}
	e.linkLogin(cfgDir)
	if err := e.writeKey(r.Task.ID); err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: "claude engine: " + err.Error()}
	}
	log := e.log.With("task_id", r.Task.ID)
	ru := &run{e: e, r: r, h: r.Host, log: log, latest: r.Task, turn: turns, calls: map[string]pendingCall{},
		changes: extproc.NewChanges(r.Dir, log)}
	if out, stop := ru.answerPending(ctx); stop {
		return out
	}
	for {
		out := ru.session(ctx, cfgDir)
		if !ru.restart || ctx.Err() != nil {
			return out
		}
		// A recovered permission denial widened the manifest: the CLI
		// starts again with its flags and resumes the session.
		ru.restart = false
	}
}

// session runs one CLI process: started with the task's session (preset,
// or resumed when the CLI has stored it), until the run's outcome or a
// restart.
func (ru *run) session(ctx context.Context, cfgDir string) engine.Outcome {
	e, r := ru.e, ru.r
	transcript := e.transcript(r.Task.ID)
	resume := transcript != ""
	p, err := extproc.StartRun(ctx, extproc.Launch{
		Run: r, Args: e.args(e.Path(), ru.latest, resume), Env: e.env(r.Task, r.Dir, r.Env),
		Launcher: e.o.Launcher, State: cfgDir, // the CLI keeps its session in its config directory
		Label: "claude (" + string(r.Task.ID) + ")",
	})
	if err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("starting Claude Code: %v", err), Turn: ru.turn}
	}
	defer p.Stop()
	ru.p, ru.resumed, ru.seen = p, resume, ""
	ru.costSeen, ru.inputs, ru.msgID, ru.interrupt = 0, 0, "", ""
	clear(ru.calls)
	if resume {
		ru.seen = readFile(transcript)
	}
	ru.changes.Take(ctx)
	ru.out = extproc.Read[line](p, ru.log) // the session joins it after the loop
	out := ru.loop(ctx)
	p.Stop()
	ru.out.Join()
	return out
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// pendingCall is a tool call the CLI is running.
type pendingCall struct {
	name  string
	input json.RawMessage
	start time.Time
}

// run is one run of one task.
type run struct {
	e       *Engine
	r       engine.Run
	h       engine.Host
	p       *extproc.Proc
	log     *slog.Logger
	out     *extproc.Reader[line]
	changes *extproc.Changes

	latest  task.Task
	resumed bool   // the session existed when the run began
	seen    string // the transcript at the start of a resumed run

	turn      int    // model calls so far (the assistant messages stored)
	msgID     string // the model call in progress
	turnStart time.Time
	calls     map[string]pendingCall
	costSeen  float64 // the CLI process's total_cost_usd so far
	inputs    int     // user lines sent whose turn has not ended
	sentMid   bool    // messages were delivered in this turn
	interrupt string  // the id of the interrupt in flight, "" for none
	cut       bool    // the turn was interrupted
	last      line    // the last result
	reqs      int
	waiting   bool   // a message may wait undelivered (an arrival since the inbox was read)
	cliModel  string // the model the CLI said it uses (system/init)
	restart   bool   // start the CLI again (a widened manifest)
	note      string // the first line of the next session, "" for resumeNote
	ask       string // a question for the user that ends the run
}

func (ru *run) loop(ctx context.Context) engine.Outcome {
	first := true
	for {
		if ctx.Err() != nil {
			return ru.stopped()
		}
		out, sent, stop := ru.boundary(ctx, first)
		if stop {
			return out
		}
		if !sent {
			// Nothing waits for the task and its last turn succeeded.
			summary := strings.TrimSpace(ru.last.Result)
			if summary == "" {
				summary = "Claude Code ended its turn."
			}
			return ru.finish(ctx, engine.Completed, summary)
		}
		first = false
		if out, stop := ru.await(ctx); stop {
			return out
		}
		if ru.cut {
			continue // the boundary delivers what interrupted the turn
		}
		if ru.restart {
			return engine.Outcome{Turn: ru.turn} // Run starts the CLI again
		}
		if !ru.last.IsError && ru.ask == "" {
			// A reply that ends asking the user (QuestionMarker) waits.
			ru.ask = question(ru.last.Result)
		}
		if q := ru.ask; q != "" {
			ru.ask = ""
			return ru.finish(ctx, engine.Waiting, q)
		}
		if ru.last.IsError {
			reason := ru.failure()
			return ru.finish(ctx, engine.Failed, reason)
		}
	}
}

// failure is the reason of a failed result.
func (ru *run) failure() string {
	l := ru.last
	parts := []string{}
	if s := strings.TrimSpace(l.Result); s != "" {
		parts = append(parts, s)
	}
	parts = append(parts, l.Errors...)
	if len(parts) == 0 {
		parts = append(parts, "Claude Code reported an error ("+words.Or(l.Subtype, l.TerminalReason)+")")
	}
	return words.Clip(strings.Join(parts, "; "), 1000)
}

// boundary takes the injections waiting for the task: a pause ends the
// run; other messages go to the CLI as one user line, their receipt
// committed once the pipe took it. On the first boundary of a run it
// sends the task (a new session) or a note to continue (a resumed one)
// when nothing else waits. sent reports whether a line went out.
func (ru *run) boundary(ctx context.Context, first bool) (out engine.Outcome, sent, stop bool) {
	ru.waiting = false
	var taken func(int64) bool
	if first && ru.resumed {
		// The CLI took them before the daemon stopped.
		taken = func(id int64) bool { return extproc.Delivered(ru.seen, id) }
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
	var intro string
	if first {
		if ru.resumed {
			if len(shown) == 0 {
				intro = engine.Note(words.Or(ru.note, extproc.ResumeNote))
				ru.note = ""
			}
		} else {
			intro = extproc.TaskPrompt(ru.r.Task)
		}
	}
	if intro == "" && len(shown) == 0 {
		return engine.Outcome{}, false, false
	}
	if stop := ru.h.Allow(ctx); stop != nil {
		return engine.Outcome{Status: stop.Status, Reason: stop.Reason, Turn: ru.turn}, false, true
	}
	if err := ru.send(ctx, intro, shown); err != nil {
		return ru.stopOrPause(ctx, err), false, true
	}
	return engine.Outcome{}, true, false
}

// send writes one user line (intro, then the injections rendered) and
// commits it with the injections' receipt once the CLI's stdin took it.
func (ru *run) send(ctx context.Context, intro string, injs []inject.Injection) error {
	text := extproc.Message(intro, injs)
	if err := ru.p.WriteLine(newUserLine(text)); err != nil {
		return ru.crashed(err)
	}
	ru.inputs++
	return ru.commit(ctx, extproc.UserStep(ru.turn, text, injs, ru.h.Now()))
}

// crashed describes the CLI's end: its exit status and stderr's tail.
func (ru *run) crashed(cause error) error { return ru.p.Exited("Claude Code", cause, "session") }

// await reads the CLI's output until the turn's result. It interrupts the
// turn when an urgent message arrives, and hands non-urgent ones to the CLI
// while one of its tools runs.
func (ru *run) await(ctx context.Context) (engine.Outcome, bool) {
	ru.cut = false
	ru.sentMid = false
	var arrivals <-chan struct{}
	var tick <-chan time.Time
	if a, ok := ru.h.(engine.Arrivals); ok {
		arrivals = a.Arrivals()
	} else {
		poll := time.NewTicker(midTurnPoll)
		defer poll.Stop()
		tick = poll.C
	}
	for {
		select {
		case <-ctx.Done():
			return ru.stopped(), true
		case <-ru.h.Interrupts():
			if ru.interrupt == "" && ru.h.UrgentWaiting(ctx) {
				ru.reqs++
				ru.interrupt = fmt.Sprintf("neuraphage-interrupt-%d", ru.reqs)
				if err := ru.p.WriteLine(interruptRequest(ru.interrupt)); err != nil {
					return ru.stopOrPause(ctx, ru.crashed(err)), true
				}
			}
		case <-arrivals:
			ru.waiting = true
			if err := ru.midTurn(ctx); err != nil {
				return ru.stopOrPause(ctx, err), true
			}
		case <-tick:
			ru.waiting = true
			if err := ru.midTurn(ctx); err != nil {
				return ru.stopOrPause(ctx, err), true
			}
		case l, ok := <-ru.out.C:
			if !ok {
				return ru.stopOrPause(ctx, ru.crashed(ru.out.Err())), true
			}
			done, err := ru.handle(ctx, l)
			if err == nil && !done {
				err = ru.midTurn(ctx) // a tool may have started
			}
			if err != nil {
				return ru.stopOrPause(ctx, err), true
			}
			if done {
				return engine.Outcome{}, false
			}
		}
	}
}

// midTurn hands waiting messages to the CLI when one may be waiting and
// one of the CLI's tools runs.
func (ru *run) midTurn(ctx context.Context) error {
	if !ru.waiting || len(ru.calls) == 0 || ru.interrupt != "" {
		return nil
	}
	ru.waiting = false
	return ru.deliverMidTurn(ctx)
}

// deliverMidTurn sends the messages waiting (no pause, no request the
// boundary carries out) while a tool runs: the CLI adds them to the turn.
func (ru *run) deliverMidTurn(ctx context.Context) error {
	inbox, err := ru.h.Inbox(ctx)
	if err != nil {
		return fmt.Errorf("reading the task's messages: %w", err)
	}
	var shown []inject.Injection
	for _, inj := range inbox {
		if inj.Kind == inject.Pause {
			return nil // the boundary takes it, with the others in order
		}
		shown = append(shown, inj)
	}
	if len(shown) == 0 {
		return nil
	}
	ru.sentMid = true
	if err := ru.send(ctx, "", shown); err != nil {
		return err
	}
	ru.inputs-- // the CLI folds it into the turn in flight: no result of its own
	return nil
}

func (ru *run) stopped() engine.Outcome {
	return engine.Outcome{Status: engine.Stopped, Turn: ru.turn}
}

// stopOrPause ends the run after err: stopped when the context ended,
// else paused with the reason (a crash of the CLI quotes its stderr).
func (ru *run) stopOrPause(ctx context.Context, err error) engine.Outcome {
	return extproc.StopOrPause(ctx, ru.log, "claude engine: ", err, ru.turn)
}

// commit stores a step (extproc.Commit).
func (ru *run) commit(ctx context.Context, s engine.Step) error {
	return extproc.Commit(ctx, ru.h, s, &ru.latest)
}

// finish ends the run with status and reason (extproc.Finish).
func (ru *run) finish(ctx context.Context, status engine.Status, reason string) engine.Outcome {
	return extproc.Finish(ctx, ru.turn, status, reason, ru.commit, ru.stopOrPause)
}
