package stuck

import (
	"encoding/json"
	"path"
	"strings"
)

// readTools are the file tools that only look.
var readTools = map[string]bool{"read_file": true, "glob": true, "grep": true, "list_files": true, "view": true}

// readCommands are the commands that only read, by their first word; sed
// and git only in their reading forms (isReadCommand).
var readCommands = map[string]bool{"cat": true, "head": true, "tail": true, "less": true, "more": true, "ls": true,
	"find": true, "grep": true, "rg": true, "ag": true, "wc": true, "tree": true, "file": true, "stat": true,
	"nl": true, "bat": true, "fd": true}

// gitReads are the git subcommands that only read.
var gitReads = map[string]bool{"log": true, "show": true, "diff": true, "status": true, "grep": true, "blame": true, "ls-files": true}

// isRead reports whether a tool call only reads: a reading file tool, or
// a shell command whose every part (split on &&, ||, ; and |) reads. The
// read-without-change budget counts these; anything else may change state
// a file observation does not show (a migration, a deploy, a poll).
func isRead(tool string, args json.RawMessage) bool {
	if readTools[tool] {
		return true
	}
	if tool != "bash" {
		return false
	}
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &a) != nil || strings.TrimSpace(a.Command) == "" {
		return false
	}
	cmd := strings.NewReplacer("&&", ";", "||", ";", "|", ";").Replace(a.Command)
	for part := range strings.SplitSeq(cmd, ";") {
		if f := strings.Fields(part); len(f) > 0 && !isReadCommand(f) {
			return false
		}
	}
	return true
}

// isReadCommand reports whether one command, as words, only reads. A
// redirection may write, so it is not a read.
func isReadCommand(f []string) bool {
	for _, w := range f {
		if strings.ContainsAny(w, "<>") {
			return false
		}
	}
	if f[0] == "cd" {
		return true
	}
	switch name := path.Base(f[0]); {
	case name == "sed":
		return len(f) > 1 && f[1] == "-n"
	case name == "git":
		return len(f) > 1 && gitReads[f[1]]
	default:
		return readCommands[name]
	}
}
