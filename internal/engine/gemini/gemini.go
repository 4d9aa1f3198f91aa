// Package gemini is the "gemini" engine: Gemini CLI driven headless through
// its structured output (`gemini -p PROMPT -o stream-json`), one CLI
// process per turn, the session kept per task and resumed by each turn.
//
// Headless rather than ACP (`gemini --acp`): a turn's process starts in
// about 3 s against ACP's 7–8 s initialize, nothing stays resident between
// turns, and a session resumed by id after kill -9 is the same path as the
// next turn; what ACP would add, cancelling a turn, is done by ending the
// turn's process group (GEMINI_CLI_NO_RELAUNCH=true makes the CLI one
// process). docs/engines.md has the measurements.
//
// The CLI runs in the task's worktree, inside the task sandbox, in its own
// process group recorded by the process tracker, with its own HOME per task
// (under the daemon's data directory) holding .gemini/settings.json, and the
// session id fixed per task (SessionID): the first turn presets it with
// --session-id, every later one continues it with --resume. What the CLI
// reports is turned into the observations of every engine (package event);
// the conversation is stored with Host.Commit.
//
// Injections go through the one door, at the next turn: the messages
// waiting when a turn ends are the next turn's prompt, their receipt
// committed when the turn's process started with them. An urgent one, and
// a pause, end the running turn (its process group); the urgent message is
// then the next turn's prompt, a pause ends the run keeping the session.
// Each prompt carries a delivery marker, so a run after a crash finds the
// prompts the CLI took but whose receipt was not committed in the session's
// file and does not send them twice.
package gemini

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
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Name is the engine's name.
const Name = "gemini"

// Defaults of Options.
const (
	DefaultCommand = "gemini"
	// MinVersion is the oldest Gemini CLI the engine was verified with.
	MinVersion = "0.61.0"
	// InstallHint says how to install the version the engine wants.
	InstallHint = "npm install -g @google/gemini-cli@" + MinVersion
)

// Options configures the engine.
type Options struct {
	// Command is the CLI: a path, or a name looked up in PATH; "" means
	// DefaultCommand.
	Command string
	// Args are extra arguments after the engine's own.
	Args []string
	// Model returns the model for a task (-m), "" for the CLI's own
	// routing.
	Model func(t task.Task) string
	// Price returns the cost of usage on model; nil charges nothing (the
	// CLI reports tokens, not prices).
	Price func(model string, u llm.Usage) float64
	// StateDir holds one HOME per task (StateDir/<task id>).
	StateDir string
	// BaseURL and APIKey, when set, are handed to the CLI as
	// GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY, with settings selecting
	// key authentication (Neuraphage's Gemini provider); with neither the
	// CLI uses the user's own login.
	BaseURL, APIKey string
	// Environ is the daemon's environment the CLI's is taken from
	// (extproc.Environ); nil means os.Environ.
	Environ func() []string
	// EnvAllow names more variables of it the CLI inherits.
	EnvAllow []string
	// Launcher confines the CLI and everything it runs (nil: unconfined).
	Launcher *sandbox.Launcher
	// Recover, when set, decides about the permission denials the CLI
	// reports (the task's manifest refused a tool): a widened manifest is
	// stored and the turn retried.
	Recover *lifecycle.Recoverer
	// UserHome is the user's home, whose Gemini CLI login a task's CLI
	// uses without a key; "" means os.UserHomeDir.
	UserHome string
	// Logger logs malformed lines and the CLI's ends.
	Logger *slog.Logger
	// ReadyEvery is how long a Ready answer is kept; zero means a minute.
	ReadyEvery time.Duration
}

// Engine is the Gemini CLI engine. Runs are independent; it is safe for
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

// SessionID is the Gemini CLI session id of task id: a UUID derived from
// it, the same for every turn and run of the task.
func SessionID(id task.ID) string {
	return extproc.SessionID("neuraphage gemini session " + string(id))
}

// Home is the HOME of task id's CLI: .gemini/ under it holds the settings,
// the policy and the sessions.
func (e *Engine) Home(id task.ID) string { return filepath.Join(e.o.StateDir, string(id)) }

// sessionFile is the file the CLI keeps task id's session in, or "" when
// there is none yet.
func (e *Engine) sessionFile(id task.ID) string {
	sid := SessionID(id)
	m, _ := filepath.Glob(filepath.Join(e.Home(id), ".gemini", "tmp", "*", "chats", "session-*-"+sid[:8]+"*.json*"))
	for _, f := range m {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), sid) {
			return f
		}
	}
	return ""
}

