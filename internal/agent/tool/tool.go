// Package tool holds the native agent's tools: one file per tool, each with
// its description for the model in an embedded file under descriptions/.
//
// Tools run inside a task's working directory (Env.Dir). File tools refuse
// any path that leaves it: "..", absolute paths elsewhere and symlinks that
// resolve outside are errors the model can read and act on, never panics or
// silent writes elsewhere. Commands pass Env.Policy before they run, then run confined by
// Env.Sandbox (internal/sandbox).
//
// A tool never fails the task by itself: whatever goes wrong becomes a
// Result with IsError set, so the model sees it and can correct course.
package tool

import (
	"context"
	"encoding/json"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

// Tool is one capability offered to the model.
type Tool interface {
	// Def is the definition sent to the model: name, description, schema.
	Def() llm.ToolDef
	// Run executes one call with the model's input (a JSON object, possibly
	// not matching the schema: validate it). It honours ctx: cancellation
	// stops the work (and kills processes) and returns promptly.
	Run(ctx context.Context, env *Env, input json.RawMessage) Result
}

// Env is what tools may touch.
type Env struct {
	// Dir is the task's working directory, absolute and clean.
	Dir string
	// Vars is the task's own environment ("NAME=value") for commands: its
	// id, worktree and port. Commands get these and the allowed part of the
	// daemon's environment only (see [BaseEnvAllow] and EnvAllow).
	Vars []string
	// EnvAllow names more variables of the daemon's environment commands
	// inherit (agent.env_allow). Names [EnvDenied] refuses are dropped.
	EnvAllow []string
	// Policy judges commands before they run; nil means DefaultPolicy().
	Policy *Policy
	// MaxOutput caps the bytes of output a tool returns in Content (bash
	// output, read_file content, grep matches); zero means DefaultMaxOutput.
	MaxOutput int
	// BashTimeout is the default timeout of a bash call that names none;
	// MaxBashTimeout caps what a call may ask for. Zero means the defaults.
	BashTimeout    Seconds
	MaxBashTimeout Seconds
	// Sandbox runs every command through the sandbox launcher, confined to
	// Dir and the task's TMPDIR (the last TMPDIR in Vars); nil runs them as
	// they are, behind the deny-list alone.
	Sandbox *sandbox.Launcher
	// Repo is the repository Dir is a worktree of, as the daemon knows it:
	// the sandbox lets git commit there on the task's branch.
	Repo string
	// Branch is the task's branch, as the daemon knows it: the sandbox
	// lets git update the refs in its directory alone.
	Branch string
}

// Seconds is a duration in whole seconds, as tools and config express it.
type Seconds int

// Defaults for Env's zero fields.
const (
	DefaultMaxOutput      = 32 << 10
	DefaultBashTimeout    = Seconds(120)
	DefaultMaxBashTimeout = Seconds(1800)
)

// Result is the outcome of one call.
type Result struct {
	// Content is what the model reads.
	Content string
	// IsError tells the model the call failed.
	IsError bool
	// Changed lists the files the call created, modified or deleted.
	Changed []Change
	// Control, when set, ends the task's turn in a special way.
	Control *Control
	// Learning, when set, is a learning the model recorded.
	Learning *Learning
}

// ChangeOp is what happened to a file; Change is one changed file, by its
// slash-separated path relative to Dir. They are the git runner's, which
// finds the files a command changed.
type (
	ChangeOp = git.ChangeOp
	Change   = git.Change
)

// File change operations.
const (
	Created  = git.Created
	Modified = git.Modified
	Deleted  = git.Deleted
)

// ControlKind names what a control tool asked for.
type ControlKind string

// Control kinds.
const (
	// AskUser: the task waits for a user's answer to Text.
	AskUser ControlKind = "ask_user"
	// Complete: the task is done; Text is the summary.
	Complete ControlKind = "complete"
	// Fail: the task gives up; Text is the reason.
	Fail ControlKind = "fail"
)

// Control is a request from the model to change its task's life.
type Control struct {
	Kind ControlKind
	Text string
}

// Learning is a learning the model recorded with record_learning.
type Learning struct {
	Summary string
	Detail  string
	Tags    []string
}
