package lifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestClaudeFlags(t *testing.T) {
	t.Parallel()
	all := []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash"}
	for _, tc := range []struct {
		name string
		m    task.Manifest
		mode string
		want []string
	}{
		{
			name: "the default set edits without asking and refuses the rest",
			m:    task.Manifest{Tools: all, Readable: []string{"."}, Writable: []string{"."}},
			want: []string{"--permission-mode=acceptEdits",
				"--allowedTools=Read,Write,Edit,MultiEdit,NotebookEdit,Glob,Grep,LS,Bash",
				"--disallowedTools=Task,WebFetch,WebSearch"},
		},
		{
			name: "a reviewer's read-only set refuses the edits acceptEdits would let through",
			m:    task.Manifest{Tools: []string{"Read", "Glob", "Grep", "Bash"}, Commands: []string{"go test", "go vet"}},
			want: []string{"--permission-mode=default",
				"--allowedTools=Read,Glob,Grep,LS,Bash(go test:*),Bash(go vet:*)",
				"--disallowedTools=Edit,MultiEdit,NotebookEdit,Task,WebFetch,WebSearch,Write"},
		},
		{
			name: "the configured mode wins; absolute paths become --add-dir; an unknown tool passes by its name",
			m: task.Manifest{Tools: []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash", "WebFetch", "Task", "WebSearch", "mcp__db__query"},
				Writable: []string{".", "/home/u/.cache/go-build"}, Readable: []string{".", "/usr/share/doc", "/home/u/.cache/go-build"}},
			mode: "bypassPermissions",
			want: []string{"--permission-mode=bypassPermissions",
				"--allowedTools=Read,Write,Edit,MultiEdit,NotebookEdit,Glob,Grep,LS,Bash,WebFetch,Task,WebSearch,mcp__db__query",
				"--add-dir=/home/u/.cache/go-build", "--add-dir=/usr/share/doc"},
		},
		{
			name: "no tools at all",
			m:    task.Manifest{},
			want: []string{"--permission-mode=default",
				"--disallowedTools=Bash,Edit,MultiEdit,NotebookEdit,Glob,Grep,LS,Read,Task,WebFetch,WebSearch,Write"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Claude{PermissionMode: tc.mode}.Flags(tc.m)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
		})
	}
}
