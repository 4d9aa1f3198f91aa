package gemini

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
)

// Gemini CLI's tools, as the observations name them: the native engine's
// names and argument keys, so that the Watcher and the Syncer read a
// Gemini task as they read a native one. The stored conversation keeps the
// CLI's own names.
var toolNames = map[string]string{
	"run_shell_command": "bash", "read_file": "read_file", "read_many_files": "read_file", "write_file": "write_file",
	"replace": "edit_file", "glob": "glob", "grep_search": "grep", "list_directory": "list_dir",
}

// argKeys renames a tool's argument keys; keys not listed are dropped for
// the renamed tools.
var argKeys = map[string]map[string]string{
	"run_shell_command": {"command": "command"},
	"read_file":         {"file_path": "path", "absolute_path": "path", "offset": "offset", "limit": "limit"},
	"write_file":        {"file_path": "path", "content": "content"},
	"replace":           {"file_path": "path", "old_string": "old", "new_string": "new"},
	"glob":              {"pattern": "pattern", "dir_path": "path", "path": "path"},
	"grep_search":       {"pattern": "pattern", "dir_path": "path", "path": "path", "include": "glob"},
	"list_directory":    {"dir_path": "path", "path": "path"},
}

// observedCall is a CLI tool call in the observations' vocabulary.
func observedCall(name string, input json.RawMessage) (string, json.RawMessage) {
	ours, ok := toolNames[name]
	keys, renamed := argKeys[name]
	if !ok || !renamed {
		return observedTool(name), extproc.Canonical(input)
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ours, extproc.Canonical(input)
	}
	out := map[string]any{}
	for k, v := range in {
		if to, keep := keys[k]; keep {
			out[to] = v
		}
	}
	b, err := json.Marshal(out)
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

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// manifestTools name the manifest's tool (lifecycle.GeminiPolicy's
// vocabulary) each of Gemini CLI's tools stands for.
var manifestTools = map[string]string{
	"run_shell_command": "Bash", "read_file": "Read", "read_many_files": "Read", "write_file": "Write", "replace": "Edit",
	"glob": "Glob", "list_directory": "Glob", "grep_search": "Grep", "web_fetch": "WebFetch", "google_web_search": "WebSearch",
	"invoke_agent": "Task",
}

// manifestTool is the manifest's name of a CLI tool; an unknown one keeps
// its own name (no fix can allow it).
func manifestTool(name string) string {
	if m, ok := manifestTools[name]; ok {
		return m
	}
	return name
}
