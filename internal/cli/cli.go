// Package cli is the neuraphage command line: cobra commands, one file per
// command, each with its flags in newXCmd and its work in runX. It reaches the
// daemon only through api/client, starting the daemon when it is not running.
//
// Exit codes are decided in one place, exitCode:
//
//	0  ok
//	1  the operation failed
//	2  usage error: bad flag or argument, unknown task id, bad filter
//	3  the daemon is unreachable and could not be started
//
// Everything printed for people goes through one terminalWriter, which shows
// terminal controls in untrusted text visibly (words.Printable); --json
// output goes around it, unchanged.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
)

// The exit codes.
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitUnreachable = 3
)

// Env is everything the CLI takes from its process.
type Env struct {
	Args           []string // without the program name
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Version        string
	// Executable returns the path of the running binary, used to start the daemon.
	Executable func() (string, error)
	// Argv0 is the program name the daemon is started under.
	Argv0 string
	// RunDaemon runs a daemon in this process until ctx ends or it is told to
	// stop, reading the environment (API keys) through getenv and calling
	// ready once it listens. The composition root provides it so that the CLI
	// never imports the daemon's internals.
	RunDaemon func(ctx context.Context, p config.Paths, c config.Config, getenv func(string) string, ready func()) error
	// RunWorker runs a cluster worker in this process until ctx ends or it
	// has drained (docs/cluster.md).
	RunWorker func(ctx context.Context, p config.Paths, c config.Config, getenv func(string) string, w WorkerArgs) error
	// HideSecrets, called before a daemon runs in this process, makes sure the
	// process's exec-time environment (its /proc/<pid>/environ) holds no secret
	// variables, re-executing the process without them if it must (see
	// spawn.HideSecrets); extra names variables to hold back besides the
	// usual ones. Nil skips it (tests that run the CLI in-process).
	HideSecrets func(extra []string) error
}

// Main runs the command line and returns the process exit code.
func Main(env Env) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{env: env}
	root := a.newRootCmd()
	stdout, stderr := newTerminalWriter(env.Stdout), newTerminalWriter(env.Stderr)
	defer stdout.flush()
	defer stderr.flush()
	root.SetArgs(env.Args)
	root.SetIn(env.Stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if a.client != nil {
		a.client.Close()
	}
	if err == nil {
		return ExitOK
	}
	code := a.exitCode(err)
	fmt.Fprintf(stderr, "neuraphage: %s\n", err)
	if h := hint(err); h != "" {
		fmt.Fprintf(stderr, "hint: %s\n", h)
	} else if code == ExitUsage && !a.started {
		fmt.Fprintln(stderr, "hint: run `neuraphage --help` or `neuraphage COMMAND --help`")
	}
	return code
}

// app holds what commands share: the environment, and the paths, config and
// client, each made on first use.
type app struct {
	env Env
	// started is set when a command's own work begins: an error before that
	// came from parsing the command line.
	started bool

	paths  *config.Paths
	cfg    *config.Config
	client *client.Client
}

