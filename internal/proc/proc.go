// Package proc runs child processes for tools: one command at a time, with a
// timeout, output captured and capped, and nothing left behind.
//
// Every child starts in its own process group. When the timeout passes or the
// context is cancelled the whole group gets SIGTERM, then SIGKILL once the
// child has exited or a grace period has passed, whichever comes first. When
// the command ends for any reason, whatever is left of its group is killed, so a background job started by a shell command does not outlive
// the call. Run returns even if some process that escaped the group (for
// example with setsid) still holds the output pipe open.
//
// Under a context from WithOwner, a Tracker records the command before it
// starts (a token in its environment, then its process group and start
// time, and a cgroup where cgroup v2 is delegated), so that processes that
// left the group are killed too when it ends, what a task's run left is
// stopped when the run ends, and what a dead daemon left is found and
// stopped at the next start.
//
// It is the only package besides spawn and git that imports os/exec.
package proc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults for Cmd's zero fields.
const (
	DefaultMaxOutput = 1 << 20
	DefaultGrace     = 2 * time.Second
)

// Cmd describes one command. Exactly one of Shell and Args is set.
type Cmd struct {
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Shell is a command line run with /bin/sh -c.
	Shell string
	// Args is a program and its arguments, run without a shell. The program
	// is looked up in PATH when it contains no slash.
	Args []string
	// Env is the child's environment; nil means the caller's.
	Env []string
	// Timeout ends the command after this long; zero means no timeout
	// (the context still applies).
	Timeout time.Duration
	// MaxOutput caps the bytes of Result.Output; zero means DefaultMaxOutput.
	MaxOutput int
	// Stdin is what the child reads on its standard input; nil means
	// /dev/null.
	Stdin []byte
	// SeparateStderr keeps stderr out of Result.Output, in Result.Stderr
	// (capped alike), for commands whose stdout is a reply to parse.
	SeparateStderr bool
	// Label is what the process records and reports call the command;
	// empty means Shell, or Args joined. A wrapper such as the sandbox
	// launcher sets it to the command it wraps.
	Label string
	// Grace is how long the group has between SIGTERM and SIGKILL, and how
	// long Run waits for the output pipe to close once the group is gone;
	// zero means DefaultGrace.
	Grace time.Duration
	// Before and After, when set, run around the command, for a wrapper
	// such as the sandbox launcher: Before just before it starts (an
	// error starts nothing and is Run's error); After once it has ended
	// and its group is gone, before Run returns, whenever Before
	// succeeded (or is nil) and the command was asked to start.
	Before func() error
	After  func()
}

// Result is what happened to a command that started.
type Result struct {
	// Output is stdout and stderr interleaved as the child wrote them. When
	// longer than MaxOutput its middle is replaced by a line saying how many
	// bytes were dropped.
	Output string
	// OutputBytes is how many bytes the child wrote to Output's streams,
	// kept or dropped.
	OutputBytes int64
	// Stderr is the child's stderr when Cmd.SeparateStderr is set.
	Stderr string
	// ExitCode is the command's exit status; 128+n when signal n ended it,
	// as shells report it.
	ExitCode int
	// TimedOut says the timeout ended the command.
	TimedOut bool
	// Cancelled says the context ended the command.
	Cancelled bool
	// Duration is the time from start to return.
	Duration time.Duration
	// Escaped lists the processes of a tracked command (see WithOwner)
	// that had left its process group (setsid, a double fork) and were
	// still running when it ended; they were killed then.
	Escaped []Process
}

