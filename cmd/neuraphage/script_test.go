package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"neuraphage": main})
}

// TestScripts runs the end-to-end scripts in testdata/script: each starts real
// daemons under its own NEURAPHAGE_HOME and drives them through the binary.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "h")
			env.Setenv("NEURAPHAGE_HOME", home)
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("XDG_RUNTIME_DIR", "")
			env.Defer(func() { stopDaemon(env.T(), filepath.Join(home, "run", "daemon.pid")) })
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"envfile":    cmdEnvFile,
			"killdaemon": cmdKillDaemon,
			"eventually": cmdEventually,
			"termdaemon": cmdTermDaemon,
		},
	})
}

// envfile VAR FILE sets VAR to the first line of FILE.
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile VAR FILE")
	}
	line, _, _ := strings.Cut(ts.ReadFile(args[1]), "\n")
	ts.Setenv(args[0], strings.TrimSpace(line))
}

// eventually PATTERN CMD ARGS... runs the command until its stdout matches the
// regular expression PATTERN, for at most 10 seconds: for waiting on another
// process (a background attach) without a fixed sleep.
func cmdEventually(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: eventually PATTERN CMD [ARGS...]")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := ts.Exec(args[1], args[2:]...)
		if err == nil && re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("stdout of %v never matched %q (last error %v)", args[1:], args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// termdaemon sends SIGTERM to the daemon and waits until it has exited.
func cmdTermDaemon(ts *testscript.TestScript, neg bool, args []string) {
	pid := readPID(filepath.Join(ts.Getenv("NEURAPHAGE_HOME"), "run", "daemon.pid"))
	if pid == 0 {
		ts.Fatalf("no daemon pid file")
	}
	ts.Check(syscall.Kill(pid, syscall.SIGTERM))
	if !waitGone(pid, 20*time.Second) {
		ts.Fatalf("daemon %d did not stop on SIGTERM", pid)
	}
}

// killdaemon kills the daemon of this script's home with SIGKILL and waits
// until it is gone, leaving its pid file and socket behind as a crash does.
func cmdKillDaemon(ts *testscript.TestScript, neg bool, args []string) {
	pid := readPID(filepath.Join(ts.Getenv("NEURAPHAGE_HOME"), "run", "daemon.pid"))
	if pid == 0 {
		ts.Fatalf("no daemon pid file")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		ts.Fatalf("killing daemon %d: %v", pid, err)
	}
	if !waitGone(pid, 10*time.Second) {
		ts.Fatalf("daemon %d survived SIGKILL", pid)
	}
}

func readPID(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// waitGone waits for a process to disappear. The daemon is not our child (the
// CLI started it in its own session), so it is reaped by init; until then
// signal 0 still finds it, which only delays us.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			return true // a zombie: it has exited
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// stopDaemon makes sure no daemon outlives its script.
func stopDaemon(t interface{ Log(...any) }, pidFile string) {
	pid := readPID(pidFile)
	if pid == 0 {
		return
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return
	}
	if !waitGone(pid, 15*time.Second) {
		t.Log("daemon", pid, "ignored SIGTERM; killing it")
		syscall.Kill(pid, syscall.SIGKILL)
		waitGone(pid, 5*time.Second)
	}
}
