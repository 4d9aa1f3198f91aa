// Package codex is the "codex" engine: OpenAI's Codex CLI driven through
// `codex app-server` (JSON-RPC over stdio, docs/engines-wire.md), one
// long-lived CLI process per running task, never keystrokes or screen
// scraping.
//
// The CLI runs in the task's worktree, inside the task sandbox, in its own
// process group recorded by the process tracker, with its own CODEX_HOME
// per task (under the daemon's data directory). The first run starts a
// thread (thread/start) and stores its id with the task's engine state
// (ThreadFile); every later run (a pause's resume, a restart after
// kill -9) continues it with thread/resume. Each boundary of the task is a
// turn (turn/start). What the CLI reports is turned into the observations
// of every engine (package event); the conversation is stored with
// Host.Commit, so the Watcher, the Syncer and the main watcher supervise a
// Codex task as they do a native one.
//
// Injections go through the one door: at a turn boundary as the next
// turn's input; while a turn runs through turn/steer with the running
// turn's id (a turn/start mid-turn would make a turn that never runs), the
// receipt committed once the CLI accepted the steer; an urgent one first
// interrupts the turn (turn/interrupt), a pause interrupts it and ends the
// run, keeping the thread. Each message carries a delivery marker, so a
// run after a crash finds the ones the CLI took but whose receipt was not
// committed in the thread's rollout and does not send them twice.
package codex

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Name is the engine's name.
const Name = "codex"

// Defaults of Options.
const (
	DefaultCommand = "codex"
	// MinVersion is the oldest Codex CLI the engine was verified with.
	MinVersion = "0.169.0"
	// InstallHint says how to install the version the engine wants.
	InstallHint = "npm install -g @openai/codex@" + MinVersion
	// providerName is the custom model provider the engine configures
	// when Neuraphage has OpenAI settings; keyEnv holds its key.
	providerName = "neuraphage"
	keyEnv       = "NEURAPHAGE_CODEX_API_KEY"
)

// Options configures the engine.
type Options struct {
	// Command is the CLI: a path, or a name looked up in PATH; "" means
	// DefaultCommand.
	Command string
	// Args are extra arguments after the engine's own (before none: the
	// app-server takes no prompt).
	Args []string
	// Model returns the model for a task, "" for the CLI's own choice.
	Model func(t task.Task) string
	// StateDir holds each task's engine state: StateDir/<task id>/home is
	// its CODEX_HOME, StateDir/<task id>/thread its thread id.
	StateDir string
	// BaseURL and APIKey, when either is set, point the CLI at that
	// Responses API endpoint through a custom provider (Neuraphage's
	// OpenAI settings, or OPENAI_BASE_URL and OPENAI_API_KEY); unset, the
	// CLI uses its own login.
	BaseURL, APIKey string
	// Network lets the CLI's commands reach the network (its own sandbox
	// setting, from the manifest: lifecycle.Codex).
	Network bool
	// Catalogue prices the CLI's usage; nil, or a model it does not
	// know, records no cost.
	Catalogue *llm.Catalogue
	// Recovery decides about permission denials (a command the CLI
	// declined); nil: they are observed, nothing is widened.
	Recovery *lifecycle.Recoverer
	// Environ is the daemon's environment the CLI's is taken from
	// (extproc.Environ); nil means os.Environ.
	Environ func() []string
	// EnvAllow names more variables of it the CLI inherits.
	EnvAllow []string
	// Launcher confines the CLI and everything it runs (nil: unconfined).
	Launcher *sandbox.Launcher
	// Logger logs malformed lines and the CLI's ends.
	Logger *slog.Logger
	// ReadyEvery is how long a Ready answer is kept; zero means a minute.
	ReadyEvery time.Duration
}

// Engine is the Codex engine. Runs are independent; it is safe for
// concurrent use.
type Engine struct {
	o   Options
	log *slog.Logger

	*extproc.Readiness // Ready, Version
}

var _ engine.Engine = (*Engine)(nil)

// New returns the engine.
func New(o Options) *Engine {
	if o.Command == "" {
		o.Command = DefaultCommand
	}
	o.Environ = extproc.EnvironOr(o.Environ)
	return &Engine{o: o, log: extproc.Logger(o.Logger, Name), Readiness: extproc.NewReadiness(cli, o.Command, o.ReadyEvery)}
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return Name }