// Run runs c and waits for it. A non-zero exit, a timeout and a cancellation
// are reported in the Result; the error is non-nil only when the command
// could not be started (no such program or directory, bad Cmd). A context
// that is already done starts nothing and reports Cancelled.
func Run(ctx context.Context, c Cmd) (Result, error) {
	start := time.Now()
	argv, err := c.argv()
	if err != nil {
		return Result{}, err
	}
	if ctx.Err() != nil {
		return Result{Cancelled: true, ExitCode: -1}, nil
	}
	if c.Before != nil {
		if err := c.Before(); err != nil {
			return Result{}, err
		}
	}
	if c.After != nil {
		defer c.After()
	}
	maxOut := c.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}

	// The pipe is ours, not exec's, so Wait returns as soon as the child
	// exits; reading is joined separately below with a bound.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("creating output pipe: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	// Under WithOwner the command is recorded before it starts, and its
	// processes carry the record's token.
	var rec Record
	var cg *os.File
	o, tracked := ownerFrom(ctx)
	if tracked {
		if rec, cg, err = o.t.begin(o.name, cmp.Or(c.Label, c.Shell, strings.Join(argv, " "))); err != nil {
			pr.Close()
			pw.Close()
			return Result{}, err
		}
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(slices.Clip(cmd.Env), EnvToken+"="+rec.Token)
	}
	cmd.Stdout = pw
	cmd.Stderr = pw
	// Stdin gets a pipe of ours, as the output does: exec's own copy would
	// make Wait wait for a background job that holds stdin open.
	var ir, iw *os.File
	if c.Stdin != nil { // else nil: the child reads /dev/null
		if ir, iw, err = os.Pipe(); err != nil {
			pr.Close()
			pw.Close()
			return Result{}, fmt.Errorf("creating stdin pipe: %w", err)
		}
		cmd.Stdin = ir
	}
	var er, ew *os.File
	if c.SeparateStderr {
		if er, ew, err = os.Pipe(); err != nil {
			pr.Close()
			pw.Close()
			return Result{}, fmt.Errorf("creating stderr pipe: %w", err)
		}
		cmd.Stderr = ew
	}
	cmd.SysProcAttr = sysProcAttr()
	if cg != nil {
		intoCgroup(cmd.SysProcAttr, cg)
	}
	err = cmd.Start()
	if cg != nil {
		cg.Close()
	}
	if err != nil {
		pr.Close()
		pw.Close()
		if er != nil {
			er.Close()
			ew.Close()
		}
		if ir != nil {
			ir.Close()
			iw.Close()
		}
		if tracked {
			o.t.abandon(rec)
		}
		return Result{}, fmt.Errorf("starting %s: %w", describe(argv), err)
	}
	if tracked {
		// A record without its group still finds the processes by their
		// token: an error here costs only the group's part of the match.
		rec, _ = o.t.started(rec, cmd.Process.Pid)
	}
	pw.Close()
	if ew != nil {
		ew.Close()
	}
	fed := make(chan struct{})
	if ir != nil {
		ir.Close()
		go func() {
			defer close(fed)
			_, _ = iw.Write(c.Stdin) // ends when written, or when iw is closed below
			iw.Close()
		}()
	} else {
		close(fed)
	}
	pgid := cmd.Process.Pid // Setpgid with Pgid 0: the group is named after the child

	out := newCapped(maxOut)
	errOut := newCapped(maxOut)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		var wg sync.WaitGroup
		if er != nil {
			wg.Go(func() { _, _ = io.Copy(errOut, er) })
		}
		_, _ = io.Copy(out, pr) // ends at EOF or when pr is closed below
		wg.Wait()
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var timeout <-chan time.Time
	if c.Timeout > 0 {
		t := time.NewTimer(c.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var res Result
	var werr error
	select {
	case werr = <-waited:
	case <-timeout:
		res.TimedOut = true
		werr = stop(pgid, waited, grace)
	case <-ctx.Done():
		res.Cancelled = true
		werr = stop(pgid, waited, grace)
	}
	// The leader is gone; whatever it left in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if tracked {
		// And what left the group (setsid, a double fork) but carries the
		// command's token; orphans of ours are reaped.
		res.Escaped = o.t.end(rec)
	}
	if iw != nil {
		iw.Close() // a child that never read all of stdin releases the writer
	}
	<-fed

	drain := time.NewTimer(grace)
	defer drain.Stop()
	select {
	case <-copied:
	case <-drain.C:
		// Something outside the group still holds the pipe: stop reading.
		pr.Close()
		if er != nil {
			er.Close()
		}
		<-copied
	}
	pr.Close()
	if er != nil {
		er.Close()
		res.Stderr = errOut.String()
	}

	res.ExitCode = exitCode(cmd.ProcessState, werr)
	res.Output = out.String()
	res.OutputBytes = out.total
	res.Duration = time.Since(start)
	return res, nil
}

// stop ends the group: SIGTERM, then SIGKILL if the leader has not exited
// within grace. It returns the leader's Wait error.
func stop(pgid int, waited <-chan error, grace time.Duration) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-waited
	}
}

func (c Cmd) argv() ([]string, error) {
	switch {
	case c.Shell != "" && len(c.Args) > 0:
		return nil, errors.New("proc: Cmd sets both Shell and Args")
	case c.Shell != "":
		return []string{"/bin/sh", "-c", c.Shell}, nil
	case len(c.Args) > 0 && c.Args[0] != "":
		return c.Args, nil
	default:
		return nil, errors.New("proc: Cmd sets neither Shell nor Args")
	}
}

func describe(argv []string) string {
	if len(argv) == 3 && argv[0] == "/bin/sh" && argv[1] == "-c" {
		return fmt.Sprintf("sh -c %q", argv[2])
	}
	return fmt.Sprintf("%q", argv)
}

func exitCode(ps *os.ProcessState, werr error) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if code := ps.ExitCode(); code >= 0 {
		return code
	}
	if werr != nil {
		return -1
	}
	return 0
}

// LookPath finds an executable in PATH (exec.LookPath), for callers that
// may not import os/exec.
func LookPath(name string) (string, error) { return exec.LookPath(name) }
