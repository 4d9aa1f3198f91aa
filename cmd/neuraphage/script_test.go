package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/testkit/claudecli"
	"github.com/neuraphage/neuraphage-go/internal/testkit/codexcli"
	"github.com/neuraphage/neuraphage-go/internal/testkit/geminicli"
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
			// A race-enabled binary sleeps a second at exit by default; every
			// command of a script is one, so skip that unless asked for.
			if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
				env.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
			}
			env.Defer(func() {
				stopDaemon(env.T(), filepath.Join(home, "run", "daemon.pid"))
				// Under -race, a race in a daemon the CLI started is reported
				// only in its output file: fail the script on it.
				if b, err := os.ReadFile(filepath.Join(home, "logs", "daemon.out")); err == nil && strings.Contains(string(b), "WARNING: DATA RACE") {
					env.T().Fatal("the daemon reported a data race:\n" + string(b))
				}
			})
			return nil
		},
		// [landlock]: the kernel can confine task commands. [claude]: the
		// real Claude Code is installed (claudecli.Install).
		Condition: func(cond string) (bool, error) {
			if cond == "landlock" {
				return sandbox.Probe().Available(), nil
			}
			if cond == "claude" {
				// The real Claude Code can be installed with npm.
				_, skip, err := claudecli.Install()
				if skip != "" {
					fmt.Fprintln(os.Stderr, "the claude engine's scripts skip: "+skip)
				}
				return skip == "" && err == nil, err
			}
			if cond == "gemini" {
				_, skip, err := geminicli.Install()
				if skip != "" {
					fmt.Fprintln(os.Stderr, "the gemini engine's scripts skip: "+skip)
				}
				return skip == "" && err == nil, err
			}
			if cond == "codex" {
				// The real Codex CLI can be installed with npm.
				_, skip, err := codexcli.Install()
				if skip != "" {
					fmt.Fprintln(os.Stderr, "the codex engine's scripts skip: "+skip)
				}
				return skip == "" && err == nil, err
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"envfile":       cmdEnvFile,
			"killdaemon":    cmdKillDaemon,
			"eventually":    cmdEventually,
			"termdaemon":    cmdTermDaemon,
			"fakellm":       cmdFakeLLM,
			"deliveredonce": cmdDeliveredOnce,
			"waitgone":      cmdWaitGone,
			"alive":         cmdAlive,
			"exitcode":      cmdExitCode,
			"claudecli":     cmdClaudeCLI,
			"codexcli":      cmdCodexCLI,
			"geminicli":     cmdGeminiCLI,
		},
	})
}

// exitcode N CMD ARGS... runs the command and fails unless it exits with
// status N; its stdout and stderr are then checked as exec's are.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N CMD ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// claudecli sets CLAUDE_CLI to the real Claude Code, installed (pinned,
// once per test process, outside the repository) by the [claude] condition.
func cmdClaudeCLI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: claudecli")
	}
	path, skip, err := claudecli.Install()
	if skip != "" || err != nil {
		ts.Fatalf("the real Claude Code is not available: %s%v (guard the script with [!claude] skip)", skip, err)
	}
	ts.Setenv("CLAUDE_CLI", path)
}

// codexcli sets CODEX_CLI to the real Codex CLI, installed (pinned, once
// per test process, outside the repository) by the [codex] condition.
func cmdCodexCLI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: codexcli")
	}
	path, skip, err := codexcli.Install()
	if skip != "" || err != nil {
		ts.Fatalf("the real Codex CLI is not available: %s%v (guard the script with [!codex] skip)", skip, err)
	}
	ts.Setenv("CODEX_CLI", path)
}

// geminicli sets GEMINI_CLI to the real Gemini CLI, installed (pinned,
// once per test process, outside the repository) by the [gemini] condition.
func cmdGeminiCLI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: geminicli")
	}
	path, skip, err := geminicli.Install()
	if skip != "" || err != nil {
		ts.Fatalf("the real Gemini CLI is not available: %s%v (guard the script with [!gemini] skip)", skip, err)
	}
	ts.Setenv("GEMINI_CLI", path)
}

// envfile VAR FILE sets VAR to the first line of FILE.
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile VAR FILE")
	}
	line, _, _ := strings.Cut(ts.ReadFile(args[1]), "\n")
	ts.Setenv(args[0], strings.TrimSpace(line))
}

