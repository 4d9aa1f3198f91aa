package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Command is the launcher's subcommand of the neuraphage binary.
const Command = "sandbox-exec"

// Args returns the launcher's arguments (after the subcommand) that run
// argv under p.
func (p Policy) Args(argv ...string) []string {
	var out []string
	for _, w := range p.Write {
		out = append(out, "--write", w)
	}
	for _, o := range p.Objects {
		out = append(out, "--objects", o)
	}
	for _, d := range p.DenyRead {
		out = append(out, "--deny-read", d)
	}
	out = append(out, "--net", p.Network.String())
	if p.Degrade {
		out = append(out, "--degrade")
	}
	out = append(out, "--")
	return append(out, argv...)
}

// ParseArgs reads what Args wrote: the policy and the program to run.
func ParseArgs(args []string) (Policy, []string, error) {
	var p Policy
	var net string
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Func("write", "a path the command may write (repeatable)", func(s string) error {
		p.Write = append(p.Write, s)
		return nil
	})
	fs.Func("objects", "a git object directory whose loose objects the command may write (repeatable)", func(s string) error {
		p.Objects = append(p.Objects, s)
		return nil
	})
	fs.Func("deny-read", "a path the command may not read (repeatable)", func(s string) error {
		p.DenyRead = append(p.DenyRead, s)
		return nil
	})
	fs.StringVar(&net, "net", "allow", "allow, deny or a list of TCP ports")
	fs.BoolVar(&p.Degrade, "degrade", false, "run with less where the kernel cannot enforce the policy")
	if err := fs.Parse(args); err != nil {
		return Policy{}, nil, fmt.Errorf("%s: %w", Command, err)
	}
	var err error
	if p.Network, err = ParseNetwork(net); err != nil {
		return Policy{}, nil, fmt.Errorf("%s: --net: %w", Command, err)
	}
	for _, w := range slices.Concat(p.Write, p.Objects, p.DenyRead) {
		if !filepath.IsAbs(w) {
			return Policy{}, nil, fmt.Errorf("%s: want absolute paths, got %q", Command, w)
		}
	}
	if fs.NArg() == 0 {
		return Policy{}, nil, fmt.Errorf("%s: no program to run; usage: %s [--write DIR]... [--objects DIR]... [--deny-read PATH]... [--net allow|deny|PORTS] -- PROGRAM [ARGS...]", Command, Command)
	}
	return p, fs.Args(), nil
}

// Exec is the launcher: it applies the policy in args to this process and
// replaces it with the program args name, with the same environment. It
// returns only on failure, having run nothing: a command never runs with
// less confinement than asked.
func Exec(args []string) error {
	parent := os.Getppid()
	p, argv, err := ParseArgs(args)
	if err != nil {
		return err
	}
	prog, err := lookPath(argv[0], os.Getenv("PATH"))
	if err != nil {
		return fmt.Errorf("%s: %w", Command, err)
	}
	if err := p.Apply(); err != nil {
		return fmt.Errorf("%s: %w", Command, err)
	}
	if err := dieWithParent(parent); err != nil {
		return fmt.Errorf("%s: %w", Command, err)
	}
	err = syscall.Exec(prog, argv, os.Environ())
	return fmt.Errorf("%s: running %s: %w", Command, argv[0], err)
}

// lookPath finds prog in path unless it names a file itself.
func lookPath(prog, path string) (string, error) {
	if strings.Contains(prog, "/") {
		return prog, nil
	}
	for dir := range strings.SplitSeq(path, ":") {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New(prog + ": not found in PATH")
}

// Self returns the path to re-execute this program as the launcher: its
// name as it was started (argv[0]), looked up in PATH when it has no slash,
// so a program started under another name than its file's (as test
// harnesses do) is re-executed the same way; else the running executable.
func Self() (string, error) {
	if name := os.Args[0]; name != "" {
		if p, err := lookPath(name, os.Getenv("PATH")); err == nil {
			return filepath.Abs(p)
		}
	}
	return os.Executable()
}

// ServeLauncher makes a test binary its own launcher: when started as
// `<binary> sandbox-exec ...` it runs Exec and exits 126 if that fails;
// otherwise it returns. Call it first in TestMain of packages whose tests
// run commands through Self.
func ServeLauncher() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		fmt.Fprintln(os.Stderr, Exec(os.Args[2:]))
		os.Exit(126)
	}
}
