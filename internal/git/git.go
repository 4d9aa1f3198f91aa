// Package git is one runner for every git command: nothing else in the
// module runs git. Every call takes a context (a call without a deadline gets
// DefaultTimeout), and a failure comes back as a *Error carrying the
// arguments, the directory, the exit code and git's stderr.
//
// Commands that take a lock are serialized within the process only as far
// as git itself needs (lock.go): a work tree's index, the list of worktrees,
// the repository as a whole; read-only commands and updates of different
// refs run side by side. When another process holds a lock, the command is
// retried briefly before its error is returned. Once
// started, such a command runs to its end even when its context is
// cancelled (only its deadline stops it): git killed half way leaves lock
// files and half-written work trees behind.
// [Locked] holds a work tree's lock across a sequence of commands.
//
// Git runs with GIT_TERMINAL_PROMPT=0 (a command that needs credentials fails
// instead of waiting for a terminal nobody watches) and GIT_OPTIONAL_LOCKS=0
// (read-only commands such as status do not take the index lock, so they never
// get in the way of a git command running next to them).
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrNotRepo is returned (wrapped) when a directory is not inside a git work
// tree.
var ErrNotRepo = errors.New("not inside a git work tree")

// ErrNoGit is returned (wrapped) when git cannot be found.
var ErrNoGit = errors.New("git is not installed or not in PATH")

// DefaultTimeout bounds a git command whose context has no deadline.
const DefaultTimeout = 10 * time.Minute

// Error is a git command that failed.
type Error struct {
	// Dir is where git ran.
	Dir string
	// Args are git's arguments, without "git".
	Args []string
	// ExitCode is git's exit status, or -1 when it did not exit normally
	// (could not start, killed, cancelled).
	ExitCode int
	// Stderr is what git wrote to its standard error, trimmed.
	Stderr string
	// Err is the underlying error from running the process.
	Err error
}

// Error says which command failed where, and why.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "git %s (in %s): %v", strings.Join(e.Args, " "), e.Dir, e.Err)
	if e.Stderr != "" {
		fmt.Fprintf(&b, ": %s", e.Stderr)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// waitDelay bounds how long a finished or cancelled git may hold its output
// pipes (through a hook's background child, say) before Run stops reading.
const waitDelay = 5 * time.Second

// Stderr returns what git said on its standard error for err, trimmed:
// the useful part of a failure. It is err's text when err is not a git
// failure with output.
func Stderr(err error) string {
	var gerr *Error
	if errors.As(err, &gerr) && strings.TrimSpace(gerr.Stderr) != "" {
		return strings.TrimSpace(gerr.Stderr)
	}
	return err.Error()
}

// Run runs git with args in dir and returns its standard output. A non-zero
// exit, a cancelled ctx or a git that cannot be started is an *Error.
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	return run(ctx, dir, nil, args...)
}

// RunEnv is Run with extra environment variables ("NAME=value").
func RunEnv(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return run(ctx, dir, env, args...)
}

// run runs git, serialized per repository when it takes a lock, retrying
// while another process holds one.
func run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return runInput(ctx, dir, env, "", args...)
}

// runInput is run with stdin as git's standard input (none when "").
func runInput(ctx context.Context, dir string, env []string, stdin string, args ...string) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	if takesLock(args) {
		unlock, err := lockFor(ctx, dir, args)
		if err != nil {
			return "", &Error{Dir: dir, Args: args, ExitCode: -1, Err: err}
		}
		if unlock != nil {
			defer unlock()
		}
		if err := ctx.Err(); err != nil {
			return "", &Error{Dir: dir, Args: args, ExitCode: -1, Err: err}
		}
		// A command that writes is not killed half way when ctx is
		// cancelled: that would leave lock files and half-written work
		// trees in the user's repository. It still ends at the deadline.
		deadline, _ := ctx.Deadline()
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		var in io.Reader
		if stdin != "" {
			in = strings.NewReader(stdin)
		}
		out, err := runOnceIn(ctx, dir, env, in, args...)
		if err == nil || attempt >= lockRetries || !(lockBusy(err) || halfMadeRead(err)) {
			return out, err
		}
		if sequencing(args) && inProgress(ctx, dir) {
			// It failed on a lock half way: running it again would only
			// find its own operation in progress ("already a rebase-merge
			// directory"). The operation is the caller's to handle.
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(lockBackoff(attempt)):
		}
	}
}

// RunStdin runs a git command that takes no lock with stdin as its
// standard input.
func RunStdin(ctx context.Context, dir, stdin string, args ...string) (string, error) {
	if takesLock(args) {
		return "", fmt.Errorf("git %s takes a lock; RunStdin is for commands that do not", strings.Join(args, " "))
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	return runOnceIn(ctx, dir, nil, strings.NewReader(stdin), args...)
}

// runOnce runs git once.
func runOnce(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return runOnceIn(ctx, dir, env, nil, args...)
}

// started counts the git processes started: what a piece of work costs in
// git is the difference of Started before and after.
var started atomic.Int64

// Started returns how many git processes this process has started so far.
func Started() int64 { return started.Load() }

func runOnceIn(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) (string, error) {
	started.Add(1)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	// LC_ALL=C: the few places that read git's messages (not a
	// repository, a lock held) read them in one language.
	cmd.Env = append(withoutAPIKeys(os.Environ()), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	cmd.Env = noAutoMaintenance(append(cmd.Env, env...))
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// Its own process group, killed whole on cancellation, so hooks and
	// helpers git started go too; killed with the daemon (Linux).
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if err != nil {
		code := -1
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		}
		switch {
		case errors.Is(err, exec.ErrNotFound):
			err = ErrNoGit
		case ctx.Err() != nil:
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return stdout.String(), &Error{
			Dir:      dir,
			Args:     args,
			ExitCode: code,
			Stderr:   strings.TrimSpace(stderr.String()),
			Err:      err,
		}
	}
	return stdout.String(), nil
}

// workTreePrefix returns the path of dir relative to the top of its work
// tree, slash-separated with a trailing slash ("" at the top), or an error
// wrapping ErrNotRepo when dir is not inside a work tree.
func workTreePrefix(ctx context.Context, dir string) (string, error) {
	out, err := run(ctx, dir, nil, "rev-parse", "--is-inside-work-tree", "--show-prefix")
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && gerr.ExitCode == 128 && strings.Contains(gerr.Stderr, "not a git repository") {
			return "", fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		return "", err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if lines[0] != "true" {
		return "", fmt.Errorf("%s: %w", dir, ErrNotRepo)
	}
	if len(lines) < 2 {
		return "", nil
	}
	return lines[1], nil
}

// withoutAPIKeys drops the model providers' keys (*_API_KEY) from env: git
// never needs them, and a running git's environment is readable in
// /proc/<pid>/environ by other processes of the user.
func withoutAPIKeys(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasSuffix(strings.ToUpper(name), "_API_KEY") {
			out = append(out, kv)
		}
	}
	return out
}

// noAutoMaintenance turns off the automatic gc and maintenance git starts
// after a commit, a merge or a fetch: in a repository with thousands of
// task refs it packs them for minutes, past the deadline of the command
// that started it (a landing's commit was killed so, and its task paused).
// The user's own git keeps doing it. The settings travel as
// GIT_CONFIG_COUNT entries, unless env already has some (a caller's or the
// user's own: theirs are kept whole).
func noAutoMaintenance(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") {
			return env
		}
	}
	return append(env, "GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0",
		"GIT_CONFIG_KEY_1=maintenance.auto", "GIT_CONFIG_VALUE_1=false")
}
