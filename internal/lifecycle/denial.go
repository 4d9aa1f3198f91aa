package lifecycle

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// writeTools are the tools, in every engine's spelling, whose path is
// written.
var writeTools = []string{"write", "edit", "multiedit", "notebookedit", "write_file", "edit_file", "replace", "apply_patch"}

// Denial builds the permission_denied observation of turn for a refused
// call of tool with input (the call's arguments as the CLI reported them:
// Claude Code's permission_denials give tool_name and tool_input): the
// command of a shell call, the path of a file tool (a write for the
// writing tools), in the spellings of the engines (command, file_path,
// path, absolute_path, notebook_path). Input that is not a JSON object
// gives the tool alone.
func Denial(turn int, tool string, input json.RawMessage, reason string) event.PermissionDenied {
	var a struct {
		Command      any    `json:"command"`
		FilePath     string `json:"file_path"`
		Path         string `json:"path"`
		AbsolutePath string `json:"absolute_path"`
		NotebookPath string `json:"notebook_path"`
	}
	_ = json.Unmarshal(input, &a) // another shape: the tool alone
	d := event.PermissionDenied{Turn: turn, Tool: tool, Reason: reason}
	switch c := a.Command.(type) {
	case string:
		d.Command = c
	case []any: // Codex's argv
		parts := make([]string, 0, len(c))
		for _, p := range c {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		d.Command = strings.Join(parts, " ")
	}
	for _, p := range []string{a.FilePath, a.Path, a.AbsolutePath, a.NotebookPath} {
		if p != "" {
			d.Path = p
			break
		}
	}
	if d.Path != "" {
		d.Write = slices.Contains(writeTools, strings.ToLower(tool))
	}
	return d
}

// SecretEnv looks up the values of m's environment and secret names with
// lookup (the daemon's environment, a secret store) for the engine to
// pass to its CLI: NAME=value for each name found, and the names not
// found. Values are never stored; the manifest holds names only.
func SecretEnv(m task.Manifest, lookup func(string) (string, bool)) (env, missing []string) {
	seen := map[string]bool{}
	for _, name := range append(slices.Clone(m.Env), m.Secrets...) {
		if seen[name] || !validName(name) {
			continue
		}
		seen[name] = true
		if v, ok := lookup(name); ok {
			env = append(env, name+"="+v)
		} else {
			missing = append(missing, name)
		}
	}
	return env, missing
}
