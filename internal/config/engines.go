package config

import (
	"fmt"
	"slices"
)

// Engines configures the external agent CLIs tasks may run on
// (docs/engines.md).
type Engines struct {
	Claude ClaudeEngine `yaml:"claude"`
	Codex  CodexEngine  `yaml:"codex"`
	Gemini GeminiEngine `yaml:"gemini"`
}

// GeminiEngine configures the "gemini" engine: Gemini CLI driven headless
// (-p … -o stream-json), one process per turn.
type GeminiEngine struct {
	Command string            `yaml:"command"` // the CLI: a path or a name in PATH; "" means "gemini"
	Args    []string          `yaml:"args"`    // extra arguments after the engine's own
	Model   string            `yaml:"model"`   // -m for every task; "" leaves the CLI's routing
	Models  map[string]string `yaml:"models"`  // model per tier (router, worker, expert); wins over model
}

// Validate implements Validator.
func (c GeminiEngine) Validate() error { return validTiers(c.Models) }

// CodexEngine configures the "codex" engine: OpenAI's Codex CLI driven
// through `codex app-server`.
type CodexEngine struct {
	Command string            `yaml:"command"` // the CLI: a path or a name in PATH; "" means "codex"
	Args    []string          `yaml:"args"`    // extra arguments after the engine's own
	Models  map[string]string `yaml:"models"`  // model per tier (router, worker, expert); a tier unset leaves the CLI's choice
}

// Validate implements Validator.
func (c CodexEngine) Validate() error { return validTiers(c.Models) }

// validTiers checks the tiers of an engine's models map.
func validTiers(models map[string]string) error {
	for tier := range models {
		if !slices.Contains([]string{"router", "worker", "expert"}, tier) {
			return &Error{Key: "models." + tier, Msg: "not a tier: want router, worker or expert"}
		}
	}
	return nil
}

// ClaudeEngine configures the "claude" engine: Claude Code driven through
// its stream-json protocol.
type ClaudeEngine struct {
	Command        string            `yaml:"command"`         // the CLI: a path or a name in PATH; "" means "claude"
	Args           []string          `yaml:"args"`            // extra arguments after the engine's own
	PermissionMode string            `yaml:"permission_mode"` // default, acceptEdits, plan or bypassPermissions; "" means acceptEdits
	AllowedTools   []string          `yaml:"allowed_tools"`   // --allowedTools; empty means the engine's default list
	Models         map[string]string `yaml:"models"`          // model per tier (router, worker, expert); a tier unset leaves the CLI's choice
}

// ClaudePermissionModes are the values permission_mode takes.
var ClaudePermissionModes = []string{"default", "acceptEdits", "plan", "bypassPermissions"}

// Validate implements Validator.
func (c ClaudeEngine) Validate() error {
	if c.PermissionMode != "" && !slices.Contains(ClaudePermissionModes, c.PermissionMode) {
		return &Error{Key: "permission_mode", Msg: fmt.Sprintf("want one of %v, got %q", ClaudePermissionModes, c.PermissionMode)}
	}
	for tier := range c.Models {
		if !slices.Contains([]string{"router", "worker", "expert"}, tier) {
			return &Error{Key: "models." + tier, Msg: "not a tier: want router, worker or expert"}
		}
	}
	return nil
}
