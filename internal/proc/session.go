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

// StderrTailSize is how many bytes of a Session's stderr are kept.
const StderrTailSize = 8 << 10

// Session is a long-lived child started by Start: an agent CLI that reads
// requests on its stdin and writes replies on its stdout for as long as a
// task runs. Like Run's commands it has its own process group, is killed as
// a group, and under a context from WithOwner is recorded in the Tracker
// before it starts, so what a dead daemon left of it is found at the next
// start.
//
// The caller writes Stdin and reads Stdout; Stop (or the end of Start's
// context) ends the group, closes both and waits for the child.
type Session struct {
	// Stdin is the child's standard input. Closing it tells the child
	// there is no more input.
	Stdin io.WriteCloser
	// Stdout is the child's standard output. It reaches EOF when the
	// child and its group are gone, or an error once Stop closed it.
	Stdout io.Reader

	cmd    *exec.Cmd
	pgid   int
	grace  time.Duration
	stdout *os.File
	stderr *tailBuffer
	errEOF chan struct{} // closed when stderr is drained

	done     chan struct{} // closed once the child was waited for
	waitErr  error
	stopOnce sync.Once
	stopped  chan struct{} // closed once Stop finished
	stopReq  chan struct{}
	reqOnce  sync.Once

	owner   owner
	tracked bool
	rec     Record
	after   func() // c.After, run once the group is gone
}

// Start starts c as a Session. c.Stdin, c.Timeout, c.MaxOutput and
// c.SeparateStderr are ignored: input and output are the Session's pipes,
// stderr's last StderrTailSize bytes are kept (StderrTail). c.Before runs
// before the child starts (its error is Start's), c.After once the session
// is stopped and its group gone (or when the child could not start). The Session
// ends when ctx does; Stop ends it earlier. The caller must call Stop (or
// let ctx end and call Wait) to release it.
func Start(ctx context.Context, c Cmd) (*Session, error) {
	argv, err := c.argv()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.Before != nil {
		if err := c.Before(); err != nil {
			return nil, err
		}
	}
	started := false
	if c.After != nil {
		defer func() {
			if !started {
				c.After()
			}
		}()
	}
	grace := cmp.Or(c.Grace, DefaultGrace)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	s := &Session{cmd: cmd, grace: grace, stderr: &tailBuffer{max: StderrTailSize}, errEOF: make(chan struct{}),
		done: make(chan struct{}), stopped: make(chan struct{}), stopReq: make(chan struct{})}
	var cg *os.File
	s.owner, s.tracked = ownerFrom(ctx)
	if s.tracked {
		if s.rec, cg, err = s.owner.t.begin(s.owner.name, cmp.Or(c.Label, strings.Join(argv, " "))); err != nil {
			return nil, err
		}
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(slices.Clip(cmd.Env), EnvToken+"="+s.rec.Token)
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	ir, iw, err1 := pipe()
	or, ow, err2 := pipe()
	er, ew, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		if s.tracked {
			s.owner.t.abandon(s.rec)
		}
		return nil, fmt.Errorf("creating pipes: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ir, ow, ew
	cmd.SysProcAttr = sysProcAttr()
	if cg != nil {
		intoCgroup(cmd.SysProcAttr, cg)
	}
	err = cmd.Start()
	if cg != nil {
		cg.Close()
	}
	if err != nil {
		closeAll()
		if s.tracked {
			s.owner.t.abandon(s.rec)
		}
		return nil, fmt.Errorf("starting %s: %w", describe(argv), err)
	}
	if s.tracked {
		s.rec, _ = s.owner.t.started(s.rec, cmd.Process.Pid)
	}
	started, s.after = true, c.After
	ir.Close()
	ow.Close()
	ew.Close()
	s.pgid = cmd.Process.Pid
	s.Stdin, s.Stdout, s.stdout = iw, or, or
	go func() { // owned by s; ends at EOF on stderr or when Stop closes er
		defer close(s.errEOF)
		_, _ = io.Copy(s.stderr, er)
		er.Close()
	}()
	go func() { // owned by s; ends when the child is waited for
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	go func() { // owned by s; ends when the session is stopped
		select {
		case <-ctx.Done():
		case <-s.stopReq:
		case <-s.done:
			// The child exited by itself: what it left in its group
			// goes; the output is still read to its end.
			_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
			select {
			case <-ctx.Done():
			case <-s.stopReq:
			}
		}
		s.stop()
	}()
	return s, nil
}

// PID is the child's process id, also its process group's.
func (s *Session) PID() int { return s.pgid }

// Done is closed when the child has exited.
func (s *Session) Done() <-chan struct{} { return s.done }

// ExitCode is the child's exit status once Done is closed (128+n when
// signal n ended it), -1 before.
func (s *Session) ExitCode() int {
	select {
	case <-s.done:
		return exitCode(s.cmd.ProcessState, s.waitErr)
	default:
		return -1
	}
}

// StderrTail returns the last bytes the child wrote on stderr so far.
func (s *Session) StderrTail() string {
	select {
	case <-s.done:
		// Give the reader a moment to take what the child wrote last.
		t := time.NewTimer(s.grace)
		defer t.Stop()
		select {
		case <-s.errEOF:
		case <-t.C:
		}
	default:
	}
	return s.stderr.String()
}

// Stop ends the session: SIGTERM to the group, SIGKILL after the grace
// period, and whatever carries its token once it is gone; then the pipes
// are closed. It waits for all of that and is safe to call more than once
// and concurrently.
func (s *Session) Stop() {
	s.reqOnce.Do(func() { close(s.stopReq) })
	<-s.stopped
}

// Wait waits until the session is stopped (by Stop or the end of Start's
// context).
func (s *Session) Wait() { <-s.stopped }

func (s *Session) stop() {
	s.stopOnce.Do(func() {
		select {
		case <-s.done:
		default:
			_ = syscall.Kill(-s.pgid, syscall.SIGTERM)
			t := time.NewTimer(s.grace)
			select {
			case <-s.done:
			case <-t.C:
				_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
				<-s.done
			}
			t.Stop()
		}
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
		if s.tracked {
			s.owner.t.end(s.rec)
		}
		if s.after != nil {
			s.after()
		}
		s.Stdin.Close()
		// A process outside the group may hold the output open: the
		// reader is released after the grace period.
		t := time.NewTimer(s.grace)
		select {
		case <-s.errEOF:
		case <-t.C:
		}
		t.Stop()
		s.stdout.Close()
		close(s.stopped)
	})
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
