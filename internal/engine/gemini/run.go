package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// retryNote is the prompt after a permission denial was recovered from.
const retryNote = "Your sandbox manifest was widened to allow what was refused (%s). Try it again and continue."

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, r engine.Run) engine.Outcome {
	turns, out, stop := extproc.Begin(ctx, r, Name, e.Ready)
	if stop {
		return out
	}
	if err := e.prepareHome(r.Task); err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: "gemini engine: " + err.Error()}
	}
	file := e.sessionFile(r.Task.ID)
	log := e.log.With("task_id", r.Task.ID)
	ru := &run{e: e, r: r, h: r.Host, log: log, resumed: file != "", latest: r.Task, turn: turns, changes: extproc.NewChanges(r.Dir, log)}
	if file != "" {
		ru.seen = readFile(file)
	}
	ru.changes.Take(ctx)
	if out, stop := ru.answerPending(ctx); stop {
		return out
	}
	return ru.loop(ctx)
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
	e   *Engine
	r   engine.Run
	h   engine.Host
	log *slog.Logger

	changes *extproc.Changes

	latest  task.Task
	resumed bool   // the session existed when the run began
	seen    string // the session file at the start of a resumed run
	started bool   // a turn's process ran in this run: the session exists

	turn      int // model calls so far (the assistant messages stored)
	inCall    bool
	turnStart time.Time
	text      strings.Builder // the assistant text of the model call in progress
	parts     []llm.Part      // the assistant message in progress
	calls     map[string]pendingCall
	cliModel  string
	cut       bool   // the turn was ended by the engine (urgent message, pause)
	retry     string // a denial was recovered from: the next turn says so
	last      *line  // the turn's result line, nil when none came
	lastText  string // the turn's last assistant text
	crashErr  error  // why a turn without a result ended
	lost      bool   // the CLI could not resume the session
	retried   bool   // a new session was started after a lost one
	carry     string // a prompt the lost session did not take
	denials   []event.PermissionDenied
}

func (ru *run) loop(ctx context.Context) engine.Outcome {
	first := true
	for {
		if ctx.Err() != nil {
			return ru.stopped()
		}
		prompt, injs, out, stop := ru.boundary(ctx, first)
		if stop {
			return out
		}
		if prompt == "" {
			summary := "Gemini CLI ended its turn."
			summary = words.Or(strings.TrimSpace(ru.lastText), summary)
			return ru.finish(ctx, engine.Completed, summary)
		}
		first = false
		if out, stop := ru.runTurn(ctx, prompt, injs); stop {
			return out
		}
		if ru.lost {
			// The CLI has no such session for this worktree: a new one
			// starts with the task, and what this prompt carried.
			ru.log.Warn("the CLI could not resume the task's session; starting a new one", "err", ru.crashErr)
			ru.lost, ru.resumed, ru.started, ru.carry = false, false, false, prompt
			first = true
			continue
		}
		if ru.cut {
			continue // the boundary delivers what ended the turn
		}
		if out, stop := ru.afterTurn(ctx); stop {
			return out
		}
	}
}

// afterTurn judges a turn that ended by itself: its result's status, or no
// result at all (the CLI was stopped or crashed).
func (ru *run) afterTurn(ctx context.Context) (engine.Outcome, bool) {
	if ru.last == nil {
		return ru.stopOrPause(ctx, ru.crashErr), true
	}
	if ru.last.Status != "success" {
		reason := "Gemini CLI reported an error"
		if ru.last.Error != nil && ru.last.Error.Message != "" {
			reason += ": " + ru.last.Error.Message
		}
		reason = words.Clip(reason, 1000)
		return ru.finish(ctx, engine.Failed, reason), true
	}
	return ru.recoverDenials(ctx)
}

// boundary takes the injections waiting for the task: a pause ends the
// run; other messages are the next turn's prompt (with the task itself,
// or a note to continue, on a run's first turn). An empty prompt means
// nothing waits.
func (ru *run) boundary(ctx context.Context, first bool) (prompt string, shown []inject.Injection, out engine.Outcome, stop bool) {
	var taken func(int64) bool
	if first && ru.resumed {
		// The CLI took them; only their receipt was lost.
		taken = func(id int64) bool { return extproc.Delivered(ru.seen, id) }
	}
	in, err := extproc.TakeInbox(ctx, ru.h, &ru.latest, taken)
	if err != nil {
		return "", nil, ru.stopOrPause(ctx, err), true
	}
	if out, stop, err := in.Acknowledge(ctx, ru.turn, ru.h.Now(), ru.commit); stop {
		if err != nil {
			return "", nil, ru.stopOrPause(ctx, err), true
		}
		return "", nil, out, true
	}
	shown = in.Shown
	var parts []string
	switch {
	case first && !ru.resumed:
		parts = append(parts, taskPrompt(ru.r.Task))
		if ru.carry != "" {
			parts = append(parts, ru.carry)
			ru.carry = ""
		}
	case first && len(shown) == 0 && ru.retry == "":
		parts = append(parts, engine.Note(extproc.ResumeNote))
	}
	if ru.retry != "" {
		parts = append(parts, engine.Note(fmt.Sprintf(retryNote, ru.retry)))
		ru.retry = ""
	}
	if len(parts) == 0 && len(shown) == 0 {
		return "", nil, engine.Outcome{}, false
	}
	if s := ru.h.Allow(ctx); s != nil {
		return "", nil, engine.Outcome{Status: s.Status, Reason: s.Reason, Turn: ru.turn}, true
	}
	return extproc.Message(strings.Join(parts, "\n\n"), shown), shown, engine.Outcome{}, false
}

