package extproc

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
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// What a run of every CLI engine does the same way: its start (Begin), the
// CLI's launch for a task (Launch), its output read on a goroutine of its
// own (Reader), its crash described (Exited, Crashed), and its steps stored
// (Commit) until it stops or pauses (StopOrPause).

// FinalTimeout bounds the commits a run makes after its context ended.
const FinalTimeout = 10 * time.Second

// StderrTail is how much of the CLI's stderr a crash's reason quotes.
const StderrTail = 600

// Begin starts a run of the engine called name: the CLI must be ready
// (ready's error pauses the task with its message), and the model calls
// of the stored conversation are counted: the run's turns go on from
// them. stop reports that out ends the run.
func Begin(ctx context.Context, r engine.Run, name string, ready func() error) (turns int, out engine.Outcome, stop bool) {
	if err := ready(); err != nil {
		return 0, engine.Outcome{Status: engine.Paused, Reason: err.Error()}, true
	}
	msgs, err := r.Host.Conversation(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return 0, engine.Outcome{Status: engine.Stopped}, true
		}
		return 0, engine.Outcome{Status: engine.Paused, Reason: fmt.Sprintf("%s engine: loading the conversation: %v", name, err)}, true
	}
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			turns++
		}
	}
	return turns, engine.Outcome{}, false
}

// Logger is an engine's logger: log (nil discards) with the engine's
// attributes.
func Logger(log *slog.Logger, name string) *slog.Logger {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return log.With("component", "engine", "engine", name)
}

// EnvironOr is environ, or os.Environ when it is nil.
func EnvironOr(environ func() []string) func() []string {
	if environ == nil {
		return os.Environ
	}
	return environ
}

// TaskVars are the variables every CLI of a task gets, before its engine's
// own: the task's id and worktree dir, no git prompt, no pager, then the
// task's own (taskEnv: its port, TMPDIR).
func TaskVars(t task.Task, dir string, taskEnv []string) []string {
	return append([]string{"NEURAPHAGE_TASK_ID=" + string(t.ID), "NEURAPHAGE_WORKTREE=" + dir, "PWD=" + dir,
		"GIT_TERMINAL_PROMPT=0", "PAGER=cat", "GIT_PAGER=cat"}, taskEnv...)
}

// Launch is a CLI process of a run.
type Launch struct {
	Run  engine.Run
	Args []string
	Env  []string
	// Launcher confines the CLI to the task (nil runs it unconfined).
	Launcher *sandbox.Launcher
	// State is the CLI's own directory (its config, sessions, logs),
	// writable inside the sandbox besides what Launcher allows; "" for
	// none.
	State string
	// Label names the process in the tracker's records.
	Label string
}

// StartRun starts the CLI of l in the run's worktree, confined to its task
// (Start).
func StartRun(ctx context.Context, l Launch) (*Proc, error) {
	launcher, r := l.Launcher, l.Run
	if launcher != nil && l.State != "" {
		c := *launcher
		c.Write = append(slices.Clone(c.Write), l.State)
		launcher = &c
	}
	return Start(ctx, Spec{
		Args: l.Args, Dir: r.Dir, Env: l.Env, Launcher: launcher, Label: l.Label,
		Task: sandbox.Task{Dir: r.Dir, TempDir: TempDir(r.Env), Repo: r.Task.Repo, Branch: r.Branch},
	})
}

// TempDir is a task's temporary directory: the last TMPDIR in env.
func TempDir(env []string) string {
	dir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			dir = v
		}
	}
	return dir
}

// Reader reads a CLI's output as JSON values of type T on a goroutine of
// its own, which ends at the output's EOF (Proc.Stop brings it about). Its
// owner receives from C until it is closed (Join), then may ask Err.
type Reader[T any] struct {
	// C carries the values read; it is closed when reading ended.
	C   <-chan T
	err error
}

// Read starts reading p's output. A line that is not a T is logged and
// skipped, as ReadLines does with one that is not JSON.
func Read[T any](p *Proc, log *slog.Logger) *Reader[T] {
	c := make(chan T)
	r := &Reader[T]{C: c}
	go func() { // owned by r's owner, who drains C
		r.err = ReadLines(p.Stdout(), log, func(b []byte) error {
			var v T
			if err := json.Unmarshal(b, &v); err != nil {
				log.Warn("skipping a line from the CLI that does not parse", "err", err, "start", words.Clip(string(b), 120))
				return nil
			}
			c <- v
			return nil
		})
		close(c)
	}()
	return r
}

