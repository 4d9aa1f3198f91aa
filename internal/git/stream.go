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
	"syscall"
)

// maxStreamStderr bounds how much of a streaming git's standard error is
// kept for its *Error.
const maxStreamStderr = 64 << 10

// Stream runs git with args in dir, its standard input read from stdin and
// its standard output written to stdout as git produces them: the
// stateless-rpc halves of git's smart HTTP protocol (upload-pack,
// receive-pack), whose input and output are packs too large to buffer. env
// adds variables ("NAME=value"), as RunEnv.
//
// Stream takes no in-process lock: git locks each ref it updates and the
// other commands retry on a held lock. A cancelled ctx kills a read-only
// git at once; receive-pack, which writes refs, is not killed half way (its
// input ends when the client goes) and ends at ctx's deadline at the
// latest. A failure is an *Error carrying the tail of git's stderr.
func Stream(ctx context.Context, dir string, env []string, stdin io.Reader, stdout io.Writer, args ...string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	if cmd, _ := command(args); cmd == "receive-pack" {
		deadline, _ := ctx.Deadline()
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
	}
	started.Add(1)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	stderr := &tailBuffer{max: maxStreamStderr}
	cmd.Stderr = stderr
	cmd.Env = append(withoutAPIKeys(os.Environ()), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if err == nil {
		return nil
	}
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
	return &Error{Dir: dir, Args: args, ExitCode: code, Stderr: strings.TrimSpace(stderr.String()), Err: err}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > t.max {
		p = p[len(p)-t.max:]
	}
	if over := t.buf.Len() + len(p) - t.max; over > 0 {
		t.buf.Next(over)
	}
	t.buf.Write(p)
	return n, nil
}

func (t *tailBuffer) String() string { return t.buf.String() }
