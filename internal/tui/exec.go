package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// runIn asks Update to hand the terminal to prog in dir.
type runIn struct {
	dir, prog string
	shell     bool
}

// execDone: the program run in a worktree exited.
type execDone struct{ err error }

// proc is a tea.ExecCommand: one program in a directory, on the terminal
// Bubble Tea releases for it. It starts the program with os.StartProcess:
// the TUI is no runner of tasks' programs, only of the user's own editor
// or shell, in the foreground.
type proc struct {
	dir  string
	argv []string
	in   io.Reader
	out  io.Writer
	err  io.Writer
}

func newProc(r runIn) *proc {
	// $EDITOR may carry arguments ("code -w"); the worktree is the last.
	argv := strings.Fields(r.prog)
	if !r.shell {
		argv = append(argv, ".")
	}
	return &proc{dir: r.dir, argv: argv}
}

func (p *proc) SetStdin(r io.Reader)  { p.in = r }
func (p *proc) SetStdout(w io.Writer) { p.out = w }
func (p *proc) SetStderr(w io.Writer) { p.err = w }

// Run starts the program on the terminal's files and waits for it.
func (p *proc) Run() error {
	if len(p.argv) == 0 {
		return errors.New("no program to run")
	}
	path := p.argv[0]
	if !filepath.IsAbs(path) {
		found, err := lookPath(path)
		if err != nil {
			return err
		}
		path = found
	}
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for i, s := range []any{p.in, p.out, p.err} {
		if f, ok := s.(*os.File); ok {
			files[i] = f
		}
	}
	pr, err := os.StartProcess(path, p.argv, &os.ProcAttr{Dir: p.dir, Env: os.Environ(), Files: files})
	if err != nil {
		return err
	}
	st, err := pr.Wait()
	if err != nil {
		return err
	}
	if !st.Success() {
		return fmt.Errorf("%s: %s", p.argv[0], st)
	}
	return nil
}

// lookPath finds name on $PATH.
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return filepath.Abs(name)
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		f := filepath.Join(or(dir, "."), name)
		if st, err := os.Stat(f); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return f, nil
		}
	}
	return "", fmt.Errorf("%s is not on $PATH", name)
}

func execCmd(r runIn) tea.Cmd {
	return tea.Exec(newProc(r), func(err error) tea.Msg { return execDone{err} })
}
