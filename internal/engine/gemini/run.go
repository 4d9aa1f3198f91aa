package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// resumeNote is the prompt of a resumed session's first turn when no
// message waits.
const resumeNote = "This session was stopped and now continues (a pause, or a restart of Neuraphage or of the CLI). " +
	"Continue the task where you left off; if it is done, say so and stop."

// retryNote is the prompt after a permission denial was recovered from.
const retryNote = "Your sandbox manifest was widened to allow what was refused (%s). Try it again and continue."

// finalTimeout bounds the commits a run makes after its context ended.
const finalTimeout = 10 * time.Second

// stderrTail is how much of the CLI's stderr a crash's reason quotes.
const stderrTail = 600

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
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("gemini engine: loading the conversation: %v", err)}
	}
	turns := 0
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			turns++
		}
	}
	if err := e.prepareHome(r.Task); err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: "gemini engine: " + err.Error()}
	}
	file := e.sessionFile(r.Task.ID)
	ru := &run{e: e, r: r, h: r.Host, log: e.log.With("task_id", r.Task.ID), resumed: file != "", latest: r.Task, turn: turns}
	if file != "" {
		ru.seen = readFile(file)
	}
	if snap, err := git.TakeSnapshot(ctx, r.Dir); err == nil {
		ru.snap, ru.snapTaken = snap, true
	}
	if out, stop := ru.answerPending(ctx); stop {
		return out
	}
	return ru.loop(ctx)
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

	snap      git.Snapshot
	snapTaken bool
	named     map[string]bool
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
			if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Events: []event.Payload{event.Completed{Turn: ru.turn, Summary: summary}}}); err != nil {
				return ru.stopOrPause(ctx, err)
			}
			return engine.Outcome{Status: engine.Completed, Reason: summary, Turn: ru.turn}
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
		if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Events: []event.Payload{event.Failed{Turn: ru.turn, Reason: reason}}}); err != nil {
			return ru.stopOrPause(ctx, err), true
		}
		return engine.Outcome{Status: engine.Failed, Reason: reason, Turn: ru.turn}, true
	}
	return ru.recoverDenials(ctx)
}

// boundary takes the injections waiting for the task: a pause ends the
// run; other messages are the next turn's prompt (with the task itself,
// or a note to continue, on a run's first turn). An empty prompt means
// nothing waits.
func (ru *run) boundary(ctx context.Context, first bool) (prompt string, shown []inject.Injection, out engine.Outcome, stop bool) {
	drain(ru.h.Interrupts())
	t, err := ru.h.Prepare(ctx)
	if err != nil {
		return "", nil, ru.stopOrPause(ctx, fmt.Errorf("preparing the task's messages: %w", err)), true
	}
	if t.ID != "" {
		ru.latest = t
	}
	drain(ru.h.Interrupts())
	inbox, err := ru.h.Inbox(ctx)
	if err != nil {
		return "", nil, ru.stopOrPause(ctx, fmt.Errorf("reading the task's messages: %w", err)), true
	}
	var pauses, taken []inject.Injection
	for _, inj := range inbox {
		switch {
		case inj.Kind == inject.Pause:
			pauses = append(pauses, inj)
		case first && ru.resumed && delivered(ru.seen, inj.ID):
			taken = append(taken, inj) // the CLI took it; only its receipt was lost
		default:
			shown = append(shown, inj)
		}
	}
	if len(taken) > 0 {
		if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Delivered: taken, Events: []event.Payload{receipt(ru.turn, taken, ru.h.Now())}}); err != nil {
			return "", nil, ru.stopOrPause(ctx, err), true
		}
	}
	if len(pauses) > 0 {
		reason := words.Or(strings.TrimSpace(pauses[len(pauses)-1].Text), "paused")
		if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Delivered: pauses, Events: []event.Payload{receipt(ru.turn, pauses, ru.h.Now())}}); err != nil {
			return "", nil, ru.stopOrPause(ctx, err), true
		}
		return "", nil, engine.Outcome{Status: engine.Paused, Reason: reason, Turn: ru.turn}, true
	}
	var parts []string
	switch {
	case first && !ru.resumed:
		parts = append(parts, taskPrompt(ru.r.Task))
		if ru.carry != "" {
			parts = append(parts, ru.carry)
			ru.carry = ""
		}
	case first && len(shown) == 0 && ru.retry == "":
		parts = append(parts, engine.Note(resumeNote))
	}
	if ru.retry != "" {
		parts = append(parts, engine.Note(fmt.Sprintf(retryNote, ru.retry)))
		ru.retry = ""
	}
	for _, inj := range shown {
		parts = append(parts, engine.Render(inj))
	}
	if len(shown) > 0 {
		parts = append(parts, marker(shown))
	}
	if len(parts) == 0 {
		return "", nil, engine.Outcome{}, false
	}
	if s := ru.h.Allow(ctx); s != nil {
		return "", nil, engine.Outcome{Status: s.Status, Reason: s.Reason, Turn: ru.turn}, true
	}
	return strings.Join(parts, "\n\n"), shown, engine.Outcome{}, false
}

