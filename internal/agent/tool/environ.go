package tool

import (
	"os"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// BaseEnvAllow lists the variables of the daemon's environment a command
// inherits, besides the LC_* locale variables and the names the user allows.
var BaseEnvAllow = []string{"PATH", "HOME", "LANG", "TERM", "TZ", "USER", "SHELL", "TMPDIR"}

// EnvDenied reports whether name may never reach a command, even when the
// user allows it: provider keys and tokens (*_API_KEY, *_TOKEN) and the
// daemon's own variables (NEURAPHAGE_*), its home and socket among them.
func EnvDenied(name string) bool { return proc.Secret(name) }

// commandEnv is the environment of a command run in dir: the allowed
// variables of the daemon's environment (parent), made safe for a command
// nobody watches (no pager waits for a keypress, no git prompt for a
// password), with PWD naming the directory it runs in, then vars (the
// task's own variables, set by the daemon).
func commandEnv(parent, allow []string, dir string, vars []string) []string {
	var env []string
	for _, kv := range parent {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || EnvDenied(name) {
			continue
		}
		if slices.Contains(BaseEnvAllow, name) || strings.HasPrefix(name, "LC_") || slices.Contains(allow, name) {
			env = append(env, kv)
		}
	}
	env = append(env, "PWD="+dir, "GIT_TERMINAL_PROMPT=0", "PAGER=cat", "GIT_PAGER=cat")
	return append(env, vars...)
}

// environ is the daemon's environment, read at each call.
var environ = os.Environ

// tempDir is the task's temporary directory: the last TMPDIR in vars, or
// "" when the task has none of its own.
func tempDir(vars []string) string {
	dir := ""
	for _, kv := range vars {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			dir = v
		}
	}
	return dir
}
