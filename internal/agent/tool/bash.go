package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

//go:embed descriptions/bash.md
var bashDescription string

// snapshotTimeout bounds the git status run after a command to find what it
// changed. It runs even when the call was cancelled: what a command changed
// before it was stopped still matters.
const snapshotTimeout = 30 * time.Second

// bashTool is the bash tool: one shell command in the working directory.
type bashTool struct{}

var _ Tool = bashTool{}

type bashParams struct {
	Command string `json:"command" desc:"The shell command to run (with /bin/sh -c) in the working directory." min:"1"`
	Timeout int    `json:"timeout,omitempty" desc:"Seconds before the command and everything it started are killed. Default 120." min:"1"`
}

// Def describes bash.
func (bashTool) Def() llm.ToolDef { return def[bashParams]("bash", bashDescription) }

// Run checks the command against the policy, runs it and reports its output,
// exit code and the files it changed.
func (bashTool) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	p, err := decode[bashParams](input)
	if err != nil {
		return invalid("bash", err)
	}
	if _, err := workDir(env); err != nil {
		return failed("%v", err)
	}
	dir := env.Dir
	if err := env.policy().Check(p.Command, dir); err != nil {
		return failed("%v. Do it another way, or if it is really needed, ask the user (ask_user) to do it.", err)
	}
	timeout := env.bashTimeout(Seconds(p.Timeout))

	var notes []string
	before, err := git.TakeSnapshot(ctx, dir)
	tracking := err == nil
	if err != nil && !errors.Is(err, git.ErrNotRepo) && ctx.Err() == nil {
		notes = append(notes, fmt.Sprintf("changed files not tracked: %v", err))
	}

	cmd, err := env.Sandbox.Wrap(proc.Cmd{
		Dir:       dir,
		Shell:     p.Command,
		Env:       commandEnv(environ(), env.EnvAllow, dir, env.Vars),
		Timeout:   time.Duration(timeout) * time.Second,
		MaxOutput: env.maxOutput(),
	}, sandbox.Task{Dir: dir, TempDir: tempDir(env.Vars), Repo: env.Repo, Branch: env.Branch})
	if err != nil {
		return failed("not running the command: %v. No command can run until the sandbox works; ask the user (ask_user) to fix it, or to turn sandbox.require off.", err)
	}
	res, err := proc.Run(ctx, cmd)
	if err != nil {
		return failed("running the command: %v", err)
	}
	for _, p := range res.Escaped {
		notes = append(notes, fmt.Sprintf("killed process %d (%s), which had left the command's process group", p.PID, p.Command))
	}

	var changed []Change
	if tracking {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), snapshotTimeout)
		after, err := before.Retake(sctx)
		cancel()
		if err != nil {
			notes = append(notes, fmt.Sprintf("changed files not tracked: %v", err))
		} else {
			changed = git.Diff(before, after)
		}
	}

	var b strings.Builder
	switch {
	case res.Cancelled:
		b.WriteString("The command was cancelled and killed, with everything it started.\n")
	case res.TimedOut:
		fmt.Fprintf(&b, "The command timed out after %d seconds and was killed, with everything it started. Give a longer timeout (at most %d) or make it faster.\n", timeout, env.maxBashTimeout())
	}
	if res.Output == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(res.Output)
		if !strings.HasSuffix(res.Output, "\n") {
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "[exit code %d]\n", res.ExitCode)
	for _, n := range notes {
		fmt.Fprintf(&b, "[%s]\n", n)
	}
	return Result{
		Content: b.String(),
		IsError: res.ExitCode != 0 || res.TimedOut || res.Cancelled,
		Changed: changed,
	}
}
