package lifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestCodexFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		m    task.Manifest
		net  bool
		want []string
	}{
		{"a writer with an extra root", task.Manifest{Tools: []string{"Read", "Edit", "Bash"}, Writable: []string{".", "/home/u/.cache/go \"x\""}}, true,
			[]string{"-c", `sandbox_mode="workspace-write"`, "-c", `approval_policy="never"`,
				"-c", `sandbox_workspace_write.writable_roots=["/home/u/.cache/go \"x\""]`, "-c", "sandbox_workspace_write.network_access=true"}},
		{"a writer of the worktree alone, no network", task.Manifest{Tools: []string{"Bash"}, Writable: []string{"."}}, false,
			[]string{"-c", `sandbox_mode="workspace-write"`, "-c", `approval_policy="never"`,
				"-c", `sandbox_workspace_write.writable_roots=[]`, "-c", "sandbox_workspace_write.network_access=false"}},
		{"a reader", task.Manifest{Tools: []string{"Read", "Grep"}, Writable: []string{"."}}, true,
			[]string{"-c", `sandbox_mode="read-only"`, "-c", `approval_policy="never"`}},
		{"writing tools but nothing writable", task.Manifest{Tools: []string{"Edit"}, Writable: []string{}}, true,
			[]string{"-c", `sandbox_mode="read-only"`, "-c", `approval_policy="never"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, Codex{Network: tc.net}.Flags(tc.m)); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGeminiFlagsAndPolicy(t *testing.T) {
	t.Parallel()
	m := task.Manifest{Tools: []string{"Read", "Glob", "Grep", "Bash"}, Commands: []string{"go test", `say "hi"`},
		Readable: []string{".", "/usr/share/doc"}, Writable: []string{"."}}
	want := []string{"--approval-mode", "yolo", "--skip-trust", "--policy", "/run/t1/policy.toml", "--include-directories", "/usr/share/doc"}
	if diff := cmp.Diff(want, Gemini{PolicyFile: "/run/t1/policy.toml"}.Flags(m)); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
	wantPolicy := `# Written by neuraphage from the task's sandbox manifest; rewritten at each start.

[[rule]]
toolName = ["write_file", "replace", "web_fetch", "google_web_search", "invoke_agent"]
decision = "deny"
priority = 900
denyMessage = "It is not in the task's sandbox manifest."

[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 800
denyMessage = "It is not in the task's sandbox manifest."

[[rule]]
toolName = "run_shell_command"
commandPrefix = ["go test", "say \"hi\""]
decision = "allow"
priority = 850
`
	if diff := cmp.Diff(wantPolicy, GeminiPolicy(m)); diff != "" {
		t.Errorf("policy (-want +got):\n%s", diff)
	}
	all := task.Manifest{Tools: []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash", "WebFetch", "WebSearch", "Task"}}
	if got := GeminiPolicy(all); got != "# Written by neuraphage from the task's sandbox manifest; rewritten at each start.\n" {
		t.Errorf("a manifest holding everything denies something:\n%s", got)
	}
	if got := tomlString("a\x1b\n\\"); got != `"a\u001B\u000A\\"` {
		t.Errorf("tomlString = %s", got)
	}
}