func (a *app) newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "neuraphage",
		Short: "Run and supervise many AI coding agents on one repository",
		Long: `Neuraphage runs each task in its own git worktree and supervises the tasks as a
group. The daemon starts on first use; every command talks to it over a local
socket. State lives under $NEURAPHAGE_HOME when set, otherwise the XDG directories.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErrorf("%v (see `%s --help`)", err, c.CommandPath())
	})
	taskCmd := &cobra.Command{Use: "task", Short: "Create, inspect and steer tasks", Args: noArgs, RunE: help}
	taskCmd.AddCommand(
		a.newTaskNewCmd(), a.newTaskListCmd("list"), a.newTaskShowCmd(), a.newTaskReportCmd(), a.newTaskCancelCmd(),
		a.newTaskPauseCmd(), a.newTaskResumeCmd(), a.newTaskSendCmd(), a.newTaskAttachCmd(), a.newTaskDependCmd(),
		a.newTaskLogCmd(), a.newTaskRebaseCmd(), a.newTaskEscalateCmd(),
	)
	daemonCmd := &cobra.Command{Use: "daemon", Short: "Start, stop and inspect the daemon", Args: noArgs, RunE: help}
	daemonCmd.AddCommand(a.newDaemonStartCmd(), a.newDaemonStopCmd(), a.newDaemonStatusCmd())
	configCmd := &cobra.Command{Use: "config", Short: "Show and edit the configuration", Args: noArgs, RunE: help}
	configCmd.AddCommand(a.newConfigShowCmd(), a.newConfigGetCmd(), a.newConfigSetCmd(), a.newConfigPathCmd())
	devCmd := &cobra.Command{Use: "dev", Short: "Tools for developing with and on Neuraphage", Args: noArgs, RunE: help}
	devCmd.AddCommand(a.newDevFakeLLMCmd(), a.newDevLoadCmd())
	root.AddCommand(devCmd, taskCmd, a.newTaskListCmd("ps"), daemonCmd, configCmd, a.newWorktreeCmd(), a.newMergeCmd(), a.newRebaseCmd(), a.newPersonaCmd(), a.newWorkflowCmd(),
		a.newHealthCmd(), a.newWatcherCmd(), a.newWatchCmd(), a.newNudgeCmd(), a.newSupervisionCmd(), a.newKnowledgeCmd(), a.newSyncCmd(), a.newEventsCmd(), a.newCostCmd(), a.newOverlapCmd(), a.newVersionCmd(), a.newDemoCmd(), a.newSandboxExecCmd(), a.newMCPCmd(),
		a.newClusterCmd(), a.newWorkerCmd())
	root.AddCommand(a.newTUICmd(), a.newWebCmd())
	root.AddCommand(a.newMetricsCmd())
	a.addCompletions(root)
	return root
}

// run wraps a command's work so that errors from here on are the command's,
// not the command line's.
func (a *app) run(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.started = true
		return fn(cmd, args)
	}
}

// usageError is a mistake in how the command was called.
type usageError struct {
	msg  string
	hint string
}

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// unreachableError says the daemon could not be reached or started.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

func (a *app) exitCode(err error) int {
	var (
		ue  *usageError
		ce  *client.Error
		ure *unreachableError
	)
	switch {
	case !a.started:
		return ExitUsage // cobra refused the command line: unknown command, bad args
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &ure), errors.Is(err, client.ErrUnreachable):
		return ExitUnreachable
	case errors.As(err, &ce):
		switch ce.Code() {
		case api.CodeNotFound, api.CodeInvalid:
			return ExitUsage
		case api.CodeUnavailable:
			return ExitUnreachable
		}
		return ExitFailed
	}
	return ExitFailed
}

func hint(err error) string {
	var (
		ue *usageError
		ce *client.Error
	)
	switch {
	case errors.As(err, &ue):
		return ue.hint
	case errors.As(err, &ce):
		return ce.Body.Hint
	case errors.Is(err, client.ErrUnreachable):
		return "start it with `neuraphage daemon start`; its log is under the logs directory (`neuraphage config path`)"
	}
	return ""
}

// help is the action of a command that only groups others.
func help(cmd *cobra.Command, _ []string) error { return cmd.Help() }

// noArgs refuses arguments, as a usage error; for parents it lists subcommands.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return &usageError{msg: fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath()), hint: "run `" + cmd.CommandPath() + " --help` for its commands"}
		}
		return usageErrorf("%s takes no arguments", cmd.CommandPath())
	}
	return nil
}

// exactArgs requires n arguments named by names, as a usage error.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return &usageError{
				msg:  fmt.Sprintf("%s takes %d argument(s), got %d", cmd.CommandPath(), len(names), len(args)),
				hint: "usage: " + cmd.UseLine(),
			}
		}
		return emptyIDs(cmd, names, args)
	}
}

// emptyIDs rejects an empty task id (ID, BLOCKER) among args, which the
// daemon would otherwise read as a different route.
func emptyIDs(cmd *cobra.Command, names, args []string) error {
	for i, a := range args {
		if i < len(names) && (names[i] == "ID" || names[i] == "BLOCKER") && strings.TrimSpace(a) == "" {
			return &usageError{
				msg:  fmt.Sprintf("%s: the task id (%s) is empty", cmd.CommandPath(), names[i]),
				hint: "`neuraphage task list` lists the tasks and their ids",
			}
		}
	}
	return nil
}
