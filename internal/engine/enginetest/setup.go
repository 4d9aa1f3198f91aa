package enginetest

import (
	"context"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// GitRepo is a new, empty git repository in a temporary directory: a
// task's worktree for a real CLI.
func GitRepo(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	if res, err := proc.Run(context.Background(), proc.Cmd{Args: []string{"git", "init", "-q", dir}}); err != nil || res.ExitCode != 0 {
		tb.Fatalf("git init: %v %s", err, res.Output)
	}
	return dir
}

// Server is the scripted model server playing script (YAML; name names it
// in errors), stopped when the test ends.
func Server(tb testing.TB, name, script string) *llmtest.Server {
	tb.Helper()
	s, err := llmtest.ParseScript(name, []byte(script))
	if err != nil {
		tb.Fatal(err)
	}
	return llmtest.NewServer(tb, s)
}
