package git_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// TestStream: standard input and output stream through git; a failure is
// an *Error with git's stderr; an input larger than any pipe buffer
// passes whole.
func TestStream(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	var out bytes.Buffer
	if err := git.Stream(context.Background(), dir, nil, strings.NewReader(big), &out, "hash-object", "--stdin"); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "big.txt", big)
	want := mustGit(t, dir, "hash-object", "big.txt")
	if got := strings.TrimSpace(out.String()); got != strings.TrimSpace(want) {
		t.Fatalf("streamed hash %s, want %s", got, want)
	}

	out.Reset()
	err := git.Stream(context.Background(), dir, []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=x.y", "GIT_CONFIG_VALUE_0=z"}, nil, &out, "config", "--get", "x.y")
	if err != nil || strings.TrimSpace(out.String()) != "z" {
		t.Fatalf("env not passed: %q, %v", out.String(), err)
	}

	err = git.Stream(context.Background(), dir, nil, nil, &out, "cat-file", "-p", "no-such-object")
	var gerr *git.Error
	if !errors.As(err, &gerr) || gerr.ExitCode == 0 || gerr.Stderr == "" {
		t.Fatalf("a failing git: %v, want an *Error with stderr", err)
	}
}