// eventually [-timeout=DURATION] PATTERN CMD ARGS... runs the command until
// its stdout matches the regular expression PATTERN, for at most 10 seconds
// (or DURATION): for waiting on another process (a background attach, a
// task's agent) without a fixed sleep.
func cmdEventually(ts *testscript.TestScript, neg bool, args []string) {
	timeout := 10 * time.Second
	if len(args) > 0 {
		if v, ok := strings.CutPrefix(args[0], "-timeout="); ok {
			d, err := time.ParseDuration(v)
			ts.Check(err)
			timeout, args = d, args[1:]
		}
	}
	if neg || len(args) < 2 {
		ts.Fatalf("usage: eventually [-timeout=DURATION] PATTERN CMD [ARGS...]")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	deadline := time.Now().Add(timeout)
	pause := 20 * time.Millisecond
	for {
		err := ts.Exec(args[1], args[2:]...)
		if err == nil && re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("stdout of %v never matched %q within %v (last error %v)", args[1:], args[0], timeout, err)
		}
		time.Sleep(pause)
		// Back off a little: each try starts a process, which is not free
		// on a small machine that also runs the daemon and its agents.
		pause = min(2*pause, 200*time.Millisecond)
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

// alive PIDFILE fails unless the process whose pid PIDFILE holds is running
// (it exists and is not a zombie).
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: alive PIDFILE")
	}
	pid := readPID(ts.MkAbs(args[0]))
	if pid <= 0 {
		ts.Fatalf("%s holds no pid", args[0])
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil || strings.Contains(string(st), ") Z ") {
		ts.Fatalf("process %d is not running (%v)", pid, err)
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

// fakellm SCRIPT.yaml serves the scripted model server (llmtest) from this
// test process for the rest of the script, and points the environment of the
// commands that follow at it: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY, so a
// daemon they start resolves every tier to Anthropic at that address (see
// llm.Resolve), with OPENAI_API_KEY and OPENAI_BASE_URL emptied so that
// nothing else is picked. Requests are logged to $WORK/fakellm.log. At the end
// of the script the daemon is stopped first, then the server, which is joined.
func cmdFakeLLM(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakellm SCRIPT.yaml")
	}
	script, err := llmtest.LoadScript(ts.MkAbs(args[0]))
	ts.Check(err)
	logFile, err := os.Create(filepath.Join(ts.Getenv("WORK"), "fakellm.log"))
	ts.Check(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logFile.Close()
		ts.Fatalf("listening for the scripted model server: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- llmtest.ServeListener(ctx, ln, script, logFile) }()
	home := ts.Getenv("NEURAPHAGE_HOME")
	ts.Defer(func() {
		// The daemon first, so that its runs end cleanly instead of
		// failing against a vanished server.
		stopDaemon(scriptLog{ts}, filepath.Join(home, "run", "daemon.pid"))
		cancel()
		if err := <-done; err != nil {
			ts.Logf("scripted model server: %v", err)
		}
		logFile.Close()
	})
	ts.Setenv("ANTHROPIC_BASE_URL", "http://"+ln.Addr().String())
	ts.Setenv("ANTHROPIC_API_KEY", "test")
	ts.Setenv("OPENAI_API_KEY", "")
	ts.Setenv("OPENAI_BASE_URL", "")
}

// scriptLog logs to a script's log.
type scriptLog struct{ ts *testscript.TestScript }

func (l scriptLog) Log(args ...any) { l.ts.Logf("%s", fmt.Sprintln(args...)) }

// eventJSON is the part of an event of `neuraphage events --json` that
// deliveredonce reads.
type eventJSON struct {
	ID     int64  `json:"id"`
	Kind   string `json:"kind"`
	TaskID string `json:"task_id"`
	Data   struct {
		InjectionID  int64   `json:"injection_id"`  // task.message
		InjectionIDs []int64 `json:"injection_ids"` // agent.delivered
	} `json:"data"`
}

// receipt is one agent.delivered event naming an injection.
type receipt struct {
	task  string
	event int64
}

func (r receipt) String() string { return fmt.Sprintf("%s (event %d)", r.task, r.event) }

// deliveredonce FILE N reads FILE, the output of `neuraphage events --json`
// holding task.message and agent.delivered events, and checks that there are
// N queued messages and that each is named by exactly one agent.delivered
// receipt, of its own task.
func cmdDeliveredOnce(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: deliveredonce EVENTS.json N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	var evs []eventJSON
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &evs))
	queued := map[int64]string{} // injection ID → task
	receipts := map[int64][]receipt{}
	for _, ev := range evs {
		switch ev.Kind {
		case "task.message":
			queued[ev.Data.InjectionID] = ev.TaskID
		case "agent.delivered":
			for _, id := range ev.Data.InjectionIDs {
				receipts[id] = append(receipts[id], receipt{task: ev.TaskID, event: ev.ID})
			}
		}
	}
	if len(queued) != want {
		ts.Fatalf("%d messages queued, want %d", len(queued), want)
	}
	var problems []string
	for id, tid := range queued {
		switch r := receipts[id]; {
		case len(r) == 0:
			problems = append(problems, fmt.Sprintf("injection %d of %s was never delivered", id, tid))
		case len(r) > 1:
			problems = append(problems, fmt.Sprintf("injection %d of %s was delivered %d times: %v", id, tid, len(r), r))
		case r[0].task != tid:
			problems = append(problems, fmt.Sprintf("injection %d of %s was delivered to %s", id, tid, r[0]))
		}
	}
	for id, r := range receipts {
		if _, ok := queued[id]; !ok {
			problems = append(problems, fmt.Sprintf("receipt %v names injection %d, which no task.message queued", r, id))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		ts.Fatalf("%s", strings.Join(problems, "\n"))
	}
	ts.Logf("%d messages, each delivered exactly once", want)
}

// waitgone PIDFILE [TIMEOUT] waits until the process whose pid is the first
// line of PIDFILE has exited (default 10 seconds).
func cmdWaitGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitgone PIDFILE [TIMEOUT]")
	}
	timeout := 10 * time.Second
	if len(args) == 2 {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		timeout = d
	}
	pid := readPID(ts.MkAbs(args[0]))
	if pid <= 0 {
		ts.Fatalf("%s holds no pid", args[0])
	}
	if !waitGone(pid, timeout) {
		ts.Fatalf("process %d is still there after %v", pid, timeout)
	}
}
