package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git/gittest"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

// TestMain isolates the git that bash runs from the machine's configuration
// and from any repository above the temporary directory. The test binary is
// also the sandbox launcher of the tests that confine bash.
func TestMain(m *testing.M) {
	sandbox.ServeLauncher()
	gittest.Isolate()
	os.Exit(m.Run())
}

// call runs t with input marshalled to JSON (a string is sent as it is).
func call(t *testing.T, tl Tool, env *Env, input any) Result {
	t.Helper()
	var raw []byte
	if s, ok := input.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(input); err != nil {
			t.Fatal(err)
		}
	}
	return tl.Run(context.Background(), env, raw)
}

// tree makes files (path → content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		writeTestFile(t, dir, p, content)
	}
	return dir
}

func writeTestFile(t testing.TB, dir, p, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t *testing.T, dir, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