// runTurn runs one turn: the CLI's process with prompt, read to its end.
// The prompt and the injections' receipt are committed once the process
// started with it. An urgent message or a pause ends the process.
func (ru *run) runTurn(ctx context.Context, prompt string, injs []inject.Injection) (engine.Outcome, bool) {
	ru.cut, ru.last, ru.crashErr, ru.lastText = false, nil, nil, ""
	ru.calls = map[string]pendingCall{}
	r := ru.r
	resume := ru.resumed || ru.started
	if err := ru.e.writePolicy(ru.latest); err != nil {
		return ru.stopOrPause(ctx, err), true
	}
	p, err := extproc.StartRun(ctx, extproc.Launch{
		Run: r, Args: ru.e.args(ru.e.Path(), ru.latest, prompt, resume), Env: ru.e.env(r.Task, r.Dir, r.Env),
		Launcher: ru.e.o.Launcher, State: ru.e.Home(r.Task.ID), // the CLI keeps its session and settings in its home
		Label: "gemini (" + string(r.Task.ID) + ")",
	})
	if err != nil {
		return ru.stopOrPause(ctx, fmt.Errorf("starting Gemini CLI: %w", err)), true
	}
	defer p.Stop()
	ru.started = true
	_ = p.CloseStdin() // -p appends what stdin holds: nothing
	if err := ru.commit(ctx, extproc.UserStep(ru.turn, prompt, injs, ru.h.Now())); err != nil {
		return ru.stopOrPause(ctx, err), true
	}
	lines := extproc.Read[line](p, ru.log) // joined below
	out, stop := ru.await(ctx, p, lines.C)
	p.Stop()
	lines.Join()
	if !stop && ru.last == nil && !ru.cut {
		ru.crashErr = ru.crashed(p, lines.Err())
		ru.lost = resume && !ru.retried && strings.Contains(p.StderrTail(extproc.StderrTail), "Error resuming session")
		ru.retried = ru.retried || ru.lost
	}
	return out, stop
}

// await reads the turn's lines until the process ends; an urgent message
// or a pause ends the process first.
func (ru *run) await(ctx context.Context, p *extproc.Proc, lines <-chan line) (engine.Outcome, bool) {
	for {
		select {
		case <-ctx.Done():
			ru.abandonCall(context.WithoutCancel(ctx))
			return ru.stopped(), true
		case <-ru.h.Interrupts():
			if !ru.cut && ru.h.UrgentWaiting(ctx) {
				ru.cut = true
				p.Stop() // the group ends; the reader reaches EOF
			}
		case l, ok := <-lines:
			if !ok {
				if ru.cut {
					if err := ru.interrupted(ctx); err != nil {
						return ru.stopOrPause(ctx, err), true
					}
				}
				return engine.Outcome{}, false
			}
			if ru.cut {
				continue // what the CLI still wrote before it ended
			}
			if err := ru.handle(ctx, l); err != nil {
				return ru.stopOrPause(ctx, err), true
			}
		}
	}
}

func (ru *run) stopped() engine.Outcome {
	return engine.Outcome{Status: engine.Stopped, Turn: ru.turn}
}

// crashed describes a turn's process that ended without a result: its exit
// status and stderr's tail. Without a result the turn did not finish, even
// when the status is 0.
func (ru *run) crashed(p *extproc.Proc, cause error) error {
	p.WaitExit()
	msg := "Gemini CLI ended its turn without a result"
	if code := p.ExitCode(); code >= 0 {
		msg += " (exit status " + strconv.Itoa(code) + ")"
	} else if cause != nil {
		msg += ": " + cause.Error()
	}
	return p.Crashed(msg, "session")
}

// stopOrPause ends the run after err: stopped when the context ended,
// else paused with the reason.
func (ru *run) stopOrPause(ctx context.Context, err error) engine.Outcome {
	if err == nil {
		err = errors.New("Gemini CLI ended its turn without a result")
	}
	return extproc.StopOrPause(ctx, ru.log, "gemini engine: ", err, ru.turn)
}

// commit stores a step (extproc.Commit).
func (ru *run) commit(ctx context.Context, s engine.Step) error {
	return extproc.Commit(ctx, ru.h, s, &ru.latest)
}

// taskPrompt is the first prompt of a new session.
func taskPrompt(t task.Task) string { return extproc.TaskPrompt(t) + "\n\n" + engine.LearningNote }

// finish ends the run with status and reason (extproc.Finish).
func (ru *run) finish(ctx context.Context, status engine.Status, reason string) engine.Outcome {
	return extproc.Finish(ctx, ru.turn, status, reason, ru.commit, ru.stopOrPause)
}
