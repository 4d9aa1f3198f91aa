package claude

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

// resumeNote is the first line of a resumed session when no message waits.
const resumeNote = "This session was stopped and now continues (a pause, or a restart of Neuraphage or of the CLI). " +
	"Continue the task where you left off; if it is done, say so and stop."

// finalTimeout bounds the commits a run makes after its context ended.
const finalTimeout = 10 * time.Second

// stderrTail is how much of the CLI's stderr a crash's reason quotes.
const stderrTail = 600

// midTurnPoll is how often the inbox is read while one of the CLI's tools
// runs, under a Host that does not signal arrivals (engine.Arrivals): a
// message that arrives then reaches the model in the same turn.
const midTurnPoll = time.Second

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, r engine.Run) engine.Outcome {
	if err := e.Ready(); err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: err.Error()}
	}
	// The stored conversation: the Host commits after it, and the turns
	// count on from it.
	msgs, err := r.Host.Conversation(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return engine.Outcome{Status: engine.Stopped}
		}
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("claude engine: loading the conversation: %v", err)}
	}
	turns := 0
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			turns++
		}
	}
	cfgDir := e.ConfigDir(r.Task.ID)
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("making the CLI's config directory: %v", err)}
	}
	e.linkLogin(cfgDir)
	if err := e.writeKey(r.Task.ID); err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: "claude engine: " + err.Error()}
	}
	ru := &run{e: e, r: r, h: r.Host, log: e.log.With("task_id", r.Task.ID), latest: r.Task, turn: turns, calls: map[string]pendingCall{}}
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
	launcher := e.o.Launcher
	if launcher != nil {
		// The CLI keeps its session in its config directory.
		l := *launcher
		l.Write = append(append([]string(nil), l.Write...), cfgDir)
		launcher = &l
	}
	p, err := extproc.Start(ctx, extproc.Spec{
		Args: e.args(e.resolved(), ru.latest, resume), Dir: r.Dir, Env: e.env(r.Task, r.Dir, r.Env),
		Launcher: launcher, Task: sandbox.Task{Dir: r.Dir, TempDir: tempDir(r.Env), Repo: r.Task.Repo, Branch: r.Branch},
		Label: "claude (" + string(r.Task.ID) + ")",
	})
	if err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("starting Claude Code: %v", err), Turn: ru.turn}
	}
	defer p.Stop()
	ru.p, ru.resumed, ru.seen = p, resume, ""
	ru.lines, ru.readErr = make(chan line), make(chan error, 1)
	ru.costSeen, ru.inputs, ru.msgID, ru.interrupt = 0, 0, "", ""
	clear(ru.calls)
	if resume {
		ru.seen = readFile(transcript)
	}
	if snap, err := git.TakeSnapshot(ctx, r.Dir); err == nil {
		ru.snap, ru.snapTaken = snap, true
	}
	lines, readErr := ru.lines, ru.readErr
	go func() { // owned by the session; ends at EOF, which p.Stop brings about
		readErr <- extproc.ReadLines(p.Stdout(), ru.log, func(b []byte) error {
			var l line
			if err := json.Unmarshal(b, &l); err != nil {
				ru.log.Warn("skipping a line from the CLI that does not parse", "err", err, "start", words.Clip(string(b), 120))
				return nil
			}
			lines <- l // the session drains the channel after the loop
			return nil
		})
		close(lines)
	}()
	out := ru.loop(ctx)
	p.Stop()
	for range lines { // join the reader
	}
	return out
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
	e       *Engine
	r       engine.Run
	h       engine.Host
	p       *extproc.Proc
	log     *slog.Logger
	lines   chan line
	readErr chan error

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

	snap      git.Snapshot    // the worktree at the last turn end
	snapTaken bool            // snap is usable
	named     map[string]bool // files tool results named in this turn
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
		if ru.restart {
			return engine.Outcome{Turn: ru.turn} // Run starts the CLI again
		}
		if !ru.last.IsError && ru.ask == "" {
			// A reply that ends asking the user (QuestionMarker) waits.
			ru.ask = question(ru.last.Result)
		}
		if q := ru.ask; q != "" {
			ru.ask = ""
			if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Events: []event.Payload{event.NeedsInput{Turn: ru.turn, Question: q}}}); err != nil {
				return ru.stopOrPause(ctx, err)
			}
			return engine.Outcome{Status: engine.Waiting, Reason: q, Turn: ru.turn}
		}
		if ru.last.IsError {
			reason := ru.failure()
			if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Events: []event.Payload{event.Failed{Turn: ru.turn, Reason: reason}}}); err != nil {
				return ru.stopOrPause(ctx, err)
			}
			return engine.Outcome{Status: engine.Failed, Reason: reason, Turn: ru.turn}
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
	var pauses, shown, taken []inject.Injection
	for _, inj := range inbox {
		switch {
		case inj.Kind == inject.Pause:
			pauses = append(pauses, inj)
		case first && ru.resumed && delivered(ru.seen, inj.ID):
			// The CLI took it before the daemon stopped; only its
			// receipt was lost.
			taken = append(taken, inj)
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
		reason := strings.TrimSpace(pauses[len(pauses)-1].Text)
		if reason == "" {
			reason = "paused"
		}
		if err := ru.commit(ctx, engine.Step{Turn: ru.turn, Delivered: pauses, Events: []event.Payload{receipt(ru.turn, pauses, ru.h.Now())}}); err != nil {
			return ru.stopOrPause(ctx, err), false, true
		}
		return engine.Outcome{Status: engine.Paused, Reason: reason, Turn: ru.turn}, false, true
	}
	var intro string
	if first {
		if ru.resumed {
			if len(shown) == 0 {
				intro = engine.Note(words.Or(ru.note, resumeNote))
				ru.note = ""
			}
		} else {
			intro = taskPrompt(ru.r.Task)
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
	text := strings.Join(parts, "\n\n")
	if err := ru.p.WriteLine(newUserLine(text)); err != nil {
		return ru.crashed(err)
	}
	ru.inputs++
	step := engine.Step{Turn: ru.turn, Messages: []llm.Message{llm.UserText(text)}, Delivered: injs}
	if len(injs) > 0 {
		step.Events = []event.Payload{receipt(ru.turn+1, injs, ru.h.Now())}
	}
	return ru.commit(ctx, step)
}

// marker is the delivery marker of a line carrying injs: found in the
// session's transcript, it says the CLI took them. It holds no character
// a JSON encoder escapes, so it reads the same in the transcript's JSON.
func marker(injs []inject.Injection) string {
	ids := make([]string, len(injs))
	for i, inj := range injs {
		ids[i] = strconv.FormatInt(inj.ID, 10)
	}
	return "[neuraphage-delivery:" + strings.Join(ids, ",") + "]"
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
	msg := "Claude Code exited"
	if code := ru.p.ExitCode(); code >= 0 {
		msg += " with status " + strconv.Itoa(code)
	} else if cause != nil {
		msg = "Claude Code stopped answering: " + cause.Error()
	}
	if tail := ru.p.StderrTail(stderrTail); tail != "" {
		msg += ": " + words.OneLine(tail)
	}
	return &crashErr{msg: msg + "; resume the task to continue its session"}
}

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
		case l, ok := <-ru.lines:
			if !ok {
				err := <-ru.readErr
				ru.readErr <- err
				return ru.stopOrPause(ctx, ru.crashed(err)), true
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
	if ctx.Err() != nil {
		return ru.stopped()
	}
	reason := err.Error()
	var ce *crashErr
	if !errors.As(err, &ce) {
		reason = "claude engine: " + reason
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

// taskPrompt is the first user line of a new session.
func taskPrompt(t task.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your task (%s):\n\n%s\n", t.ID, engine.Neutralize(t.Description))
	if strings.TrimSpace(t.Context) != "" {
		fmt.Fprintf(&b, "\nContext:\n\n%s\n", engine.Neutralize(t.Context))
	}
	b.WriteString("\nWork in the current directory (a git worktree of your own). When the task is done, reply with a short summary of what you did and stop.")
	return b.String()
}

// delivered reports whether the transcript holds a delivery marker naming
// injection id.
func delivered(transcript string, id int64) bool {
	want := strconv.FormatInt(id, 10)
	for rest := transcript; ; {
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
