package tool

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Policy judges a shell command before the bash tool runs it.
//
// It is a deny-list: a guard-rail against the accidents an agent is known to
// make (deleting the home directory, piping a download into a shell, force
// pushing, writing over files outside its worktree), not a sandbox. A command
// that wants to get around it can (through a variable, a script file, eval,
// another language's interpreter), and commands it does not recognise run
// with the daemon user's full rights. Isolation, where wanted, belongs to the
// process running the tools (a container, a separate user), not here.
//
// A Policy is not changed by Check and may be shared by concurrent calls.
type Policy struct {
	// Rules refuse any command one of their patterns matches.
	Rules []Rule
	// ConfineRedirects refuses output redirections (>, >>, &>, >|) and tee
	// whose target is an absolute path outside the command's directory, a
	// ".." path leaving it, or the home directory. /dev/null, /dev/stdout
	// and /dev/stderr are always allowed.
	ConfineRedirects bool
}

// Rule refuses commands matching Pattern.
type Rule struct {
	// Pattern is a Go regular expression matched against the whole command
	// line.
	Pattern string
	// Reason tells the model why the command was refused.
	Reason string

	re *regexp.Regexp // compiled by NewPolicy; nil in a literal Rule
}

// DeniedError is a command a policy refused.
type DeniedError struct {
	// Reason is the rule's reason.
	Reason string
	// Pattern is the rule's pattern, or "" for a refused redirection.
	Pattern string
}

// Error names the reason.
func (e *DeniedError) Error() string { return "command refused by policy: " + e.Reason }

// Command boundaries: the start of the line or of a command after ; & | ( `
// $( or a newline, then optional prefixes that run the next word as a
// command.
const (
	cmdStart  = `(?:^|[;&|(\x60\n]|\$\()\s*(?:(?:\w+=\S*|env|exec|nohup|time|nice|command|builtin|xargs(?:\s+-\S+)*)\s+)*`
	argsUntil = `[^;&|\n]*?` // the arguments of the same command
	// rmTarget: /, //, /*, /., ~, ~/, ~/*, $HOME, ${HOME}, "$HOME"/ and the
	// like, as a whole word.
	rmTarget = `\s["']?(?:/+\.?/*\*?|~/?\*?|\$\{?HOME\}?/?\*?)["']?(?:$|[\s;&|)])`
)

// withArgs matches the command name and any arguments after it, up to the
// end of that command.
func withArgs(name string) string { return `\b` + name + `(?:\s` + argsUntil + `)?` }

// defaultRules is what DefaultPolicy refuses; the package tests list
// commands each one must and must not catch.
var defaultRules = []Rule{
	{Pattern: withArgs("rm") + rmTarget, Reason: "removing the root or home directory"},
	{Pattern: withArgs("rm") + `\s--no-preserve-root\b`, Reason: "rm --no-preserve-root"},
	{Pattern: withArgs("rm") + `\s["']?\.\./?\*?["']?(?:$|[\s;&|)])`, Reason: "removing the parent of the working directory"},
	{Pattern: `\b(?:curl|wget|fetch)\b[^;\n]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:\S*/)?(?:ba|z|da|k|c|tc|fi)?sh\b`, Reason: "piping a download into a shell; download the script to a file and read it first"},
	{Pattern: `\b(?:ba|z|da|k)?sh\b[^\n]*(?:<\(|\$\(|\x60)\s*(?:curl|wget|fetch)\b`, Reason: "running a downloaded script in a shell; download it to a file and read it first"},
	{Pattern: cmdStart + `(?:\S*/)?(?:sudo|doas|su)\b`, Reason: "running commands as another user (sudo, doas, su)"},
	{Pattern: cmdStart + `(?:\S*/)?(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|parted)\b`, Reason: "formatting or partitioning disks"},
	{Pattern: withArgs("dd") + `\bof=["']?/dev/`, Reason: "writing to a device with dd"},
	{Pattern: `:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:`, Reason: "a fork bomb"},
	{Pattern: `\b[\w.]+\s*\(\s*\)\s*\{[^}]*\b[\w.]+\s*\|\s*[\w.]+\s*&`, Reason: "a fork bomb"},
	{Pattern: withArgs("git") + `\bpush\b(?:\s` + argsUntil + `)?(?:\s--force\b|\s--force-with-lease\b|\s--force-if-includes\b|\s-[a-zA-Z]*f[a-zA-Z]*\b|\s["']?\+\S)`, Reason: "git push --force (history on the remote must not be rewritten; push to a new branch instead)"},
	// refs/stash is one ref in the repository's own git directory, shared
	// by every worktree: the sandbox keeps it read-only (docs/sandbox.md),
	// so git would fail half way with a bare "permission denied".
	{Pattern: cmdStart + `(?:\S*/)?git(?:\s+(?:-[Cc]\s+\S+|-\S+))*\s+stash(?:\s*(?:$|[;&|)\n])|\s+(?:-|(?:push|save|pop|drop|clear|store|branch)\b))`, Reason: "git stash (refs/stash is shared by every worktree of the repository, so a task cannot change it; keep work in progress as a commit on your branch instead: git commit -qam wip, and later git reset --soft HEAD~1; git stash list, show and apply work)"},
	{Pattern: withArgs("chmod") + `\s-[a-zA-Z]*R[a-zA-Z]*\b` + argsUntil + rmTarget, Reason: "changing permissions of the root or home directory recursively"},
	{Pattern: withArgs("chown") + `\s-[a-zA-Z]*R[a-zA-Z]*\b` + argsUntil + rmTarget, Reason: "changing ownership of the root or home directory recursively"},
}

