package gemini

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit/geminicli"
)

// denialScript asks for a shell command the task's manifest does not
// allow; after the retry note (the manifest was widened) it asks again
// and finishes. The command's output, 42-ran, is not in its text: only a
// command that ran puts it in a tool result.
const denialScript = `
conversations:
  - name: retried
    match: {user: "denied task", after: "widened"}
    steps:
      - text: "Trying again."
        tool_calls:
          - {name: run_shell_command, input: {command: "printf '%s-%s\\n' 42 ran", description: "run it"}}
      - text: "Recovered and done."
  - name: denied
    match: {user: "denied task"}
    steps:
      - text: "Running it."
        tool_calls:
          - {name: run_shell_command, input: {command: "printf '%s-%s\\n' 42 ran", description: "run it"}}
      - text: "It was refused."
default:
  steps:
    - text: "ok"
`

// TestRealDenialRecovered: the real CLI refuses a shell command the
// task's manifest leaves out, both ways its policy file refuses: a command
// beyond the manifest's prefixes (policy_violation) and the shell left out
// of its tools (tool_not_registered). The engine reports the denial, the
// moderate strategy widens the manifest within the user's policy, and the
// retried command runs: the model server sees its output and the task
// completes.
func TestRealDenialRecovered(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI")
	}
	cli := geminicli.CLI(t)
	for _, c := range []struct {
		name, refusal string
		manifest      task.Manifest
		widened       func(task.Manifest) bool
	}{
		{"policy_violation", "not in the task's sandbox manifest", task.Manifest{Tools: []string{"Read", "Bash"}, Commands: []string{"ls"}, Writable: []string{"."}},
			func(m task.Manifest) bool { return slices.Contains(m.Commands, "printf") }},
		{"tool_not_registered", `Tool "run_shell_command" not found`, task.Manifest{Tools: []string{"Read"}, Writable: []string{"."}},
			func(m task.Manifest) bool { return slices.Contains(m.Tools, "Bash") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := enginetest.Server(t, "denial.yaml", denialScript)
			dir := enginetest.GitRepo(t)
			eng := New(Options{Command: cli, StateDir: filepath.Join(t.TempDir(), "state"), BaseURL: srv.GeminiBaseURL(), APIKey: "gm-e2e",
				Model:   func(task.Task) string { return "gemini-2.5-flash" },
				Recover: &lifecycle.Recoverer{Policy: lifecycle.Policy{Tools: []string{"Read", "Write", "Edit", "Bash"}, Recovery: lifecycle.Moderate, MaxEscalations: 3}}})
			m := c.manifest
			tk := task.Task{ID: "t-realdenied", Description: "denied task: run it", Manifest: &m}
			h := enginetest.NewHost(tk)
			o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: dir, Host: h})
			if o.Status != engine.Completed || o.Reason != "Recovered and done." {
				t.Fatalf("outcome = %+v", o)
			}
			if !h.Has(event.KindPermissionDenied, func(p event.Payload) bool { return p.(event.PermissionDenied).Tool == "Bash" }) {
				t.Fatal("no permission denial of Bash observed")
			}
			got := h.Task().Manifest
			if got == nil || !c.widened(*got) || got.Escalations != 1 {
				t.Fatalf("manifest = %+v, want it widened once", got)
			}
			var refused, ran bool
			var results []string
			for _, req := range srv.Requests() {
				for _, msg := range req.Messages {
					for _, p := range msg.Parts {
						if r := p.ToolResult; r != nil {
							refused = refused || strings.Contains(r.Content, c.refusal)
							ran = ran || strings.Contains(r.Content, "42-ran")
							results = append(results, r.Content)
						}
					}
				}
			}
			if !refused || !ran {
				t.Errorf("the model server saw the refusal %v, the command's output %v; tool results:\n%s", refused, ran, strings.Join(results, "\n"))
			}
		})
	}
}
