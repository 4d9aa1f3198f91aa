package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// DefaultDenyRead lists the secret locations under the user's home that
// commands may not read; the daemon adds its own data and run directories.
var DefaultDenyRead = []string{".ssh", ".aws", ".config/gcloud"}

// Launcher runs commands through the sandbox launcher. The zero value (or a
// nil *Launcher) runs them as they are.
type Launcher struct {
	// Exe is the program re-executed as the launcher (the neuraphage
	// binary, or a test binary that handles the subcommand); it is run as
	// `Exe sandbox-exec ...`.
	Exe string
	// Status is what the kernel offers (Probe), or Off.
	Status Status
	// Require refuses to run commands when Status is not available,
	// instead of running them unconfined.
	Require bool
	// Write lists the paths every command may write, besides its task's.
	Write []string
	// DenyRead lists the paths no command may read.
	DenyRead []string
	// Network is what every command may reach.
	Network Network
	// BranchDir is the directory of task branches under refs/heads
	// ("neuraphage"). A task's git may update the refs in the directory of
	// its own branch (Task.Branch), only when that directory is BranchDir
	// or beneath it: for neuraphage/<id>/work, refs/heads/neuraphage/<id>
	// alone.
	BranchDir string
	// Log receives what goes wrong when a command's objects are moved
	// into the shared store at its end; nil discards it.
	Log *slog.Logger
}

// Task is what one task's command may be given.
type Task struct {
	// Dir is the task's worktree (or working directory), writable.
	Dir string
	// TempDir is the task's own temporary directory, writable; "" for none.
	TempDir string
	// Repo is the repository the worktree belongs to, as the daemon knows
	// it (never read from the worktree): git may commit in the worktree on
	// its branch. "" grants git nothing outside Dir.
	Repo string
	// Branch is the task's branch, as the daemon knows it (never read from
	// the worktree), "neuraphage/<id>/work": git may update the refs and
	// reflogs in its directory (refs/heads/neuraphage/<id>), which holds no
	// other task's. "" grants no ref.
	Branch string
	// Narrow, when set, is applied to the policy before the command runs:
	// a task's sandbox manifest narrowing it (lifecycle.NarrowSandbox).
	// It may only take away; Wrap keeps what it returns within the
	// policy it was given.
	Narrow func(Policy) Policy
}

// ErrRequired is returned by Wrap when the sandbox is required but cannot
// be applied.
var ErrRequired = errors.New("sandbox.require is set and commands cannot be confined")

// Wrap returns c made to run confined to task t: the launcher is run in c's
// place with the program (c.Shell with /bin/sh -c, or c.Args) after it.
// Without a usable sandbox it returns c as it is, or ErrRequired when the
// launcher requires one. Everything else in c (directory, environment,
// timeout, output) is kept, so proc runs the launcher as it would run c.
func (l *Launcher) Wrap(c proc.Cmd, t Task) (proc.Cmd, error) {
	if l == nil {
		return c, nil
	}
	own := l.TaskObjects(t)
	if !l.Status.Available() {
		if l.Require {
			reason := "the sandbox is off"
			if !l.Status.Off {
				reason = l.Status.Reason
			}
			return proc.Cmd{}, fmt.Errorf("%w: %s", ErrRequired, reason)
		}
		return l.withObjects(c, own), nil
	}
	if l.Require && !l.Network.Allows() && l.Status.ABI < TCP {
		return proc.Cmd{}, fmt.Errorf("%w: network %s needs Landlock ABI v%d, the kernel has v%d", ErrRequired, l.Network, TCP, l.Status.ABI)
	}
	argv := c.Args
	if c.Shell != "" {
		argv = []string{"/bin/sh", "-c", c.Shell}
	}
	if len(argv) == 0 {
		return proc.Cmd{}, errors.New("sandbox: no command to run")
	}
	p := l.policy(t, own)
	if t.Narrow != nil {
		p = within(t.Narrow(p), p)
	}
	c = l.withObjects(c, own)
	if c.Label == "" {
		c.Label = cmp.Or(c.Shell, strings.Join(argv, " "))
	}
	c.Shell = ""
	c.Args = append([]string{l.Exe, Command}, p.Args(argv...)...)
	return c, nil
}

// Policy is the policy of a command of task t.
func (l *Launcher) Policy(t Task) Policy { return l.policy(t, l.TaskObjects(t)) }

// policy is the policy of a command of task t whose object directory is
// own ("" for none: its loose objects go to the shared store).
func (l *Launcher) policy(t Task, own string) Policy {
	write := []string{t.Dir, t.TempDir}
	git, objects := GitWrites(t.Dir, t.Repo, l.RefDir(t.Branch))
	if objects != "" && own != "" {
		objects = own // the shared store stays read-only
	}
	write = append(write, git...)
	write = append(write, l.Write...)
	return Policy{
		Write:    compact(write),
		Objects:  compact([]string{objects}),
		DenyRead: compact(l.DenyRead),
		Network:  l.Network,
		Degrade:  !l.Require,
	}
}

// TaskObjects returns the object directory of task t, where its git writes
// objects: the one made at provisioning ([ProvideObjects]) in the
// repository the daemon knows (t.Repo), for the task its branch's
// directory names (neuraphage/<id>/work: <id>). It is "" for a task
// provisioned before tasks had one, or on a flat branch (its commands
// write loose objects in the shared store, as they did), or without git.
func (l *Launcher) TaskObjects(t Task) string {
	ref := l.RefDir(t.Branch)
	if ref == "" || ref == l.BranchDir || t.Repo == "" {
		return ""
	}
	common := commonDir(t.Repo)
	if common == "" {
		return ""
	}
	dir := ObjectDir(common, path.Base(ref))
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}

