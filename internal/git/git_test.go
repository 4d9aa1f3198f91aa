package git_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/git/gittest"
)

// TestMain isolates git from the machine's configuration and from any
// repository above the temporary directory, and gives commits an author.
func TestMain(m *testing.M) {
	gittest.Isolate()
	os.Exit(m.Run())
}

// repo makes a repository with files (path → content) committed.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	mustGit(t, dir, "-c", "init.defaultBranch=main", "init", "-q")
	for path, content := range files {
		write(t, dir, path, content)
	}
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "commit", "-q", "--allow-empty", "-m", "initial")
	return dir
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git.Run(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t *testing.T, dir, path, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	out, err := git.Run(context.Background(), dir, "ls-files")
	if err != nil {
		t.Fatal(err)
	}
	if out != "a.txt\n" {
		t.Errorf("ls-files = %q", out)
	}
}

func TestRunErrorNamesCommandAndStderr(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	_, err := git.Run(context.Background(), dir, "rev-parse", "--verify", "no-such-ref")
	var gerr *git.Error
	if !errors.As(err, &gerr) {
		t.Fatalf("got %v (%T), want a *git.Error", err, err)
	}
	if gerr.ExitCode == 0 || gerr.Stderr == "" || gerr.Dir != dir {
		t.Errorf("got %+v, want an exit code, stderr and the directory", gerr)
	}
	msg := err.Error()
	for _, want := range []string{"git rev-parse --verify no-such-ref", dir, gerr.Stderr} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := git.Run(ctx, t.TempDir(), "version")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestTakeSnapshotNotRepo(t *testing.T) {
	t.Parallel()
	inGitDir := filepath.Join(repo(t, nil), ".git")
	for name, dir := range map[string]string{"plain directory": t.TempDir(), "inside .git": inGitDir} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := git.TakeSnapshot(context.Background(), dir)
			if !errors.Is(err, git.ErrNotRepo) {
				t.Errorf("got %v, want ErrNotRepo", err)
			}
		})
	}
}

func TestTakeSnapshotMissingDir(t *testing.T) {
	t.Parallel()
	_, err := git.TakeSnapshot(context.Background(), filepath.Join(t.TempDir(), "missing"))
	if err == nil || errors.Is(err, git.ErrNotRepo) {
		t.Errorf("got %v, want an error other than ErrNotRepo", err)
	}
}
