package lifecycle

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// FlagMapper turns a manifest into an agent CLI's own permission flags.
// Each external engine has one; Flags is pure, so that an engine's
// command line follows from the manifest alone and is tested as such.
// The engine adds its flags to the CLI's command line at every start (a
// resume included: a recovered denial widened the manifest).
type FlagMapper interface {
	Flags(m task.Manifest) []string
}

// Claude maps manifests onto Claude Code's flags.
type Claude struct {
	// PermissionMode is engines.claude.permission_mode; empty chooses
	// acceptEdits when the manifest may edit files, default otherwise.
	PermissionMode string
}

var _ FlagMapper = Claude{}

// Flags implements FlagMapper with ClaudeFlags.
func (c Claude) Flags(m task.Manifest) []string { return ClaudeFlags(m, c.PermissionMode) }

// claudeTools are Claude Code's tools that a manifest either holds or
// refuses. A tool of the manifest's vocabulary stands for the ones listed
// with it (Edit for MultiEdit and NotebookEdit).
var claudeTools = map[string][]string{
	"Read":      {"Read"},
	"Write":     {"Write"},
	"Edit":      {"Edit", "MultiEdit", "NotebookEdit"},
	"Glob":      {"Glob"},
	"Grep":      {"Grep", "LS"},
	"Bash":      {"Bash"},
	"WebFetch":  {"WebFetch"},
	"WebSearch": {"WebSearch"},
	"Task":      {"Task"},
}

// ClaudeFlags maps m onto Claude Code's command line:
//
//   - --permission-mode: mode, or acceptEdits when m holds Write or Edit
//     and default when it does not;
//   - --allowedTools: m's tools; Bash narrowed to m's commands as
//     Bash(PREFIX:*) when it lists any;
//   - --disallowedTools: every tool Claude Code has that m does not hold
//     (Task, an agent spawning agents, unless m holds it), since
//     acceptEdits would otherwise let edits through;
//   - --add-dir: m's absolute readable and writable paths (the worktree,
//     where the CLI starts, is its own).
//
// Each flag is one NAME=VALUE argument: the CLI's list flags would take a
// following prompt as one of their values. The result is deterministic:
// the same manifest gives the same flags. (Checked against Claude Code
// 2.1.332: Bash(git:*) lets `git status` run and refuses `ls /`, reported
// in the result's permission_denials; a disallowed Write is not offered.)
func ClaudeFlags(m task.Manifest, mode string) []string {
	has := func(t string) bool { return slices.Contains(m.Tools, t) }
	if mode == "" {
		mode = "default"
		if has("Write") || has("Edit") {
			mode = "acceptEdits"
		}
	}
	var allowed []string
	for _, t := range m.Tools {
		names, known := claudeTools[t]
		switch {
		case t == "Bash" && len(m.Commands) > 0:
			for _, c := range m.Commands {
				allowed = append(allowed, "Bash("+c+":*)")
			}
		case known:
			allowed = append(allowed, names...)
		default:
			allowed = append(allowed, t) // an MCP tool, say: its own name
		}
	}
	var disallowed []string
	for _, t := range slices.Sorted(maps.Keys(claudeTools)) {
		if !has(t) {
			disallowed = append(disallowed, claudeTools[t]...)
		}
	}
	// NAME=VALUE, one argument each: the CLI's list flags take every
	// argument that follows as theirs, a prompt included.
	flags := []string{"--permission-mode=" + mode}
	if len(allowed) > 0 {
		flags = append(flags, "--allowedTools="+strings.Join(allowed, ","))
	}
	if len(disallowed) > 0 {
		flags = append(flags, "--disallowedTools="+strings.Join(disallowed, ","))
	}
	var dirs []string
	for _, p := range append(slices.Clone(m.Writable), m.Readable...) {
		if filepath.IsAbs(p) && !slices.Contains(dirs, p) {
			dirs = append(dirs, p)
		}
	}
	for _, d := range dirs {
		flags = append(flags, "--add-dir="+d)
	}
	return flags
}
