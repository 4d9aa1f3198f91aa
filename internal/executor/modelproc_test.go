package executor

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

// serveModelEnv, set to "TURNS,REST", makes the test binary a scripted model
// server playing turnScript(TURNS, REST): it prints its address on stdout and
// serves until its stdin closes.
const serveModelEnv = "NEURAPHAGE_BENCH_SERVE_MODEL"

// turnScript is BenchmarkTurn's model: tasks of n turns, and a task "short
// task" of rest turns when rest > 0.
func turnScript(n, rest int) *llmtest.Script {
	script := &llmtest.Script{Default: &llmtest.Conversation{Steps: turns(n)}}
	if rest > 0 {
		script.Conversations = []llmtest.Conversation{{Name: "rest", Match: llmtest.Match{User: "short task"}, Steps: turns(rest)}}
	}
	return script
}

// serveModel is the server process's main.
func serveModel(spec string) int {
	a, b, ok := strings.Cut(spec, ",")
	n, err1 := strconv.Atoi(a)
	rest, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || rest < 0 {
		fmt.Fprintf(os.Stderr, "%s=%q: want TURNS,REST\n", serveModelEnv, spec)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("http://%s\n", ln.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // the parent's end closes: stop
		cancel()
	}()
	if err := llmtest.ServeListener(ctx, ln, turnScript(n, rest), nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// modelProcess starts this test binary as a scripted model server playing
// turnScript(n, rest) and returns its base URL. It is stopped and waited
// for at the end of tb.
func modelProcess(tb testing.TB, n, rest int) string {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d", serveModelEnv, n, rest))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			stdin.Close()
			_ = cmd.Wait()
		}
	}
	tb.Cleanup(stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		tb.Fatalf("the model server process said nothing: %v", err)
	}
	return strings.TrimSpace(line)
}