// The variables that point git at a task's object directory, and at the
// shared store it reads from.
const (
	EnvObjects    = "GIT_OBJECT_DIRECTORY"
	EnvAlternates = "GIT_ALTERNATE_OBJECT_DIRECTORIES"
)

// withObjects returns c with its git writing objects in own and reading the
// shared store beside it (c's environment, or the caller's when c has none,
// with GIT_OBJECT_DIRECTORY and GIT_ALTERNATE_OBJECT_DIRECTORIES set), own
// listed in the shared store's alternates while it runs and its objects
// moved into the shared store when it ends (BeginObjects and EndObjects,
// as c's Before and After); or c as it is when own is "".
func (l *Launcher) withObjects(c proc.Cmd, own string) proc.Cmd {
	if own == "" {
		return c
	}
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, EnvObjects+"=") || strings.HasPrefix(kv, EnvAlternates+"=")
	})
	// own is <common>/neuraphage/objects/<id>.
	shared := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(own))), "objects")
	c.Env = append(env, EnvObjects+"="+own, EnvAlternates+"="+shared)
	before, after := c.Before, c.After
	c.Before = func() error {
		if before != nil {
			if err := before(); err != nil {
				return err
			}
		}
		if err := BeginObjects(own); err != nil {
			if after != nil {
				after()
			}
			return fmt.Errorf("listing the task's object directory: %w", err)
		}
		return nil
	}
	c.After = func() {
		l.ended(own)
		if after != nil {
			after()
		}
	}
	return c
}

// ended moves the objects of a command that ended into the shared store.
func (l *Launcher) ended(own string) {
	m, err := EndObjects(own)
	l.report(own, m, err)
}

// report logs what went wrong moving own's objects.
func (l *Launcher) report(own string, m Moved, err error) {
	if l == nil || l.Log == nil {
		return
	}
	if err != nil {
		l.Log.Warn("the task's objects were not moved into the shared store; moved at its next command's end or its worktree's removal", "dir", own, "err", err)
	}
	if len(m.Corrupt) > 0 {
		l.Log.Warn("task objects whose content did not match their name were dropped", "dir", own, "objects", m.Corrupt)
	}
}

// Settle moves the objects task t's commands wrote so far into the shared
// store (SettleObjects), for a command that runs long (an agent CLI living
// across turns) at each turn's end: its commits are then in the shared
// store, as a bash call's are when it returns. A task without an object
// directory has nothing to settle.
func (l *Launcher) Settle(t Task) error {
	own := l.TaskObjects(t)
	if own == "" {
		return nil
	}
	m, err := SettleObjects(own)
	l.report(own, m, err)
	return err
}

// RefDir returns the directory under refs/heads whose refs a task on branch
// may update: the branch's own directory, when it is BranchDir or beneath
// it, else "". For neuraphage/<id>/work it is neuraphage/<id>, which no
// other task's branch shares; for a branch named before task branches had
// a directory each (neuraphage/<id>), it is BranchDir itself, shared by
// every task branch.
func (l *Launcher) RefDir(branch string) string {
	if l == nil || l.BranchDir == "" || branch == "" || path.Clean(branch) != branch || strings.HasPrefix(branch, "/") {
		return ""
	}
	d := path.Dir(branch)
	if d != l.BranchDir && !strings.HasPrefix(d, l.BranchDir+"/") {
		return ""
	}
	return d
}

// compact cleans paths and drops empty ones and duplicates.
func compact(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// HomeDenyRead returns DefaultDenyRead under home, then extra, absolute.
func HomeDenyRead(home string, extra ...string) []string {
	var out []string
	if home != "" {
		for _, d := range DefaultDenyRead {
			out = append(out, filepath.Join(home, d))
		}
	}
	return append(out, extra...)
}

// TempDir makes the private temporary directory of one task under root
// (0700, root made if missing) and returns its path.
func TempDir(root, name string) (string, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", fmt.Errorf("making the tasks' temporary directory: %w", err)
	}
	d := filepath.Join(root, name)
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("making the task's temporary directory: %w", err)
	}
	if err := os.Chmod(d, 0o700); err != nil {
		return "", fmt.Errorf("making the task's temporary directory private: %w", err)
	}
	return d, nil
}

// within returns n with what p does not grant taken away: writes only
// within p's, p's denied reads kept, p's network rules kept.
func within(n, p Policy) Policy {
	out := p
	out.Write = nil
	for _, w := range n.Write {
		for _, pw := range p.Write {
			if w == pw || strings.HasPrefix(w, strings.TrimSuffix(pw, "/")+"/") {
				out.Write = append(out.Write, w)
				break
			}
		}
	}
	out.Objects = nil
	for _, o := range n.Objects {
		if slices.Contains(p.Objects, o) {
			out.Objects = append(out.Objects, o)
		}
	}
	out.DenyRead = compact(append(slices.Clone(p.DenyRead), n.DenyRead...))
	if n.Network.Deny || (len(n.Network.Ports) > 0 && p.Network.Allows()) {
		out.Network = n.Network
	}
	return out
}
