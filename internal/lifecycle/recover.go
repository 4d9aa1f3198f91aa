package lifecycle

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Strategy is how permission denials are recovered from (sandbox.recovery).
type Strategy string

// Strategies.
const (
	// Moderate widens the manifest and retries, up to MaxEscalations times.
	Moderate Strategy = "moderate"
	// Aggressive widens and retries while a fix within the policy exists.
	Aggressive Strategy = "aggressive"
	// Interactive asks the user before each widening, through the task's
	// waiting state.
	Interactive Strategy = "interactive"
)

// Action is what the engine does about a denial.
type Action string

// Actions.
const (
	// Retry: apply Decision.Manifest and resume the session.
	Retry Action = "retry"
	// Ask: store Decision.Manifest (the fix pending in it) and end the
	// run waiting, with Decision.Question for the user; Answer applies
	// their reply.
	Ask Action = "ask"
	// GiveUp: leave the manifest as it is; the agent is told it may not.
	GiveUp Action = "give_up"
)

// Fix is a widening of a manifest that would allow a denied action.
type Fix struct {
	Tool     string // a tool to add
	Writable string // a path to make writable
	Readable string // a path to make readable
	Command  string // a command prefix to allow
}

// Zero reports whether f changes nothing.
func (f Fix) Zero() bool { return f == Fix{} }

// String describes f for events and questions.
func (f Fix) String() string {
	var parts []string
	if f.Tool != "" {
		parts = append(parts, "allow tool "+f.Tool)
	}
	if f.Command != "" {
		parts = append(parts, "allow command "+f.Command)
	}
	if f.Writable != "" {
		parts = append(parts, "make "+f.Writable+" writable")
	}
	if f.Readable != "" {
		parts = append(parts, "make "+f.Readable+" readable")
	}
	return strings.Join(parts, ", ")
}

// Apply returns m widened by f, its escalations counted and its source
// marked recovered.
func (f Fix) Apply(m task.Manifest) task.Manifest {
	out := m
	add := func(list []string, s string) []string {
		if s == "" || slices.Contains(list, s) {
			return list
		}
		return append(slices.Clone(list), s)
	}
	out.Tools = add(m.Tools, f.Tool)
	out.Commands = add(m.Commands, f.Command)
	out.Writable = add(m.Writable, f.Writable)
	out.Readable = add(m.Readable, f.Readable)
	out.Escalations++
	if !strings.HasSuffix(out.Source, "+recovered") {
		out.Source += "+recovered"
	}
	return out
}

// ComputeFix finds the widening of m that allows d within p, or explains
// why there is none (the policy forbids it, or m already allows it and the
// denial came from elsewhere: the sandbox, the file system).
func ComputeFix(m task.Manifest, d event.PermissionDenied, p Policy) (Fix, error) {
	var f Fix
	tool := strings.TrimSpace(d.Tool)
	if tool != "" && !slices.Contains(m.Tools, tool) {
		if !slices.Contains(p.Tools, tool) {
			return Fix{}, fmt.Errorf("tool %s is beyond the policy (sandbox.tools)", tool)
		}
		f.Tool = tool
	}
	if strings.TrimSpace(d.Command) != "" && len(m.Commands) > 0 && !commandAllowed(m.Commands, d.Command) {
		// The first command of the line the manifest does not allow (a
		// fix widens by one prefix; a line of several asks again for the
		// next).
		parts, ok := simpleCommands(d.Command)
		if !ok {
			return Fix{}, fmt.Errorf("command %q cannot be allowed: it runs what cannot be read before it runs (a substitution, a subshell or group, an unclosed quote)", d.Command)
		}
		for _, c := range parts {
			if commandAllowed(m.Commands, c) {
				continue
			}
			cmd := commandPrefix(c)
			if !validCommand(cmd) {
				return Fix{}, fmt.Errorf("command %q cannot be allowed", d.Command)
			}
			f.Command = cmd
			break
		}
	}
	if d.Path != "" {
		dir := d.Path
		if d.Write {
			if pathCovered(m.Writable, d.Path) {
				return f, errIfZero(f, "the manifest already lets it write "+d.Path+"; the denial came from elsewhere (the sandbox or the file system)")
			}
			if !pathAllowed(dir, p.Write, nil) {
				return Fix{}, fmt.Errorf("writing %s is beyond the policy (sandbox.write)", d.Path)
			}
			f.Writable = filepath.Clean(dir)
		} else {
			if pathCovered(m.Readable, d.Path) {
				return f, errIfZero(f, "the manifest already lets it read "+d.Path+"; the denial came from elsewhere (the sandbox or the file system)")
			}
			if !pathAllowed(dir, nil, p.DenyRead) {
				return Fix{}, fmt.Errorf("reading %s is beyond the policy (sandbox.deny_read)", d.Path)
			}
			f.Readable = filepath.Clean(dir)
		}
	}
	return f, errIfZero(f, "the manifest already allows it; the denial came from elsewhere")
}

