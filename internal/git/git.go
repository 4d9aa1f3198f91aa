// Package git is one runner for every git command: nothing else in the
// module runs git. Every call takes a context, and a failure comes back as a
// *Error carrying the arguments, the directory and git's stderr.
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
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ErrNotRepo is returned (wrapped) when a directory is not inside a git work
// tree.
var ErrNotRepo = errors.New("not inside a git work tree")

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

// Run runs git with args in dir and returns its standard output. A non-zero
// exit, a cancelled ctx or a git that cannot be started is an *Error.
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	return run(ctx, dir, nil, args...)
}

// run is Run with extra environment variables.
func run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// Its own process group, killed whole on cancellation, so hooks and
	// helpers git started go too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if err != nil {
		code := -1
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		}
		if ctx.Err() != nil {
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
	// LC_ALL=C: the one place that reads git's message, to tell "not a
	// repository" from other failures. Nothing else depends on its wording.
	out, err := run(ctx, dir, []string{"LC_ALL=C"}, "rev-parse", "--is-inside-work-tree", "--show-prefix")
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
