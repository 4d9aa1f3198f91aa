package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

// taskSandbox is the sandbox of task commands: the launcher the bash tool
// runs them through, each task's temporary directory, and the one event per
// task that says when commands run with less confinement than configured.
type taskSandbox struct {
	launcher *sandbox.Launcher
	tmpRoot  string // DataDir/tmp: one private directory per task
	st       store.Store
	log      *slog.Logger

	mu     sync.Mutex
	warned map[task.ID]bool
}

// newTaskSandbox probes the kernel and builds the launcher from the config:
// commands may not read the user's keys nor the daemon's own directories.
func newTaskSandbox(cfg config.Sandbox, p config.Paths, getenv func(string) string, st store.Store, log *slog.Logger) (*taskSandbox, error) {
	status := sandbox.Probe()
	status.Off = !cfg.Enabled
	exe, err := sandbox.Self()
	if err != nil && status.Available() {
		return nil, fmt.Errorf("finding the neuraphage binary for the sandbox launcher: %w", err)
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	net := sandbox.Network{Deny: cfg.Network.Deny}
	for _, port := range cfg.Network.Ports {
		net.Ports = append(net.Ports, uint16(port))
	}
	deny := append(config.ExpandHome(cfg.DenyRead, home), p.DataDir, p.RunDir, p.LogDir)
	return &taskSandbox{
		launcher: &sandbox.Launcher{
			Exe: exe, Status: status, Require: cfg.Require,
			Write:    config.ExpandHome(cfg.Write, home),
			DenyRead: sandbox.HomeDenyRead(home, deny...),
			Network:  net,
			// Task branches are neuraphage/<id>/work: a task's git may
			// update the refs in its own branch's directory,
			// refs/heads/neuraphage/<id>, made at each launch when
			// missing (see sandbox.GitWrites).
			BranchDir: strings.TrimSuffix(worktree.BranchPrefix, "/"),
			Log:       log,
		},
		tmpRoot: filepath.Join(p.DataDir, "tmp"),
		st:      st, log: log,
		warned: map[task.ID]bool{},
	}, nil
}

// status is the sandbox as `daemon status` shows it.
func (s *taskSandbox) status() api.Sandbox {
	l := s.launcher
	out := api.Sandbox{Network: l.Network.String(), Require: l.Require, Summary: l.Status.String()}
	switch {
	case l.Status.Off:
		out.Mode = "off"
	case l.Status.ABI == 0:
		out.Mode = "none"
	default:
		out.Mode, out.ABI = "landlock", l.Status.ABI
	}
	if l.Require && !l.Status.Available() {
		out.Summary += "; commands are refused (sandbox.require)"
	}
	return out
}

// shortfall says what the sandbox does not enforce of the config, or "".
func (s *taskSandbox) shortfall() string {
	l := s.launcher
	switch {
	case l.Require:
		return "" // refused instead, with the reason, at each command
	case !l.Status.Available():
		return "commands run behind the deny-list alone, not confined: " + l.Status.String()
	case !l.Network.Allows() && l.Status.ABI < sandbox.TCP:
		return fmt.Sprintf("sandbox.network %s is not enforced: it needs Landlock ABI v%d, the kernel has v%d", l.Network, sandbox.TCP, l.Status.ABI)
	}
	return ""
}

// prepare makes the task's temporary directory and returns the variables
// its commands get (TMPDIR); it records once per task and daemon run what
// the sandbox does not enforce.
func (s *taskSandbox) prepare(ctx context.Context, id task.ID) ([]string, error) {
	tmp, err := sandbox.TempDir(s.tmpRoot, string(id))
	if err != nil {
		return nil, err
	}
	if note := s.shortfall(); note != "" {
		s.mu.Lock()
		first := !s.warned[id]
		s.warned[id] = true
		s.mu.Unlock()
		if first {
			if err := s.st.EmitEvents(ctx, event.New(time.Now(), id, event.TaskSandbox{Mode: s.launcher.Status.String(), Note: note})); err != nil {
				s.log.Warn("recording the sandbox's shortfall", "task_id", id, "err", err)
			}
		}
	}
	return []string{"TMPDIR=" + tmp}, nil
}

// confine wraps the setup command of task w's worktree as the task's own
// commands are: its temporary directory, then the sandbox (or a refusal
// under sandbox.require).
func (s *taskSandbox) confine(ctx context.Context, c proc.Cmd, w store.Worktree) (proc.Cmd, error) {
	env, err := s.prepare(ctx, w.TaskID)
	if err != nil {
		return c, err
	}
	c.Env = append(c.Env, env...)
	return s.launcher.Wrap(c, sandbox.Task{
		Dir: w.Path, TempDir: filepath.Join(s.tmpRoot, string(w.TaskID)), Repo: w.Repo, Branch: w.Branch,
	})
}

// remove deletes a task's temporary directory.
func (s *taskSandbox) remove(id task.ID) {
	if err := os.RemoveAll(filepath.Join(s.tmpRoot, string(id))); err != nil {
		s.log.Warn("removing a task's temporary directory", "task_id", id, "err", err)
	}
}

// Run removes the temporary directory of each task that ends, after
// removing those of tasks that ended (or vanished) while the daemon was
// down. It returns when ctx ends.
func (s *taskSandbox) Run(ctx context.Context, bus *event.Bus) error {
	sub := bus.Subscribe(event.Filter{Kinds: []string{string(event.KindTaskStatus)}})
	defer func() { sub.Close() }()
	if entries, err := os.ReadDir(s.tmpRoot); err == nil {
		for _, e := range entries {
			id := task.ID(e.Name())
			t, err := s.st.GetTask(ctx, id)
			if err == nil && !t.Status.Terminal() {
				continue
			}
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				continue
			}
			s.remove(id)
		}
	}
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, event.ErrClosed) {
				return nil
			}
			if errors.Is(err, event.ErrLagged) {
				sub.Close()
				sub = bus.Subscribe(event.Filter{Kinds: []string{string(event.KindTaskStatus)}})
				continue
			}
			return err
		}
		if p, ok := e.Payload.(event.TaskStatus); ok && p.To.Terminal() {
			s.remove(e.TaskID)
		}
	}
}
