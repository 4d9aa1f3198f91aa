package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

// TestBashSandboxed: with a launcher, bash's commands run confined to the
// working directory and the task's TMPDIR, and the deny-list still refuses
// first, with its own message.
func TestBashSandboxed(t *testing.T) {
	st := sandbox.Probe()
	if !st.Available() {
		t.Skipf("this kernel cannot confine commands (%s)", st)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "wt")
	tmp := filepath.Join(root, "tmp")
	for _, d := range []string{dir, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, root, "outside.txt", "untouched")
	env := &Env{Dir: dir, Vars: []string{"TMPDIR=" + tmp}, Sandbox: &sandbox.Launcher{Exe: os.Args[0], Status: st, Require: true}}
	for _, tc := range []struct {
		cmd      string
		isError  bool
		contains string
	}{
		{`cd .. && echo pwned > outside.txt`, true, "Permission denied"},
		{`rm -rf ~`, true, "command refused by policy: removing the root or home directory"},
		{`echo in > mine.txt && cat mine.txt`, false, "in\n[exit code 0]"},
		{`echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`, false, "t\n[exit code 0]"},
	} {
		res := call(t, bashTool{}, env, map[string]any{"command": tc.cmd})
		if res.IsError != tc.isError || !strings.Contains(res.Content, tc.contains) {
			t.Errorf("%s: error %v, content:\n%s\nwant error %v and %q", tc.cmd, res.IsError, res.Content, tc.isError, tc.contains)
		}
	}
	if got := readTestFile(t, root, "outside.txt"); got != "untouched" {
		t.Errorf("outside.txt = %q", got)
	}
}

// TestBashSandboxRequired: when the sandbox is required and cannot be
// applied, bash refuses with the reason and runs nothing.
func TestBashSandboxRequired(t *testing.T) {
	dir := t.TempDir()
	env := &Env{Dir: dir, Sandbox: &sandbox.Launcher{Require: true, Status: sandbox.Status{Reason: "kernel lacks Landlock"}}}
	res := call(t, bashTool{}, env, map[string]any{"command": "touch ran"})
	if !res.IsError || !strings.Contains(res.Content, "sandbox.require is set") || !strings.Contains(res.Content, "kernel lacks Landlock") {
		t.Errorf("got error %v:\n%s", res.IsError, res.Content)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran")
	}
}
