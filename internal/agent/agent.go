// Package agent is the native engine: Neuraphage's own agent loop on the
// model layer. Each turn it takes the injections waiting at the boundary,
// asks the model (streaming), stores the reply, runs the tools the model
// called (package tool) and stores their results, so a crash loses at most
// the turn in flight and a later run resumes from the stored conversation.
//
// The loop owns what only it can see: drift limits (tool calls failing in a
// row, time without progress), the context window (large tool output is
// truncated; old turns are elided, then dropped, when the conversation
// nears the window), replies cut off at the output limit (the turn
// continues), and urgent injections (the model call in flight is cancelled,
// its partial reply dropped, and the loop goes to the boundary). Budgets are
// the executor's, asked through Host.Allow before every model call.
package agent

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/agent/tool"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

//go:embed prompts/system.md
var defaultSystem string

// Name is the native engine's name.
const Name = "native"

// Options configures the engine.
type Options struct {
	// Model picks the client and model name for a task. An error wrapping
	// engine.ErrNoModel pauses the task with the error's message.
	Model func(t task.Task) (llm.Client, string, error)
	// Ready, when set, reports whether a model is configured; see
	// engine.Engine.Ready.
	Ready func() error
	// ContextWindow returns a model's context window in tokens; nil or 0
	// means DefaultContextWindow.
	ContextWindow func(model string) int
	// Tools offered to the model; nil means tool.Builtin().
	Tools []tool.Tool
	// ToolEnv is the template of every run's tool environment (its Dir is
	// set per run).
	ToolEnv tool.Env
	// System returns the whole system prompt for a task (its persona's
	// prompt before BaseSystem); nil means BaseSystem alone. It is asked
	// again when the task's persona changes mid-run (an escalation).
	System func(t task.Task) string
	// MaxOutputTokens caps each reply; zero means the client's default.
	MaxOutputTokens int
	Limits          Limits
}

// Limits are the loop's drift limits. A task that reaches one is paused
// with the reason, keeping its conversation.
type Limits struct {
	// MaxToolFailures is how many tool calls may fail in a row; zero means 8.
	MaxToolFailures int
	// NoProgress is how long the task may go without a successful tool
	// call; zero means 15 minutes.
	NoProgress time.Duration
	// MaxIdleTurns is how many replies in a row may end without a tool call
	// before the task waits for its user; zero means 2.
	MaxIdleTurns int
}

// DefaultContextWindow is assumed for models the catalogue does not know.
const DefaultContextWindow = 200_000

// Engine is the native engine. It is safe for concurrent use: each Run is
// independent.
type Engine struct {
	o     Options
	tools []tool.Tool
	defs  []llm.ToolDef
}

// New returns the native engine.
func New(o Options) *Engine {
	if o.Tools == nil {
		o.Tools = tool.Builtin()
	}
	if o.Limits.MaxToolFailures <= 0 {
		o.Limits.MaxToolFailures = 8
	}
	if o.Limits.NoProgress <= 0 {
		o.Limits.NoProgress = 15 * time.Minute
	}
	if o.Limits.MaxIdleTurns <= 0 {
		o.Limits.MaxIdleTurns = 2
	}
	e := &Engine{o: o, tools: o.Tools}
	for _, t := range o.Tools {
		e.defs = append(e.defs, t.Def())
	}
	return e
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return Name }

// Ready implements engine.Engine: the engine is ready when Options.Ready
// says so (nil means always).
func (e *Engine) Ready() error {
	if e.o.Ready == nil {
		return nil
	}
	return e.o.Ready()
}

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, r engine.Run) engine.Outcome {
	client, model, err := e.o.Model(r.Task)
	if err != nil {
		return engine.Outcome{Status: engine.Paused, Reason: err.Error()}
	}
	env := e.o.ToolEnv
	env.Dir = r.Dir
	env.Repo = r.Task.Repo
	env.Branch = r.Branch
	env.Vars = append([]string{"NEURAPHAGE_TASK_ID=" + string(r.Task.ID), "NEURAPHAGE_WORKTREE=" + r.Dir}, r.Env...)
	l := &loop{
		e: e, r: r, h: r.Host, client: client, model: model, env: &env,
		system: e.system(r.Task, r.Dir), persona: r.Task.Persona, taskModel: r.Task.Model,
		latest: r.Task,
	}
	return l.run(ctx)
}

// system is the system prompt of t, working in dir.
func (e *Engine) system(t task.Task, dir string) string {
	system := defaultSystem
	if e.o.System != nil {
		system = e.o.System(t)
	}
	return system + "\n\nYour working directory: " + dir + "\n"
}

// BaseSystem returns the system prompt every task gets: how to work with
// Neuraphage's tools. A persona's prompt goes before it (Options.System).
func BaseSystem() string { return defaultSystem }

// taskPrompt is the first user message of a task.
func taskPrompt(t task.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your task (%s):\n\n%s\n", t.ID, engine.Neutralize(t.Description))
	if strings.TrimSpace(t.Context) != "" {
		fmt.Fprintf(&b, "\nContext:\n\n%s\n", engine.Neutralize(t.Context))
	}
	if len(t.Tags) > 0 {
		fmt.Fprintf(&b, "\nTags: %s\n", strings.Join(t.Tags, ", "))
	}
	return b.String()
}
