package stuck

import (
	"encoding/json"
	"path"
	"strings"
	"unicode/utf8"
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
	cmd, ok := commandArg(args)
	if !ok || strings.TrimSpace(cmd) == "" {
		return false
	}
	// The parts between &&, ||, | and ; (a lone & stays in its part).
	for len(cmd) > 0 {
		i := strings.IndexAny(cmd, ";|&")
		for i >= 0 && cmd[i] == '&' && (i+1 == len(cmd) || cmd[i+1] != '&') {
			j := strings.IndexAny(cmd[i+1:], ";|&")
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		part, rest := cmd, ""
		if i >= 0 {
			part, rest = cmd[:i], cmd[i+1:]
			if cmd[i] == '&' {
				rest = cmd[i+2:]
			}
		}
		if !partReads(part) {
			return false
		}
		cmd = rest
	}
	return true
}

// commandArg reads a call's "command" argument as encoding/json would into
// a struct with a Command field; flat string arguments with ASCII keys are
// read without it.
func commandArg(args json.RawMessage) (string, bool) {
	var buf [6]keyValue
	if kvs, ok := appendFlatStrings(buf[:0], args); ok {
		cmd, ascii := "", true
		for _, kv := range kvs {
			for k := 0; k < len(kv.k); k++ {
				ascii = ascii && kv.k[k] < utf8.RuneSelf
			}
			if strings.EqualFold(kv.k, "command") {
				cmd = kv.v // the last wins, in any case
			}
		}
		if ascii {
			return cmd, true
		}
	}
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &a) != nil {
		return "", false
	}
	return a.Command, true
}

// partReads reports whether one part of a command line only reads: no
// words, or words isReadCommand accepts.
func partReads(part string) bool {
	for k := 0; k < len(part); k++ {
		if part[k] >= utf8.RuneSelf { // spaces beyond ASCII: as strings.Fields splits
			f := strings.Fields(part)
			return len(f) == 0 || isReadCommand(f)
		}
	}
	var f [2]string
	n := 0
	for w := range strings.FieldsSeq(part) {
		if n < 2 {
			f[n] = w
		}
		n++
	}
	if n == 0 {
		return true
	}
	if strings.ContainsAny(part, "<>") {
		return false // a redirection may write
	}
	return isReadCommand(f[:min(n, 2)])
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