func errIfZero(f Fix, why string) error {
	if f.Zero() {
		return fmt.Errorf("%s", why)
	}
	return nil
}

// commandPrefix is the prefix of a command a fix allows: its program and,
// for programs with subcommands, the subcommand ("go test", "git commit").
func commandPrefix(cmd string) string {
	f := strings.Fields(cmd)
	switch {
	case len(f) == 0:
		return ""
	case len(f) > 1 && !strings.HasPrefix(f[1], "-") && slices.Contains(subcommanded, filepath.Base(f[0])):
		return f[0] + " " + f[1]
	}
	return f[0]
}

var subcommanded = []string{"go", "git", "npm", "cargo", "make", "docker", "kubectl", "pnpm", "yarn", "pip", "uv", "gh"}

// AllowsCommand reports whether m lets the agent run cmd: the shell among
// its tools and, when it names commands, cmd starting with one of them.
// An engine whose CLI asks before a command (Codex's approval requests)
// answers by it.
func AllowsCommand(m task.Manifest, cmd string) bool {
	return slices.Contains(m.Tools, "Bash") && (len(m.Commands) == 0 || commandAllowed(m.Commands, cmd))
}

// commandAllowed reports whether every command cmd runs starts with one of
// the prefixes (whole words): a line that chains commands (;, &&, ||, |, &
// or a newline outside quotes) is allowed only when each of them is, so
// that an allowed "git status" does not carry "git status && rm -rf ." with
// it. What cannot be read without running it is never allowed: a command
// substitution ($( or a backquote, outside single quotes), a process
// substitution, a subshell or a group, an unclosed quote.
func commandAllowed(prefixes []string, cmd string) bool {
	parts, ok := simpleCommands(cmd)
	if !ok || len(parts) == 0 {
		return false
	}
	for _, c := range parts {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return c == p || strings.HasPrefix(c, p+" ") }) {
			return false
		}
	}
	return true
}

// simpleCommands splits a shell line at its control operators outside
// quotes, each part with its words joined by single spaces; false when the
// line holds what simpleCommands cannot split safely (see commandAllowed).
func simpleCommands(line string) ([]string, bool) {
	var (
		parts []string
		cur   strings.Builder
		quote byte // ' or " while inside quotes
	)
	flush := func() bool {
		c := strings.Join(strings.Fields(cur.String()), " ")
		cur.Reset()
		if c == "" {
			return true
		}
		if c[0] == '(' || c[0] == '{' {
			return false // a subshell or a group
		}
		parts = append(parts, c)
		return true
	}
	for i := 0; i < len(line); i++ {
		b := line[i]
		switch {
		case quote == '\'':
			if b == '\'' {
				quote = 0
			}
		case b == '\\':
			if i+1 < len(line) {
				cur.WriteByte(b)
				i++
				b = line[i]
			}
		case b == '`', b == '$' && i+1 < len(line) && line[i+1] == '(':
			return nil, false
		case quote == '"':
			if b == '"' {
				quote = 0
			}
		case b == '\'' || b == '"':
			quote = b
		case (b == '<' || b == '>') && i+1 < len(line) && line[i+1] == '(':
			return nil, false
		case b == ';' || b == '&' || b == '|' || b == '\n':
			if !flush() {
				return nil, false
			}
			continue
		}
		cur.WriteByte(b)
	}
	if quote != 0 || !flush() {
		return nil, false
	}
	return parts, true
}

