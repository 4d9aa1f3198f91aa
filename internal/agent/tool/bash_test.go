package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/proc/proctest"
)

// safety bounds anything that must end: generous, never a timing assertion.
const safety = 60 * time.Second

func TestBash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      Env
		input    any
		isError  bool
		contains []string
		exact    string
	}{
		{name: "output and exit code", input: map[string]any{"command": "echo hello; echo err >&2"}, exact: "hello\nerr\n[exit code 0]\n"},
		{name: "no output", input: map[string]any{"command": "true"}, exact: "(no output)\n[exit code 0]\n"},
		{name: "non-zero exit", input: map[string]any{"command": "echo broken; exit 2"}, isError: true, exact: "broken\n[exit code 2]\n"},
		{name: "runs in the working directory", input: map[string]any{"command": "cat here.txt"}, exact: "here\n[exit code 0]\n"},
		{name: "output capped", env: Env{MaxOutput: 100}, input: map[string]any{"command": "seq 1 10000"}, contains: []string{"1\n2\n3\n", "bytes of output dropped", "9999\n10000\n[exit code 0]"}},
		{name: "refused by policy", input: map[string]any{"command": "rm -rf ~"}, isError: true, contains: []string{"command refused by policy: removing the root or home directory", "ask_user"}},
		{name: "redirect outside refused", input: map[string]any{"command": "echo x > ../escape.txt"}, isError: true, contains: []string{"outside the working directory"}},
		{name: "custom policy", env: Env{Policy: &Policy{Rules: []Rule{{Pattern: `\bmake\b`, Reason: "no make here"}}}}, input: map[string]any{"command": "make"}, isError: true, contains: []string{"no make here"}},
		{name: "missing command", input: map[string]any{}, isError: true, contains: []string{`missing required field "command"`}},
		{name: "bad timeout", input: map[string]any{"command": "true", "timeout": "10"}, isError: true, contains: []string{`"timeout" must be an integer`}},
		{name: "zero timeout", input: map[string]any{"command": "true", "timeout": 0}, isError: true, contains: []string{`"timeout" must be at least 1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tree(t, map[string]string{"here.txt": "here\n"})
			env := tt.env
			env.Dir = dir
			res := call(t, bashTool{}, &env, tt.input)
			wantResult(t, res, tt.isError, tt.contains...)
			if tt.exact != "" && res.Content != tt.exact {
				t.Errorf("content %q, want %q", res.Content, tt.exact)
			}
			if len(res.Changed) != 0 {
				t.Errorf("Changed = %v outside a git work tree", res.Changed)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.txt")); err == nil {
				t.Error("a refused command ran")
			}
		})
	}
}

func TestBashTimeouts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env   Env
		asked Seconds
		want  Seconds
	}{
		{Env{}, 0, DefaultBashTimeout},
		{Env{}, 10, 10},
		{Env{}, 100000, DefaultMaxBashTimeout},
		{Env{BashTimeout: 5, MaxBashTimeout: 60}, 0, 5},
		{Env{BashTimeout: 5, MaxBashTimeout: 60}, 120, 60},
	}
	for _, tt := range tests {
		if got := tt.env.bashTimeout(tt.asked); got != tt.want {
			t.Errorf("%+v asked %d: got %d, want %d", tt.env, tt.asked, got, tt.want)
		}
	}
}

// pidsIn finds the "pgid child" line the test scripts print.
func pidsIn(t *testing.T, out string) (pgid, child int) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(\d+) (\d+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pids in %q", out)
	}
	pgid, _ = strconv.Atoi(m[1])
	child, _ = strconv.Atoi(m[2])
	return pgid, child
}

func TestBashTimeoutKillsTheProcessGroup(t *testing.T) {
	proctest.Subreaper(t)
	env := &Env{Dir: t.TempDir()}
	res := call(t, bashTool{}, env, map[string]any{"command": "sleep 1000 & echo $$ $!; wait", "timeout": 1})
	wantResult(t, res, true, "timed out after 1 seconds", "killed")
	pgid, child := pidsIn(t, res.Content)
	proctest.GroupGone(t, pgid, []int{child}, safety)
}

func TestBashCancelStopsTheCommand(t *testing.T) {
	proctest.Subreaper(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		input, _ := json.Marshal(map[string]any{"command": "sleep 1000 & echo $$ $! > ready; wait"})
		done <- bashTool{}.Run(ctx, &Env{Dir: dir}, input)
	}()
	ready, err := os.ReadFile(fifo) // returns once the script wrote its pids
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	var res Result
	select {
	case res = <-done:
	case <-time.After(safety):
		t.Fatal("bash did not return after cancel")
	}
	wantResult(t, res, true, "cancelled")
	pgid, child := pidsIn(t, strings.TrimSpace(string(ready)))
	proctest.GroupGone(t, pgid, []int{child}, safety)
}

func TestBashReportsChangedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gitIn(t, dir, "-c", "init.defaultBranch=main", "init", "-q")
	writeTestFile(t, dir, "tracked.txt", "v1\n")
	writeTestFile(t, dir, "doomed.txt", "bye\n")
	writeTestFile(t, dir, "dirty.txt", "v1\n")
	writeTestFile(t, dir, "untouched.txt", "same\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "initial")
	writeTestFile(t, dir, "dirty.txt", "v2\n") // dirty before the command, as after an edit
	env := &Env{Dir: dir}
	res := call(t, bashTool{}, env, map[string]any{"command": "echo v2 > tracked.txt && rm doomed.txt && echo v3 >> dirty.txt && mkdir -p gen && echo x > gen/new.txt"})
	wantResult(t, res, false, "[exit code 0]")
	want := []Change{{Path: "dirty.txt", Op: Modified}, {Path: "doomed.txt", Op: Deleted}, {Path: "gen/new.txt", Op: Created}, {Path: "tracked.txt", Op: Modified}}
	if diff := cmp.Diff(want, res.Changed); diff != "" {
		t.Errorf("Changed (-want +got):\n%s", diff)
	}
	// A command that only reads changes nothing.
	res = call(t, bashTool{}, env, map[string]any{"command": "cat dirty.txt; git status --short"})
	wantResult(t, res, false)
	if len(res.Changed) != 0 {
		t.Errorf("a read-only command changed %v", res.Changed)
	}
	// A failing command still reports what it changed.
	res = call(t, bashTool{}, env, map[string]any{"command": "echo y > late.txt; exit 1"})
	wantResult(t, res, true, "[exit code 1]")
	if diff := cmp.Diff([]Change{{Path: "late.txt", Op: Created}}, res.Changed); diff != "" {
		t.Errorf("Changed after a failure (-want +got):\n%s", diff)
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := git.Run(context.Background(), dir, args...); err != nil {
		t.Fatal(err)
	}
}

// The working directory may be reached through a symlink (/tmp on macOS).
func TestBashThroughSymlinkedWorkingDirectory(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, real, "-c", "init.defaultBranch=main", "init", "-q")
	link := filepath.Join(base, "link")
	symlink(t, "real", link)
	res := call(t, bashTool{}, &Env{Dir: link}, map[string]any{"command": "echo x > a.txt && echo y > " + filepath.Join(link, "b.txt")})
	wantResult(t, res, false, "[exit code 0]")
	want := []Change{{Path: "a.txt", Op: Created}, {Path: "b.txt", Op: Created}}
	if diff := cmp.Diff(want, res.Changed); diff != "" {
		t.Errorf("Changed (-want +got):\n%s", diff)
	}
}