// policyFile is where the task's manifest is written as a Gemini CLI
// policy.
func (e *Engine) policyFile(id task.ID) string {
	return filepath.Join(e.Home(id), ".gemini", "neuraphage-policy.toml")
}

// args is the command line of one turn of t with prompt: resume continues
// the stored session, else it is preset.
func (e *Engine) args(path string, t task.Task, prompt string, resume bool) []string {
	a := []string{path, "-p", prompt, "-o", "stream-json"}
	if t.Manifest != nil {
		a = append(a, lifecycle.Gemini{PolicyFile: e.policyFile(t.ID)}.Flags(*t.Manifest)...)
	} else {
		a = append(a, "--approval-mode", "yolo", "--skip-trust")
	}
	if m := e.model(t); m != "" {
		a = append(a, "-m", m)
	}
	if resume {
		a = append(a, "--resume", SessionID(t.ID))
	} else {
		a = append(a, "--session-id", SessionID(t.ID))
	}
	return append(a, e.o.Args...)
}

func (e *Engine) model(t task.Task) string {
	if e.o.Model == nil {
		return ""
	}
	return e.o.Model(t)
}

// env is the CLI's environment for a turn of t in dir.
func (e *Engine) env(t task.Task, dir string, taskEnv []string) []string {
	vars := append([]string{"NEURAPHAGE_TASK_ID=" + string(t.ID), "NEURAPHAGE_WORKTREE=" + dir, "PWD=" + dir,
		"GIT_TERMINAL_PROMPT=0", "PAGER=cat", "GIT_PAGER=cat"}, taskEnv...)
	vars = append(vars,
		"HOME="+e.Home(t.ID),
		// One process, not a launcher relaunching a child: a signal to
		// the group ends the turn.
		"GEMINI_CLI_NO_RELAUNCH=true",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"NO_BROWSER=true",
	)
	if e.o.APIKey != "" {
		vars = append(vars, "GEMINI_API_KEY="+e.o.APIKey)
	}
	if e.o.BaseURL != "" {
		vars = append(vars, "GOOGLE_GEMINI_BASE_URL="+e.o.BaseURL)
	}
	return extproc.Environ(e.o.Environ(), e.o.EnvAllow, vars)
}

// settings are the CLI's settings.json for a task: key authentication when
// Neuraphage hands it a key, no telemetry, no update checks, no usage
// statistics.
func (e *Engine) settings(login map[string]any) map[string]any {
	s := map[string]any{
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
	}
	if e.o.APIKey != "" {
		s["security"] = map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}
	} else if sec, ok := login["security"]; ok {
		s["security"] = sec // the user's own choice of login
	}
	return s
}

// prepareHome writes the task's .gemini: settings, the manifest's policy,
// and without a key links to the user's login files.
func (e *Engine) prepareHome(t task.Task) error {
	dir := filepath.Join(e.Home(t.ID), ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making the CLI's home: %w", err)
	}
	var login map[string]any
	userDir := ""
	if e.o.APIKey == "" {
		home := e.o.UserHome
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		if home != "" {
			userDir = filepath.Join(home, ".gemini")
			if b, err := os.ReadFile(filepath.Join(userDir, "settings.json")); err == nil {
				_ = json.Unmarshal(b, &login) // a broken file: the CLI's defaults
			}
		}
	}
	b, err := json.MarshalIndent(e.settings(login), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		return fmt.Errorf("writing the CLI's settings: %w", err)
	}
	if userDir != "" {
		// The login's files are linked, never copied or changed.
		for _, name := range []string{"oauth_creds.json", "google_accounts.json"} {
			src, dst := filepath.Join(userDir, name), filepath.Join(dir, name)
			if _, err := os.Stat(src); err != nil {
				continue
			}
			if _, err := os.Lstat(dst); err == nil {
				continue
			}
			if err := os.Symlink(src, dst); err != nil {
				e.log.Warn("linking the Gemini CLI login into the task's home", "err", err)
			}
		}
	}
	return nil
}

// writePolicy writes t's manifest as the CLI's policy (before each turn:
// a recovered denial widens it).
func (e *Engine) writePolicy(t task.Task) error {
	if t.Manifest == nil {
		return nil
	}
	if err := os.WriteFile(e.policyFile(t.ID), []byte(lifecycle.GeminiPolicy(*t.Manifest)), 0o600); err != nil {
		return fmt.Errorf("writing the CLI's policy: %w", err)
	}
	return nil
}