// Err is why reading ended (nil at EOF); only valid once C is closed.
func (r *Reader[T]) Err() error { return r.err }

// Join waits for the reader's end, dropping what it still reads.
func (r *Reader[T]) Join() {
	for range r.C {
	}
}

// CrashError is the CLI gone while the run needed it. Its message, the
// CLI's exit status and stderr's tail, is the reason of the task's pause
// as it is (StopOrPause).
type CrashError struct{ Msg string }

func (c *CrashError) Error() string { return c.Msg }

// WaitExit waits a little for the CLI's exit, so that its status and
// stderr are complete.
func (p *Proc) WaitExit() {
	select {
	case <-p.Done():
	case <-time.After(2 * time.Second):
	}
}

// Exited describes the end of the CLI product ("Claude Code"): its exit
// status, or the cause when it still runs, and its stderr's tail; resuming
// the task continues its what ("session").
func (p *Proc) Exited(product string, cause error, what string) error {
	p.WaitExit()
	msg := product + " exited"
	if code := p.ExitCode(); code >= 0 {
		msg += " with status " + strconv.Itoa(code)
	} else if cause != nil {
		msg = product + " stopped answering: " + cause.Error()
	}
	return p.Crashed(msg, what)
}

// Crashed is the CrashError of msg: the CLI's stderr's tail after it, then
// that resuming the task continues its what.
func (p *Proc) Crashed(msg, what string) error {
	if tail := p.StderrTail(StderrTail); tail != "" {
		msg += ": " + words.OneLine(tail)
	}
	return &CrashError{Msg: msg + "; resume the task to continue its " + what}
}

// StopOrPause ends a run after err: stopped when ctx ended, else paused
// with err's message, after prefix ("claude engine: ") unless it is a
// CrashError's.
func StopOrPause(ctx context.Context, log *slog.Logger, prefix string, err error, turn int) engine.Outcome {
	if ctx.Err() != nil {
		return engine.Outcome{Status: engine.Stopped, Turn: turn}
	}
	reason := err.Error()
	var ce *CrashError
	if !errors.As(err, &ce) {
		reason = prefix + reason
	}
	log.Warn("pausing the task", "err", err)
	return engine.Outcome{Status: engine.Paused, Reason: reason, Turn: turn}
}

// Commit stores step s and the learnings it reports; after ctx ended it
// still gets FinalTimeout, so the step in flight is not lost. latest
// becomes the task as stored once the step is.
func Commit(ctx context.Context, h engine.Host, s engine.Step, latest *task.Task) error {
	if ctx.Err() != nil {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinalTimeout)
		defer cancel()
		ctx = c
	}
	t, err := h.Commit(ctx, s)
	if err != nil {
		return err
	}
	*latest = t
	return engine.StepLearnings(ctx, h, s, t.Tags)
}

// Finish ends a run with status (Completed, Failed or Waiting) and reason
// (the summary, the failure, the question to the user): the event that
// reports it is stored with commit, then the outcome is returned; when it
// could not be stored, fail's outcome of the error.
func Finish(ctx context.Context, turn int, status engine.Status, reason string,
	commit func(context.Context, engine.Step) error, fail func(context.Context, error) engine.Outcome) engine.Outcome {
	var ev event.Payload
	switch status {
	case engine.Completed:
		ev = event.Completed{Turn: turn, Summary: reason}
	case engine.Failed:
		ev = event.Failed{Turn: turn, Reason: reason}
	case engine.Waiting:
		ev = event.NeedsInput{Turn: turn, Question: reason}
	default:
		panic("extproc.Finish: no event ends a run with status " + string(status))
	}
	if err := commit(ctx, engine.Step{Turn: turn, Events: []event.Payload{ev}}); err != nil {
		return fail(ctx, err)
	}
	return engine.Outcome{Status: status, Reason: reason, Turn: turn}
}

// UsageEvent is the observation of a turn's model usage u costing cost,
// with the task's totals: prev, the task's usage stored before it, plus
// this turn's.
func UsageEvent(turn int, provider, model string, u llm.Usage, cost float64, prev task.Usage) event.Usage {
	return event.Usage{Turn: turn, Provider: provider, Model: model,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		CostUSD: cost, TotalTokens: prev.InputTokens + prev.OutputTokens + u.Total(), TotalCostUSD: prev.CostUSD + cost}
}
