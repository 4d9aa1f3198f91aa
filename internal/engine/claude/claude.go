// Package claude is the "claude" engine: Claude Code driven through its
// structured streaming protocol (`claude -p --input-format stream-json
// --output-format stream-json --verbose`), one long-lived CLI process per
// running task, never keystrokes or screen scraping.
//
// The CLI runs in the task's worktree, inside the task sandbox, in its own
// process group recorded by the process tracker, with its own
// CLAUDE_CONFIG_DIR per task (under the daemon's data directory), and the
// session id fixed per task (SessionID): the first run presets it with
// --session-id, every later run (a resume, a restart after kill -9)
// continues it with --resume. What the CLI reports is turned into the
// observations of every engine (package event); the conversation is stored
// with Host.Commit, so the Watcher, the Syncer and the main watcher
// supervise a Claude task as they do a native one.
//
// Injections go through the one door: at a turn boundary, and while one of
// the CLI's tools runs, as a user line on its stdin, whose receipt is
// committed once the pipe has taken the line; an urgent one first
// interrupts the turn (a control_request), a pause interrupts it and ends
// the run, keeping the session. Each line carries a delivery marker, so a
// run after a crash finds the lines the CLI took but whose receipt was not
// committed in the session's transcript and does not send them twice.
package claude

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Name is the engine's name.
const Name = "claude"

// Defaults of Options.
const (
	DefaultCommand        = "claude"
	DefaultPermissionMode = "acceptEdits"
	// MinVersion is the oldest Claude Code the engine was verified with.
	MinVersion = "2.1.332"
	// InstallHint says how to install the version the engine wants.
	InstallHint = "npm install -g @anthropic-ai/claude-code@" + MinVersion
)

// DefaultAllowedTools are the tools the CLI may use without asking: it runs
// unattended, confined by the task sandbox.
var DefaultAllowedTools = []string{"Bash", "Edit", "Write", "Read", "Glob", "Grep", "NotebookEdit", "TodoWrite", "Task", "WebFetch", "WebSearch"}

// Options configures the engine.
type Options struct {
	// Command is the CLI: a path, or a name looked up in PATH; "" means
	// DefaultCommand.
	Command string
	// Args are extra arguments after the engine's own.
	Args []string
	// PermissionMode is --permission-mode (engines.claude.permission_mode);
	// "" means DefaultPermissionMode, or, for a task with a sandbox
	// manifest, what the manifest allows (lifecycle.ClaudeFlags).
	PermissionMode string
	// Recovery decides about permission denials (nil: they are observed,
	// nothing is widened).
	Recovery *lifecycle.Recoverer
	// AllowedTools is --allowedTools; nil means DefaultAllowedTools.
	AllowedTools []string
	// Model returns the model for a task (--model), "" for the CLI's own
	// choice.
	Model func(t task.Task) string
	// StateDir holds one CLAUDE_CONFIG_DIR per task (StateDir/<task id>).
	StateDir string
	// BaseURL and APIKey, when set, are handed to the CLI process as
	// ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY (Neuraphage's own Anthropic
	// settings); unset, the CLI uses its own login.
	BaseURL, APIKey string
	// Environ is the daemon's environment the CLI's is taken from
	// (extproc.Environ); nil means os.Environ.
	Environ func() []string
	// EnvAllow names more variables of it the CLI inherits.
	EnvAllow []string
	// Launcher confines the CLI and everything it runs (nil: unconfined).
	Launcher *sandbox.Launcher
	// Logger logs malformed lines and the CLI's ends.
	Logger *slog.Logger
	// Grace is how long the CLI has between SIGTERM and SIGKILL; zero means
	// the proc default.
	Grace time.Duration
	// ReadyEvery is how long a Ready answer is kept; zero means a minute.
	ReadyEvery time.Duration
}

// Engine is the Claude Code engine. Runs are independent; it is safe for
// concurrent use.
type Engine struct {
	o    Options
	mode string // engines.claude.permission_mode as configured
	log  *slog.Logger

	*extproc.Readiness // Ready, Version
}

var _ engine.Engine = (*Engine)(nil)

// New returns the engine.
func New(o Options) *Engine {
	if o.Command == "" {
		o.Command = DefaultCommand
	}
	mode := o.PermissionMode
	if o.PermissionMode == "" {
		o.PermissionMode = DefaultPermissionMode
	}
	if len(o.AllowedTools) == 0 {
		o.AllowedTools = DefaultAllowedTools
	}
	o.Environ = extproc.EnvironOr(o.Environ)
	return &Engine{o: o, mode: mode, log: extproc.Logger(o.Logger, Name), Readiness: extproc.NewReadiness(cli, o.Command, o.ReadyEvery)}
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return Name }

