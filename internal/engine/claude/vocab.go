package claude

import (
	"encoding/json"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
)

// Claude Code's tools, as the observations name them: the native engine's
// names and argument keys, so that the Watcher's detectors (calls by
// identity, reads without change, the files' state) and the Syncer read a
// Claude task as they read a native one. The stored conversation keeps the
// CLI's own names.
var toolNames = map[string]string{
	"Bash": "bash", "Read": "read_file", "Write": "write_file", "Edit": "edit_file", "MultiEdit": "edit_file",
	"NotebookEdit": "edit_file", "Glob": "glob", "Grep": "grep",
}

// argKeys renames a tool's argument keys; keys not listed are dropped for
// the renamed tools (a Bash call's description does not make it another
// call).
var argKeys = map[string]map[string]string{
	"Bash":         {"command": "command", "timeout": "timeout"},
	"Read":         {"file_path": "path", "offset": "offset", "limit": "limit"},
	"Write":        {"file_path": "path", "content": "content"},
	"Edit":         {"file_path": "path", "old_string": "old", "new_string": "new"},
	"MultiEdit":    {"file_path": "path", "edits": "edits"},
	"NotebookEdit": {"notebook_path": "path", "new_source": "new", "cell_id": "cell_id"},
	"Glob":         {"pattern": "pattern", "path": "path"},
	"Grep":         {"pattern": "pattern", "path": "path", "glob": "glob"},
}

// observedCall is a CLI tool call in the observations' vocabulary: its
// name and canonical arguments.
func observedCall(name string, input json.RawMessage) (string, json.RawMessage) {
	ours, ok := toolNames[name]
	if !ok {
		return strings.ToLower(name), extproc.Canonical(input)
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ours, extproc.Canonical(input)
	}
	out := map[string]any{}
	for k, v := range in {
		if to, keep := argKeys[name][k]; keep {
			out[to] = v
		}
	}
	b, err := json.Marshal(out) // map keys sorted: canonical
	if err != nil {
		return ours, extproc.Canonical(input)
	}
	return ours, b
}

// observedTool is a CLI tool's name in the observations' vocabulary.
func observedTool(name string) string {
	if ours, ok := toolNames[name]; ok {
		return ours
	}
	return strings.ToLower(name)
}