// Home is the CODEX_HOME of task id.
func (e *Engine) Home(id task.ID) string { return filepath.Join(e.o.StateDir, string(id), "home") }

// ThreadFile holds the id of task id's thread once the CLI started one.
func (e *Engine) ThreadFile(id task.ID) string {
	return filepath.Join(e.o.StateDir, string(id), "thread")
}

// Thread is task id's stored thread id, "" when it has none yet.
func (e *Engine) Thread(id task.ID) string {
	b, err := os.ReadFile(e.ThreadFile(id))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// storeThread records task id's thread id (written whole, then renamed).
func (e *Engine) storeThread(id task.ID, thread string) error {
	tmp := e.ThreadFile(id) + ".tmp"
	if err := os.WriteFile(tmp, []byte(thread+"\n"), 0o600); err != nil {
		return fmt.Errorf("storing the thread id: %w", err)
	}
	if err := os.Rename(tmp, e.ThreadFile(id)); err != nil {
		return fmt.Errorf("storing the thread id: %w", err)
	}
	return nil
}

// confined reports whether the task sandbox confines the CLI (Landlock).
func (e *Engine) confined() bool { return e.o.Launcher != nil && e.o.Launcher.Status.Available() }

// custom reports whether the CLI is pointed at Neuraphage's endpoint.
func (e *Engine) custom() bool { return e.o.BaseURL != "" || e.o.APIKey != "" }

// args is the CLI's command line for a run of t.
func (e *Engine) args(path string, t task.Task) []string {
	a := []string{path, "app-server", "--disable", "plugins", "-c", "analytics.enabled=false"}
	if e.custom() {
		base := e.o.BaseURL
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		a = append(a, "-c", "model_provider="+providerName, "-c",
			"model_providers."+providerName+"={name="+tomlString(providerName)+", base_url="+tomlString(base)+
				`, wire_api="responses", env_key=`+tomlString(keyEnv)+"}")
	}
	switch {
	case e.confined():
		// The task sandbox confines it; its own sandbox cannot start
		// inside (sandboxPolicy).
		a = append(a, "-c", `sandbox_mode="danger-full-access"`, "-c", `approval_policy="never"`)
	case t.Manifest != nil:
		a = append(a, lifecycle.Codex{Network: e.o.Network}.Flags(*t.Manifest)...)
	default:
		a = append(a, "-c", `sandbox_mode="workspace-write"`, "-c", `approval_policy="never"`)
	}
	return append(a, e.o.Args...)
}

// env is the CLI's environment for a run of t in dir: the daemon's allowed
// variables, the task's own (its port, TMPDIR), then the CLI's settings.
func (e *Engine) env(t task.Task, dir string, taskEnv []string) []string {
	vars := append([]string{"NEURAPHAGE_TASK_ID=" + string(t.ID), "NEURAPHAGE_WORKTREE=" + dir, "PWD=" + dir,
		"GIT_TERMINAL_PROMPT=0", "PAGER=cat", "GIT_PAGER=cat"}, taskEnv...)
	vars = append(vars, "CODEX_HOME="+e.Home(t.ID))
	if e.custom() {
		// Codex takes a custom provider's key only from the variable its
		// env_key names.
		vars = append(vars, keyEnv+"="+e.o.APIKey)
	}
	return extproc.Environ(e.o.Environ(), e.o.EnvAllow, vars)
}

// linkLogin lets a task's CLI use the user's own Codex login when
// Neuraphage hands it no endpoint: the task's CODEX_HOME gets a link to the
// login's auth.json (nothing is copied or changed).
func (e *Engine) linkLogin(home string) {
	if e.custom() {
		return
	}
	src := os.Getenv("CODEX_HOME")
	if src == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return
		}
		src = filepath.Join(h, ".codex")
	}
	src = filepath.Join(src, "auth.json")
	if _, err := os.Stat(src); err != nil {
		return
	}
	dst := filepath.Join(home, "auth.json")
	if _, err := os.Lstat(dst); err == nil {
		return
	}
	if err := os.Symlink(src, dst); err != nil {
		e.log.Warn("linking the Codex login into the task's CODEX_HOME", "err", err)
	}
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
