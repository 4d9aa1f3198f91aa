package lifecycle

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Codex maps manifests onto Codex's configuration overrides (-c KEY=TOML),
// which both `codex exec` and `codex app-server` take:
//
//   - sandbox_mode: workspace-write when the manifest writes anything (it
//     holds Write, Edit or Bash and a writable path), read-only otherwise;
//   - approval_policy: never (no one is there to approve: a refused action
//     fails and is reported, and recovery widens the manifest; the codex
//     engine's turns ask "untrusted" when the manifest names its commands,
//     and answer the approvals by it);
//   - sandbox_workspace_write.writable_roots: its absolute writable paths;
//   - sandbox_workspace_write.network_access: Network.
//
// Codex cannot narrow the workspace to some of its directories, nor refuse
// its shell or patch tool by name: the Landlock policy (NarrowSandbox)
// narrows writes, and the tools beyond the manifest are what a denial
// recovers from.
type Codex struct {
	// Network lets the CLI's commands reach the network (the user's
	// sandbox.network allows it).
	Network bool
}

var _ FlagMapper = Codex{}

// Flags implements FlagMapper.
func (c Codex) Flags(m task.Manifest) []string {
	writes := len(m.Writable) > 0 && slices.ContainsFunc(m.Tools, func(t string) bool { return t == "Write" || t == "Edit" || t == "Bash" })
	if !writes {
		return []string{"-c", `sandbox_mode="read-only"`, "-c", `approval_policy="never"`}
	}
	var roots []string
	for _, p := range m.Writable {
		if filepath.IsAbs(p) {
			roots = append(roots, tomlString(p))
		}
	}
	return []string{"-c", `sandbox_mode="workspace-write"`, "-c", `approval_policy="never"`,
		"-c", "sandbox_workspace_write.writable_roots=[" + strings.Join(roots, ",") + "]",
		"-c", fmt.Sprintf("sandbox_workspace_write.network_access=%t", c.Network)}
}

// Gemini maps manifests onto Gemini CLI's flags and policy engine: the
// approval mode yolo (headless: nothing may wait for a confirmation) in a
// workspace trusted for the session,
// the policy file at PolicyFile (GeminiPolicy, written there by the engine
// before each start) that denies what the manifest does not hold, and
// --include-directories for its absolute paths.
type Gemini struct {
	// PolicyFile is where the engine writes GeminiPolicy(m); "" passes no
	// policy (then nothing is refused by name).
	PolicyFile string
}

var _ FlagMapper = Gemini{}

// Flags implements FlagMapper.
func (g Gemini) Flags(m task.Manifest) []string {
	// --skip-trust: the task's worktree is trusted for the session, else
	// the CLI overrides yolo with default in a folder it has not seen.
	flags := []string{"--approval-mode", "yolo", "--skip-trust"}
	if g.PolicyFile != "" {
		flags = append(flags, "--policy", g.PolicyFile)
	}
	var dirs []string
	for _, p := range append(slices.Clone(m.Writable), m.Readable...) {
		if filepath.IsAbs(p) && !slices.Contains(dirs, p) {
			dirs = append(dirs, p)
		}
	}
	if len(dirs) > 0 {
		flags = append(flags, "--include-directories", strings.Join(dirs, ","))
	}
	return flags
}

// geminiTools are Gemini CLI's tools each tool of the manifest's
// vocabulary stands for.
var geminiTools = []struct {
	tool  string
	names []string
}{
	{"Read", []string{"read_file", "read_many_files"}},
	{"Write", []string{"write_file"}},
	{"Edit", []string{"replace"}},
	{"Glob", []string{"glob", "list_directory"}},
	{"Grep", []string{"grep_search"}},
	{"Bash", []string{"run_shell_command"}},
	{"WebFetch", []string{"web_fetch"}},
	{"WebSearch", []string{"google_web_search"}},
	{"Task", []string{"invoke_agent"}},
}

// GeminiPolicy is the policy file (TOML, Gemini CLI's policy engine) that
// holds Gemini CLI to m: a deny rule for the tools m does not hold and,
// when m lists commands, a deny rule for the shell with an allow rule for
// those prefixes above it. Priorities stay within the user tier (0..999).
func GeminiPolicy(m task.Manifest) string {
	var b strings.Builder
	b.WriteString("# Written by neuraphage from the task's sandbox manifest; rewritten at each start.\n")
	var denied []string
	for _, g := range geminiTools {
		if !slices.Contains(m.Tools, g.tool) {
			denied = append(denied, g.names...)
		}
	}
	rule := func(tools []string, extra, decision string, priority int) {
		q := make([]string, len(tools))
		for i, t := range tools {
			q[i] = tomlString(t)
		}
		name := "[" + strings.Join(q, ", ") + "]"
		if len(q) == 1 {
			name = q[0] // a rule with commandPrefix must name its one tool as a string
		}
		fmt.Fprintf(&b, "\n[[rule]]\ntoolName = %s\n%sdecision = %q\npriority = %d\n", name, extra, decision, priority)
		if decision == "deny" {
			b.WriteString("denyMessage = \"It is not in the task's sandbox manifest.\"\n")
		}
	}
	if len(denied) > 0 {
		rule(denied, "", "deny", 900)
	}
	if slices.Contains(m.Tools, "Bash") && len(m.Commands) > 0 {
		rule([]string{"run_shell_command"}, "", "deny", 800)
		q := make([]string, len(m.Commands))
		for i, c := range m.Commands {
			q[i] = tomlString(c)
		}
		rule([]string{"run_shell_command"}, "commandPrefix = ["+strings.Join(q, ", ")+"]\n", "allow", 850)
	}
	return b.String()
}

// tomlString quotes s as a TOML basic string: backslash and quote
// escaped, control characters as \uXXXX.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