// pathCovered reports whether path is within one of the manifest's paths
// (relative ones are within the worktree, which holds every relative
// path).
func pathCovered(paths []string, path string) bool {
	c := filepath.Clean(path)
	for _, p := range paths {
		switch {
		case !filepath.IsAbs(p) && !filepath.IsAbs(c):
			if p == "." || under(c, p) {
				return true
			}
		case filepath.IsAbs(p) && filepath.IsAbs(c) && under(c, p):
			return true
		}
	}
	return false
}

// Recoverer decides about permission denials under a policy.
type Recoverer struct {
	Policy Policy
}

// Decision is the recovery strategy's answer to one denial.
type Decision struct {
	Action Action
	// Manifest is the manifest to store: widened (Retry), with the fix
	// pending (Ask), or as it was (GiveUp).
	Manifest task.Manifest
	Fix      Fix
	// Question is what to ask the user (Ask); Reason why nothing can be
	// done (GiveUp).
	Question string
	Reason   string
	// Events are the lifecycle's events for the decision: the permission
	// error and the recovery attempt. The engine emits them.
	Events []event.Payload
}

// Decide judges denial d of a task running under m.
func (r Recoverer) Decide(m task.Manifest, d event.PermissionDenied) Decision {
	strategy := r.Policy.Recovery
	if strategy == "" {
		strategy = Moderate
	}
	perm := event.PermissionError{Tool: d.Tool, Path: d.Path, Command: d.Command}
	fix, err := ComputeFix(m, d, r.Policy)
	if err == nil && strategy == Moderate && m.Escalations >= r.Policy.MaxEscalations {
		err = fmt.Errorf("the manifest was widened %d times already (sandbox.max_escalations)", m.Escalations)
	}
	if err != nil {
		perm.Reason = err.Error()
		return Decision{Action: GiveUp, Manifest: m, Reason: err.Error(), Events: []event.Payload{perm,
			event.RecoveryAttempt{Strategy: string(strategy), Action: string(GiveUp), Escalation: m.Escalations}}}
	}
	perm.Fix = fix.String()
	widened := fix.Apply(m)
	dec := Decision{Action: Retry, Manifest: widened, Fix: fix}
	if strategy == Interactive {
		// Nothing is widened until the user says so: the fix waits in the
		// manifest, stored with the task, for their answer (Answer).
		asked := m
		g := task.Grant(fix)
		asked.Pending = &g
		dec.Action, dec.Manifest = Ask, asked
		dec.Question = fmt.Sprintf("The agent was refused %s. Allow it (%s)? Reply \"allow\" to widen its sandbox manifest and continue, anything else to keep it as it is.", denied(d), fix)
	}
	dec.Events = []event.Payload{perm, event.RecoveryAttempt{Strategy: string(strategy), Action: string(dec.Action), Fix: fix.String(), Escalation: widened.Escalations}}
	return dec
}

// Answer applies the user's reply to m's pending widening (the
// interactive strategy's question): approved (Approves), the widening is
// made, kept within p again; otherwise it is dropped. Either way Pending
// is cleared. It reports whether the manifest was widened, and the event
// that records the answer. A manifest with nothing pending is returned as
// it is.
func Answer(m task.Manifest, reply string, p Policy) (task.Manifest, bool, event.Payload) {
	if m.Pending == nil {
		return m, false, nil
	}
	fix := Fix(*m.Pending)
	m.Pending = nil
	if !Approves(reply) {
		return m, false, event.RecoveryAttempt{Strategy: string(Interactive), Action: "declined", Fix: fix.String(), Escalation: m.Escalations}
	}
	widened, _ := Clamp(fix.Apply(m), p)
	return widened, true, event.RecoveryAttempt{Strategy: string(Interactive), Action: string(Retry), Fix: fix.String(), Escalation: widened.Escalations}
}

func denied(d event.PermissionDenied) string {
	switch {
	case d.Command != "":
		return fmt.Sprintf("the command %q", d.Command)
	case d.Path != "" && d.Write:
		return "writing " + d.Path
	case d.Path != "":
		return "reading " + d.Path
	}
	return "the tool " + d.Tool
}

// Approves reports whether a user's reply to an Ask decision's question
// approves the fix: its first word is allow, yes, y or ok.
func Approves(reply string) bool {
	f := strings.Fields(strings.ToLower(reply))
	if len(f) == 0 {
		return false
	}
	w := strings.Trim(f[0], ".,!:;\"'")
	return w == "allow" || w == "yes" || w == "y" || w == "ok"
}
