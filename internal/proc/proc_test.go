package proc_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/proc/proctest"
)

// safety is the bound on anything that should end: generous, never a timing
// assertion.
const safety = 60 * time.Second

func TestRunExitCodesAndOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cmd  proc.Cmd
		out  string
		code int
	}{
		{"success", proc.Cmd{Shell: "echo hello"}, "hello\n", 0},
		{"non-zero exit", proc.Cmd{Shell: "echo oops; exit 3"}, "oops\n", 3},
		{"stdout and stderr interleaved", proc.Cmd{Shell: "echo a; echo b >&2; echo c"}, "a\nb\nc\n", 0},
		{"killed by a signal", proc.Cmd{Shell: "kill -TERM $$"}, "", 128 + int(syscall.SIGTERM)},
		{"args without a shell", proc.Cmd{Args: []string{"sh", "-c", "echo $0 $1", "x", "y z"}}, "x y z\n", 0},
		{"args exit code", proc.Cmd{Args: []string{"false"}}, "", 1},
		{"stdin is empty", proc.Cmd{Shell: "cat; echo done"}, "done\n", 0},
		{"env replaces the caller's", proc.Cmd{Shell: `echo "$FOO/$HOME"`, Env: []string{"FOO=bar"}}, "bar/\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := proc.Run(context.Background(), tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != tt.out || res.ExitCode != tt.code {
				t.Errorf("got output %q exit %d, want %q exit %d", res.Output, res.ExitCode, tt.out, tt.code)
			}
			if res.TimedOut || res.Cancelled {
				t.Errorf("TimedOut=%v Cancelled=%v, want neither", res.TimedOut, res.Cancelled)
			}
		})
	}
}

func TestRunDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, err := proc.Run(context.Background(), proc.Cmd{Dir: dir, Shell: "pwd -P"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(dir)
	if got := strings.TrimSpace(res.Output); got != want {
		t.Errorf("pwd = %q, want %q", got, want)
	}
}

func TestRunStartErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cmd  proc.Cmd
	}{
		{"no such program", proc.Cmd{Args: []string{"/nonexistent/program"}}},
		{"no such directory", proc.Cmd{Shell: "true", Dir: "/nonexistent/dir"}},
		{"neither shell nor args", proc.Cmd{}},
		{"both shell and args", proc.Cmd{Shell: "true", Args: []string{"true"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := proc.Run(context.Background(), tt.cmd); err == nil {
				t.Error("got no error")
			}
		})
	}
}

func TestRunCapsOutput(t *testing.T) {
	t.Parallel()
	res, err := proc.Run(context.Background(), proc.Cmd{Shell: "seq 1 20000", MaxOutput: 100})
	if err != nil {
		t.Fatal(err)
	}
	full, _ := exec.Command("seq", "1", "20000").Output()
	if !strings.HasPrefix(res.Output, string(full[:50])) {
		t.Errorf("output does not start with the first 50 bytes: %q", res.Output)
	}
	if !strings.HasSuffix(res.Output, string(full[len(full)-50:])) {
		t.Errorf("output does not end with the last 50 bytes: %q", res.Output)
	}
	marker := "[... " + strconv.Itoa(len(full)-100) + " bytes of output dropped ...]"
	if !strings.Contains(res.Output, marker) {
		t.Errorf("output lacks %q: %q", marker, res.Output)
	}
	if res.OutputBytes != int64(len(full)) {
		t.Errorf("OutputBytes %d, want %d", res.OutputBytes, len(full))
	}
}

// pids parses "pgid child" printed by the test scripts.
func pids(t *testing.T, out string) (pgid, child int) {
	t.Helper()
	f := strings.Fields(out)
	if len(f) < 2 {
		t.Fatalf("script printed %q, want two pids", out)
	}
	a, err1 := strconv.Atoi(f[0])
	b, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		t.Fatalf("script printed %q, want two pids", out)
	}
	return a, b
}

func TestRunTimeoutKillsTheGroup(t *testing.T) {
	proctest.Subreaper(t)
	tests := []struct {
		name   string
		script string
		code   int
	}{
		// The shell waits on a background grandchild: SIGTERM ends both.
		{"grandchild", `sleep 1000 & echo $$ $!; wait`, 128 + int(syscall.SIGTERM)},
		// Both ignore SIGTERM: SIGKILL after the grace period.
		{"sigterm ignored", `trap '' TERM; sleep 1000 & echo $$ $!; wait; wait`, 128 + int(syscall.SIGKILL)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := proc.Run(context.Background(), proc.Cmd{
				Shell:   tt.script,
				Timeout: time.Second,
				Grace:   500 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut || res.Cancelled {
				t.Errorf("TimedOut=%v Cancelled=%v, want a timeout", res.TimedOut, res.Cancelled)
			}
			if res.ExitCode != tt.code {
				t.Errorf("exit code %d, want %d", res.ExitCode, tt.code)
			}
			if res.Duration > safety {
				t.Errorf("took %v", res.Duration)
			}
			pgid, child := pids(t, res.Output)
			proctest.GroupGone(t, pgid, []int{child}, safety)
		})
	}
}

func TestRunCancelKillsTheGroup(t *testing.T) {
	proctest.Subreaper(t)
	fifo := filepath.Join(t.TempDir(), "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res proc.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := proc.Run(ctx, proc.Cmd{Shell: `sleep 1000 & echo $$ $! > ` + fifo + `; wait`})
		done <- outcome{res, err}
	}()
	// Reading the fifo waits until the script has started its grandchild.
	ready, err := os.ReadFile(fifo)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(safety):
		t.Fatal("Run did not return after cancel")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if !o.res.Cancelled || o.res.TimedOut {
		t.Errorf("Cancelled=%v TimedOut=%v, want cancelled", o.res.Cancelled, o.res.TimedOut)
	}
	pgid, child := pids(t, string(ready))
	proctest.GroupGone(t, pgid, []int{child}, safety)
}

func TestRunAlreadyCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	res, err := proc.Run(ctx, proc.Cmd{Dir: dir, Shell: "touch started"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled {
		t.Error("Cancelled = false")
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Error("the command ran")
	}
}

func TestRunKillsBackgroundJobsWhenTheCommandEnds(t *testing.T) {
	proctest.Subreaper(t)
	res, err := proc.Run(context.Background(), proc.Cmd{Shell: `sleep 1000 & echo $$ $!`, Grace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut || res.Cancelled {
		t.Errorf("got %+v, want a plain success", res)
	}
	pgid, child := pids(t, res.Output)
	proctest.GroupGone(t, pgid, []int{child}, safety)
}

// A process that left the group (setsid) but holds the output pipe must not
// keep Run from returning.
func TestRunReturnsWhenAnEscapedProcessHoldsThePipe(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid program")
	}
	proctest.Subreaper(t)
	res, err := proc.Run(context.Background(), proc.Cmd{
		Shell: `setsid sleep 1000 & echo $!`,
		Grace: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Output))
	if err != nil {
		t.Fatalf("output %q: %v", res.Output, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
	})
	if res.ExitCode != 0 {
		t.Errorf("exit code %d, want 0", res.ExitCode)
	}
	if res.Duration > safety {
		t.Errorf("took %v", res.Duration)
	}
}