// DefaultPolicy returns the built-in rules with ConfineRedirects on.
func DefaultPolicy() *Policy {
	p, err := NewPolicy(nil)
	if err != nil {
		panic(err) // the defaults are tested to compile
	}
	return p
}

// NewPolicy returns the default policy with extra rules after the defaults.
// A pattern that is not a valid regular expression is an error naming it.
func NewPolicy(extra []Rule) (*Policy, error) {
	p := &Policy{ConfineRedirects: true}
	for _, r := range append(append([]Rule(nil), defaultRules...), extra...) {
		re, err := regexp.Compile(r.Pattern)
		if err != nil {
			return nil, fmt.Errorf("policy rule %q (%s): %w", r.Pattern, r.Reason, err)
		}
		r.re = re
		p.Rules = append(p.Rules, r)
	}
	return p, nil
}

// Check returns a *DeniedError when command, run in dir, is refused, and nil
// when it may run. A rule whose pattern does not compile (possible only in a
// Policy built without NewPolicy) refuses every command, naming the pattern.
func (p *Policy) Check(command, dir string) error {
	for _, r := range p.Rules {
		re := r.re
		if re == nil {
			var err error
			if re, err = regexp.Compile(r.Pattern); err != nil {
				return &DeniedError{Reason: fmt.Sprintf("policy rule %q is not a valid regular expression: %v", r.Pattern, err), Pattern: r.Pattern}
			}
		}
		if re.MatchString(command) {
			return &DeniedError{Reason: r.Reason, Pattern: r.Pattern}
		}
	}
	if p.ConfineRedirects {
		for _, target := range writeTargets(command) {
			if !writableTarget(target, dir) {
				return &DeniedError{Reason: fmt.Sprintf("writing to %s, outside the working directory", target)}
			}
		}
	}
	return nil
}

// writableTarget says whether a redirection or tee may write to target from
// dir.
func writableTarget(target, dir string) bool {
	switch target {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	if target == "~" || strings.HasPrefix(target, "~/") || strings.HasPrefix(target, "$HOME") || strings.HasPrefix(target, "${HOME}") {
		return false
	}
	if strings.HasPrefix(target, "$") {
		return true // unknown until the shell expands it
	}
	if !filepath.IsAbs(target) {
		if dir == "" {
			return !strings.HasPrefix(filepath.Clean(target), "..")
		}
		target = filepath.Join(dir, target)
	}
	if dir == "" {
		return false
	}
	if within(filepath.Clean(dir), target) {
		return true
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil && within(real, target) {
		return true
	}
	return false
}