// runTurn runs one turn: the CLI's process with prompt, read to its end.
// The prompt and the injections' receipt are committed once the process
// started with it. An urgent message or a pause ends the process.
func (ru *run) runTurn(ctx context.Context, prompt string, injs []inject.Injection) (engine.Outcome, bool) {
	ru.cut, ru.last, ru.crashErr, ru.lastText = false, nil, nil, ""
	ru.calls = map[string]pendingCall{}
	r := ru.r
	launcher := ru.e.o.Launcher
	if launcher != nil {
		// The CLI keeps its session and settings in its home.
		l := *launcher
		l.Write = append(append([]string(nil), l.Write...), ru.e.Home(r.Task.ID))
		launcher = &l
	}
	resume := ru.resumed || ru.started
	if err := ru.e.writePolicy(ru.latest); err != nil {
		return ru.stopOrPause(ctx, err), true
	}
	p, err := extproc.Start(ctx, extproc.Spec{
		Args: ru.e.args(ru.e.resolved(), ru.latest, prompt, resume), Dir: r.Dir, Env: ru.e.env(r.Task, r.Dir, r.Env),
		Launcher: launcher, Task: sandbox.Task{Dir: r.Dir, TempDir: tempDir(r.Env), Repo: r.Task.Repo, Branch: r.Branch},
		Label: "gemini (" + string(r.Task.ID) + ")",
	})
	if err != nil {
		return ru.stopOrPause(ctx, fmt.Errorf("starting Gemini CLI: %w", err)), true
	}
	defer p.Stop()
	ru.started = true
	_ = p.CloseStdin() // -p appends what stdin holds: nothing
	step := engine.Step{Turn: ru.turn, Messages: []llm.Message{llm.UserText(prompt)}, Delivered: injs}
	if len(injs) > 0 {
		step.Events = []event.Payload{receipt(ru.turn+1, injs, ru.h.Now())}
	}
	if err := ru.commit(ctx, step); err != nil {
		return ru.stopOrPause(ctx, err), true
	}
	lines := make(chan line)
	readErr := make(chan error, 1)
	go func() { // owned by runTurn; ends at EOF, which p.Stop brings about
		readErr <- extproc.ReadLines(p.Stdout(), ru.log, func(b []byte) error {
			var l line
			if err := json.Unmarshal(b, &l); err != nil {
				ru.log.Warn("skipping a line from the CLI that does not parse", "err", err, "start", words.Clip(string(b), 120))
				return nil
			}
			lines <- l // drained below
			return nil
		})
		close(lines)
	}()
	out, stop := ru.await(ctx, p, lines)
	p.Stop()
	for range lines { // join the reader
	}
	if !stop && ru.last == nil && !ru.cut {
		ru.crashErr = ru.crashed(p, <-readErr)
		ru.lost = resume && !ru.retried && strings.Contains(p.StderrTail(stderrTail), "Error resuming session")
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

// crashErr is the CLI gone without a result.
type crashErr struct{ msg string }

func (c *crashErr) Error() string { return c.msg }

// crashed describes a turn's process that ended without a result: its exit
// status and stderr's tail. Without a result the turn did not finish, even
// when the status is 0.
func (ru *run) crashed(p *extproc.Proc, cause error) error {
	select {
	case <-p.Done():
	case <-time.After(2 * time.Second):
	}
	msg := "Gemini CLI ended its turn without a result"
	if code := p.ExitCode(); code >= 0 {
		msg += " (exit status " + strconv.Itoa(code) + ")"
	} else if cause != nil {
		msg += ": " + cause.Error()
	}
	if tail := p.StderrTail(stderrTail); tail != "" {
		msg += ": " + words.OneLine(tail)
	}
	return &crashErr{msg: msg + "; resume the task to continue its session"}
}

// stopOrPause ends the run after err: stopped when the context ended,
// else paused with the reason.
func (ru *run) stopOrPause(ctx context.Context, err error) engine.Outcome {
	if ctx.Err() != nil {
		return ru.stopped()
	}
	if err == nil {
		err = errors.New("Gemini CLI ended its turn without a result")
	}
	reason := err.Error()
	var ce *crashErr
	if !errors.As(err, &ce) {
		reason = "gemini engine: " + reason
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

func receipt(turn int, injs []inject.Injection, now time.Time) event.Delivered {
	d := event.Delivered{Turn: turn}
	for _, inj := range injs {
		d.InjectionIDs = append(d.InjectionIDs, inj.ID)
		d.Kinds = append(d.Kinds, string(inj.Kind))
		d.LatencyMs = append(d.LatencyMs, max(0, now.Sub(inj.CreatedAt).Milliseconds()))
	}
	return d
}

func drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// taskPrompt is the first prompt of a new session.
func taskPrompt(t task.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your task (%s):\n\n%s\n", t.ID, engine.Neutralize(t.Description))
	if strings.TrimSpace(t.Context) != "" {
		fmt.Fprintf(&b, "\nContext:\n\n%s\n", engine.Neutralize(t.Context))
	}
	b.WriteString("\nWork in the current directory (a git worktree of your own). When the task is done, reply with a short summary of what you did and stop.\n\n" + engine.LearningNote)
	return b.String()
}

// marker is the delivery marker of a prompt carrying injs: found in the
// session's file, it says the CLI took them.
func marker(injs []inject.Injection) string {
	ids := make([]string, len(injs))
	for i, inj := range injs {
		ids[i] = strconv.FormatInt(inj.ID, 10)
	}
	return "[neuraphage-delivery:" + strings.Join(ids, ",") + "]"
}

// delivered reports whether the session file holds a delivery marker
// naming injection id.
func delivered(session string, id int64) bool {
	want := strconv.FormatInt(id, 10)
	for rest := session; ; {
		_, after, ok := strings.Cut(rest, "[neuraphage-delivery:")
		if !ok {
			return false
		}
		ids, tail, ok := strings.Cut(after, "]")
		if !ok {
			return false
		}
		if slices.Contains(strings.Split(ids, ","), want) {
			return true
		}
		rest = tail
	}
}
