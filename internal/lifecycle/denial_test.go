package lifecycle

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestDenial(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool, input string
		want        event.PermissionDenied
	}{
		// Claude Code's permission_denials, as the real CLI reported them.
		{"Bash", `{"command":"ls /","description":"list"}`, event.PermissionDenied{Turn: 2, Tool: "Bash", Command: "ls /"}},
		{"Write", `{"file_path":"/w/new.txt","content":"x"}`, event.PermissionDenied{Turn: 2, Tool: "Write", Path: "/w/new.txt", Write: true}},
		{"Read", `{"file_path":"/home/u/.ssh/id_rsa"}`, event.PermissionDenied{Turn: 2, Tool: "Read", Path: "/home/u/.ssh/id_rsa"}},
		{"NotebookEdit", `{"notebook_path":"a.ipynb"}`, event.PermissionDenied{Turn: 2, Tool: "NotebookEdit", Path: "a.ipynb", Write: true}},
		// Gemini CLI and Codex spellings.
		{"replace", `{"file_path":"main.go"}`, event.PermissionDenied{Turn: 2, Tool: "replace", Path: "main.go", Write: true}},
		{"read_file", `{"absolute_path":"/w/a.go"}`, event.PermissionDenied{Turn: 2, Tool: "read_file", Path: "/w/a.go"}},
		{"shell", `{"command":["bash","-lc","make lint"]}`, event.PermissionDenied{Turn: 2, Tool: "shell", Command: "bash -lc make lint"}},
		{"mcp__x__y", `not json`, event.PermissionDenied{Turn: 2, Tool: "mcp__x__y"}},
	} {
		got := Denial(2, tc.tool, json.RawMessage(tc.input), "")
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.tool, tc.input, diff)
		}
	}
}

func FuzzDenial(f *testing.F) {
	f.Add("Bash", `{"command":"x"}`)
	f.Add("Write", `{"file_path":1}`)
	f.Add("shell", `{"command":[1,"a",null]}`)
	f.Fuzz(func(t *testing.T, tool, input string) {
		d := Denial(1, tool, json.RawMessage(input), "r")
		if d.Tool != tool || d.Turn != 1 || (d.Write && d.Path == "") {
			t.Fatalf("Denial(%q, %q) = %+v", tool, input, d)
		}
	})
}

func TestSecretEnv(t *testing.T) {
	t.Parallel()
	m := task.Manifest{Env: []string{"PORT", "bad name"}, Secrets: []string{"GH_TOKEN", "NPM_TOKEN", "PORT"}}
	vals := map[string]string{"PORT": "8080", "GH_TOKEN": "s3cret"}
	env, missing := SecretEnv(m, func(n string) (string, bool) { v, ok := vals[n]; return v, ok })
	if diff := cmp.Diff([]string{"PORT=8080", "GH_TOKEN=s3cret"}, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"NPM_TOKEN"}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
}
