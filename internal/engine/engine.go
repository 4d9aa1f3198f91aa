// Package engine is the boundary between the executor and whatever drives an
// agent: the native loop (package agent) today, external agent CLIs (Claude
// Code, Codex, Gemini CLI) later. The executor knows engines only through
// this interface and the Host it hands them; nothing here is specific to one
// engine.
//
// An engine's Run drives one task from its stored state until the task
// finishes, needs its user, pauses, or Run's context ends. Along the way the
// engine
//
//   - reports what happens as observations (event payloads of the "agent"
//     kinds, Host.Emit), in one vocabulary for every engine;
//   - stores its progress with Host.Commit after every step, so that a crash
//     loses at most the step in flight and a later Run resumes from there;
//   - calls Host.Prepare at every turn boundary, while none of its tools
//     runs, so that the executor can do the work injections ask of the
//     task itself (a blocking rebase onto main, an escalation to another
//     persona), and picks up a changed persona or model from the task it
//     returns;
//   - takes injected messages from Host.Inbox at every turn boundary,
//     rendered with Render, and commits them as delivered together with the
//     conversation that holds them (exactly once);
//   - stops the turn in flight when Host.Interrupts fires (an urgent message
//     arrived), keeping only what is consistent, and goes to the boundary;
//   - asks Host.Allow before every model call, and stops when it refuses
//     (a budget is spent).
package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Engine drives agents.
type Engine interface {
	// Name is the engine's name as tasks and configuration spell it.
	Name() string
	// Ready reports whether the engine can run tasks now (nil), or what
	// the user must set up first. The executor leaves the engine's tasks
	// queued while it is not ready.
	Ready() error
	// Run drives the task until it reaches an outcome or ctx ends (then the
	// Outcome is Stopped). It must return promptly once ctx is done, with
	// every process it started gone.
	Run(ctx context.Context, r Run) Outcome
}

// Run is one run of a task.
type Run struct {
	// Task is the task as stored when the run began.
	Task task.Task
	// Dir is the working directory the agent works in (the task's worktree).
	Dir string
	// Branch is the branch checked out in Dir, as the daemon's worktree
	// record says ("" when Dir is no task worktree): the sandbox lets the
	// agent's commands update it, and no other task's.
	Branch string
	// Env is extra environment ("NAME=value") for the commands the agent
	// runs: the port handed to the task, say.
	Env []string
	// Host is the executor's side of the run.
	Host Host
}

// Host is what the executor offers a running engine. Its methods are safe
// for concurrent use.
type Host interface {
	// Emit publishes observations about the task. It never blocks for long:
	// logged observations are queued for the event log, transient ones
	// (text deltas) may be dropped for slow readers.
	Emit(ps ...event.Payload)
	// Conversation returns the task's stored conversation.
	Conversation(ctx context.Context) ([]llm.Message, error)
	// Commit stores one step atomically and returns the task as stored after it.
	Commit(ctx context.Context, s Step) (task.Task, error)
	// Prepare is called at every turn boundary before Inbox, while none of
	// the run's tools is running. The executor does there the work that
	// waiting injections ask of the task (a blocking rebase onto main, a
	// change of persona); their outcome then waits in the inbox. It
	// returns the task as stored after that work: when its Persona or
	// Model changed, the engine uses the new persona's system prompt and
	// model from the next model call on, keeping the conversation. An
	// error stops the run as a failed read of the inbox does.
	Prepare(ctx context.Context) (task.Task, error)
	// Inbox returns the injections waiting for the task, oldest first.
	// After Prepare it returns the queue as Prepare read it (with the
	// outcomes Prepare queued): the queue is read once per boundary, and
	// a message stored after that read waits for the next boundary.
	Inbox(ctx context.Context) ([]inject.Injection, error)
	// Interrupts fires when an urgent injection arrives while the task runs.
	Interrupts() <-chan struct{}
	// UrgentWaiting reports whether an urgent injection waits undelivered,
	// including one Prepare will carry out (a blocking rebase): a signal
	// from Interrupts left over from one already delivered cuts nothing.
	UrgentWaiting(ctx context.Context) bool
	// Allow is asked before every model call; a non-nil *Stop means the
	// engine must stop at this boundary with that outcome.
	Allow(ctx context.Context) *Stop
	// RecordLearning stores a learning the agent reported.
	RecordLearning(ctx context.Context, l Learning) error
	// Now is the run's clock.
	Now() time.Time
}

// Arrivals is implemented by a Host that signals every injection stored
// for the running task, urgent or not (Interrupts fires for urgent ones
// only). An engine that can hand messages to its agent in the middle of a
// turn (an external CLI while one of its tools runs) reads Inbox when it
// fires instead of polling. A signal may stand for several messages, or
// for one a boundary already took.
type Arrivals interface {
	Arrivals() <-chan struct{}
}

// Step is one unit of progress stored by Host.Commit.
type Step struct {
	// Turn is the engine's turn number.
	Turn int
	// Messages are appended to the stored conversation; with Replace they
	// replace it (after compaction).
	Messages []llm.Message
	Replace  bool
	// Delivered are the injections now part of the conversation.
	Delivered []inject.Injection
	// Call, when set, is one model call to charge to the task.
	Call *Call
	// Events are observations committed with the step.
	Events []event.Payload
	// Manifest, when set, replaces the task's sandbox manifest: a
	// permission denial recovered from widened it, or a question about
	// widening it is pending (package lifecycle).
	Manifest *task.Manifest
}

// Call is one model call: what it cost and how long it took.
type Call struct {
	Provider string
	Model    string
	Usage    llm.Usage
	CostUSD  float64
	Duration time.Duration
}

// Learning is something the agent found out that other tasks may need.
type Learning struct {
	Turn    int
	Summary string
	Detail  string
	Tags    []string
}

// Status is how a run ended.
type Status string

// Run outcomes.
const (
	// Completed: the agent finished its task.
	Completed Status = "completed"
	// Failed: the agent gave up, or something it cannot recover from happened.
	Failed Status = "failed"
	// Waiting: the agent asked its user a question; a reply resumes it.
	Waiting Status = "waiting"
	// Paused: the run stopped at a boundary, by request or a limit; resume
	// continues it.
	Paused Status = "paused"
	// Stopped: Run's context ended; the stored state is where a later run
	// resumes.
	Stopped Status = "stopped"
)

// Outcome is the end of a run.
type Outcome struct {
	Status Status
	// Reason is the summary (completed), reason (failed, paused) or
	// question (waiting).
	Reason string
	// Turn is the last turn number.
	Turn int
}

// Stop is a refusal from Host.Allow: the engine stops with this outcome.
type Stop struct {
	Status Status
	Reason string
}

func (s *Stop) Error() string { return fmt.Sprintf("%s: %s", s.Status, s.Reason) }

// ErrUnavailable is wrapped by an engine's Ready error when the engine
// cannot run at all as installed (its CLI is missing or too old): a task
// naming it is refused at creation, with the error's hint.
var ErrUnavailable = errors.New("engine unavailable")

// ErrNoModel is wrapped by errors that say the engine has no model to call.
var ErrNoModel = errors.New("no model is configured")
