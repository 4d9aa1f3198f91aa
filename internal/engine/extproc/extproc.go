// Package extproc is the plumbing every external agent CLI engine (Claude
// Code, Codex, Gemini CLI) shares: the CLI started as one long-lived
// process per running task, in its own process group, through the task
// sandbox's launcher and recorded by the process tracker (proc.Session);
// JSON lines written to its stdin one at a time; its stdout read as JSON
// lines, a malformed line logged and skipped; the tail of its stderr kept
// for the reason of a crash; and the clean environment the CLI starts with.
package extproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Spec is one CLI process to start.
type Spec struct {
	// Args is the program and its arguments.
	Args []string
	// Dir is the working directory: the task's worktree.
	Dir string
	// Env is the whole environment (see Environ).
	Env []string
	// Launcher confines the process and everything it starts to Task (nil
	// runs it unconfined).
	Launcher *sandbox.Launcher
	Task     sandbox.Task
	// Label names the process in the tracker's records and reports.
	Label string
}

// Proc is a running CLI.
type Proc struct {
	s   *proc.Session
	wmu sync.Mutex

	launcher *sandbox.Launcher // for Settle
	task     sandbox.Task
}

// Start starts the CLI. Under a context from proc.WithOwner (the executor
// gives every run one) it is recorded before it starts. ctx ending stops
// it; so does Stop.
func Start(ctx context.Context, sp Spec) (*Proc, error) {
	c := proc.Cmd{Args: sp.Args, Dir: sp.Dir, Env: sp.Env, Label: sp.Label}
	c, err := sp.Launcher.Wrap(c, sp.Task)
	if err != nil {
		return nil, err
	}
	s, err := proc.Start(ctx, c)
	if err != nil {
		return nil, err
	}
	return &Proc{s: s, launcher: sp.Launcher, task: sp.Task}, nil
}

// Settle moves the objects the CLI's commands wrote so far into the
// repository's shared store (sandbox.Launcher.Settle), for a CLI that
// lives across turns, at each turn's end: its commits are then there, as
// a command's are when it ends. A failure is logged by the launcher; the
// objects move when the CLI stops.
func (p *Proc) Settle() {
	if p != nil && p.launcher != nil {
		_ = p.launcher.Settle(p.task)
	}
}

// WriteLine writes v as one JSON line to the CLI's stdin. It returns once
// the pipe has taken the whole line: from then on the CLI can read it.
// Writes are serialised.
func (p *Proc) WriteLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding a line for the CLI: %w", err)
	}
	b = append(b, '\n')
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if _, err := p.s.Stdin.Write(b); err != nil {
		return fmt.Errorf("writing to the CLI: %w", err)
	}
	return nil
}

// CloseStdin closes the CLI's stdin: a CLI that reads its input to the
// end before it starts (a one-shot run) starts then.
func (p *Proc) CloseStdin() error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.s.Stdin.Close()
}

// Stdout is the CLI's output.
func (p *Proc) Stdout() io.Reader { return p.s.Stdout }

// Done is closed when the CLI has exited.
func (p *Proc) Done() <-chan struct{} { return p.s.Done() }

// ExitCode is the CLI's exit status once Done is closed.
func (p *Proc) ExitCode() int { return p.s.ExitCode() }

// PID is the CLI's process id (its group's).
func (p *Proc) PID() int { return p.s.PID() }

// Stop ends the CLI's process group and waits for it.
func (p *Proc) Stop() { p.s.Stop() }

// StderrTail is the last n bytes the CLI wrote on stderr, trimmed.
func (p *Proc) StderrTail(n int) string {
	return words.Tail(strings.TrimSpace(p.s.StderrTail()), n)
}

// MaxLine bounds one line of a CLI's output; a longer one is skipped as
// malformed.
const MaxLine = 64 << 20

// ErrLineTooLong is reported for a line longer than MaxLine.
var ErrLineTooLong = errors.New("line longer than the limit")

// ReadLines reads JSON lines from r until EOF or an error, calling line
// with each well-formed one (the slice is only valid during the call).
// Blank lines are skipped; a line that is not JSON, or too long, is logged
// with its start and skipped. It returns nil at EOF, line's error when it
// returns one, or the read error.
func ReadLines(r io.Reader, log *slog.Logger, line func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(buf) > MaxLine {
				log.Warn("skipping a malformed line from the CLI", "err", ErrLineTooLong, "start", words.Clip(string(buf), 120))
				buf, skipping = buf[:0], true
			}
			continue
		}
		if !skipping {
			if b := bytes.TrimSpace(buf); len(b) > 0 {
				if !json.Valid(b) {
					log.Warn("skipping a malformed line from the CLI", "start", words.Clip(string(b), 120))
				} else if lerr := line(b); lerr != nil {
					return lerr
				}
			}
		}
		buf, skipping = buf[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// BaseEnvAllow lists the variables of the daemon's environment a CLI
// inherits, besides the LC_* locale variables and the names an engine
// adds.
var BaseEnvAllow = []string{"PATH", "HOME", "LANG", "TERM", "TZ", "USER", "SHELL", "LOGNAME", "NODE_EXTRA_CA_CERTS",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"}

// Environ is a CLI's environment: the allowed variables of parent
// (BaseEnvAllow, LC_*, allow) without secrets (proc.Secret: keys, tokens,
// the daemon's own variables), then vars, which the engine sets itself
// (its provider key among them) and which win over parent's.
func Environ(parent, allow, vars []string) []string {
	var env []string
	set := map[string]bool{}
	for _, kv := range vars {
		name, _, _ := strings.Cut(kv, "=")
		set[name] = true
	}
	for _, kv := range parent {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || proc.Secret(name) || set[name] {
			continue
		}
		if slices.Contains(BaseEnvAllow, name) || strings.HasPrefix(name, "LC_") || slices.Contains(allow, name) {
			env = append(env, kv)
		}
	}
	return append(env, vars...)
}