// SessionID is the Claude Code session id of task id: a UUID derived from
// it, so that it is the same for every run of the task without being stored
// anywhere else.
func SessionID(id task.ID) string {
	return extproc.SessionID("neuraphage claude session " + string(id))
}

// ConfigDir is the CLAUDE_CONFIG_DIR of task id.
func (e *Engine) ConfigDir(id task.ID) string { return filepath.Join(e.o.StateDir, string(id)) }

// transcript returns the session transcript the CLI keeps for task id's
// session in its config dir, or "" when there is none yet.
func (e *Engine) transcript(id task.ID) string {
	m, _ := filepath.Glob(filepath.Join(e.ConfigDir(id), "projects", "*", SessionID(id)+".jsonl"))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// args is the CLI's command line for a run of t: resume continues the
// stored session, else it is preset.
func (e *Engine) args(path string, t task.Task, resume bool) []string {
	a := []string{path, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	if t.Manifest != nil {
		// The task's sandbox manifest, as stored (widened by a recovered
		// denial): its tools, commands and paths.
		a = append(a, lifecycle.Claude{PermissionMode: e.mode}.Flags(*t.Manifest)...)
	} else {
		a = append(a, "--permission-mode", e.o.PermissionMode)
		if len(e.o.AllowedTools) > 0 {
			a = append(a, "--allowedTools", strings.Join(e.o.AllowedTools, ","))
		}
	}
	if e.o.Model != nil {
		if m := e.o.Model(t); m != "" {
			a = append(a, "--model", m)
		}
	}
	if e.o.APIKey != "" {
		settings, _ := json.Marshal(map[string]string{"apiKeyHelper": "cat " + shellQuote(e.keyFile(t.ID))})
		a = append(a, "--settings", string(settings))
	}
	a = append(a, "--append-system-prompt", systemPrompt)
	if resume {
		a = append(a, "--resume", SessionID(t.ID))
	} else {
		a = append(a, "--session-id", SessionID(t.ID))
	}
	return append(a, e.o.Args...)
}

// env is the CLI's environment for a run of t in dir: the daemon's allowed
// variables, the task's own (its port, TMPDIR), then the CLI's settings.
func (e *Engine) env(t task.Task, dir string, taskEnv []string) []string {
	vars := append([]string{"NEURAPHAGE_TASK_ID=" + string(t.ID), "NEURAPHAGE_WORKTREE=" + dir, "PWD=" + dir,
		"GIT_TERMINAL_PROMPT=0", "PAGER=cat", "GIT_PAGER=cat"}, taskEnv...)
	vars = append(vars,
		"CLAUDE_CONFIG_DIR="+e.ConfigDir(t.ID),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
	)
	if e.o.PermissionMode == "bypassPermissions" && os.Geteuid() == 0 && e.o.Launcher != nil && e.o.Launcher.Status.Available() {
		// As root Claude Code skips permissions only inside a sandbox
		// it is told of: the task sandbox confines it.
		vars = append(vars, "IS_SANDBOX=1")
	}
	if e.o.BaseURL != "" {
		vars = append(vars, "ANTHROPIC_BASE_URL="+e.o.BaseURL)
	}
	return extproc.Environ(e.o.Environ(), e.o.EnvAllow, vars)
}

// keyFile is where the key for task id's CLI is kept (0600, in its
// config directory): the CLI reads it through its apiKeyHelper setting, so
// the key is in no process's environment, where /proc/<pid>/environ would
// show it to every process of the user.
func (e *Engine) keyFile(id task.ID) string { return filepath.Join(e.ConfigDir(id), "api-key") }

// writeKey stores the key for task id's CLI, when Neuraphage has one.
func (e *Engine) writeKey(id task.ID) error {
	if e.o.APIKey == "" {
		return nil
	}
	if err := os.WriteFile(e.keyFile(id), []byte(e.o.APIKey), 0o600); err != nil {
		return fmt.Errorf("storing the key for the CLI: %w", err)
	}
	return os.Chmod(e.keyFile(id), 0o600)
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// linkLogin lets a task's CLI use the user's own Claude Code login when
// Neuraphage hands it no key: the per-task config directory gets a link to
// the login's credentials file (nothing is copied or changed). With a key
// configured, the CLI gets the key and no link.
func (e *Engine) linkLogin(cfgDir string) {
	if e.o.APIKey != "" {
		return
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return
	}
	src := filepath.Join(home, ".claude", ".credentials.json")
	if _, err := os.Stat(src); err != nil {
		return
	}
	dst := filepath.Join(cfgDir, ".credentials.json")
	if _, err := os.Lstat(dst); err == nil {
		return
	}
	if err := os.Symlink(src, dst); err != nil {
		e.log.Warn("linking the Claude Code login into the task's config directory", "err", err)
	}
}
