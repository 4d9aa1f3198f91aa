package claude

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
)

// TestMain makes the test binary a fake `claude` when it is run as one
// (its first argument is -p or --version): it replays recorded stream-json
// (FAKE_CLAUDE_FIXTURE, from the real CLI) and records its arguments and
// every line it is sent (FAKE_CLAUDE_DIR/log.jsonl).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "-p" || os.Args[1] == "--version") {
		os.Exit(fakeClaude(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeLog is one entry of the fake's log.
type fakeLog struct {
	PID   int      `json:"pid"`
	Args  []string `json:"args,omitempty"`
	Stdin string   `json:"stdin,omitempty"`
}

func fakeClaude(args []string) int {
	if args[0] == "--version" {
		v := os.Getenv("FAKE_CLAUDE_VERSION")
		if v == "" {
			v = MinVersion
		}
		fmt.Println(v + " (Claude Code)")
		return 0
	}
	dir := os.Getenv("FAKE_CLAUDE_DIR")
	logf, err := os.OpenFile(filepath.Join(dir, "log.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logf.Close()
	record := func(e fakeLog) {
		e.PID = os.Getpid()
		b, _ := json.Marshal(e)
		logf.Write(append(b, '\n'))
	}
	record(fakeLog{Args: args})
	sid, resume := "", false
	for i, a := range args {
		if i+1 < len(args) && (a == "--session-id" || a == "--resume") {
			sid, resume = args[i+1], a == "--resume"
		}
	}
	transcript := filepath.Join(os.Getenv("CLAUDE_CONFIG_DIR"), "projects", "-work", sid+".jsonl")
	if _, err := os.Stat(transcript); resume && err != nil {
		fmt.Fprintf(os.Stderr, "No conversation found with session ID: %s\n", sid)
		return 1
	}
	if err := os.MkdirAll(filepath.Dir(transcript), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tf, err := os.OpenFile(transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer tf.Close()
	fixture, err := os.ReadFile(os.Getenv("FAKE_CLAUDE_FIXTURE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The fixture's turns: each ends with its result line.
	var turns [][]string
	var cur []string
	for l := range strings.Lines(string(fixture)) {
		cur = append(cur, strings.TrimSpace(l))
		if strings.Contains(l, `"type":"result"`) {
			turns = append(turns, cur)
			cur = nil
		}
	}
	mode := os.Getenv("FAKE_CLAUDE_MODE")
	if resume && mode == "resume" {
		// A resumed session replays the turns after those its transcript
		// holds (one per user line).
		b, _ := os.ReadFile(transcript)
		done := strings.Count(string(b), `"type":"user"`)
		turns = turns[min(done, len(turns)):]
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	next := func() (string, bool) {
		if !in.Scan() {
			return "", false
		}
		l := in.Text()
		record(fakeLog{Stdin: l})
		tf.WriteString(l + "\n")
		return l, true
	}
	out := bufio.NewWriter(os.Stdout)
	emit := func(l string) {
		out.WriteString(l + "\n")
		out.Flush()
	}
	for _, turn := range turns {
		l, ok := next()
		if !ok {
			return 0
		}
		if !strings.Contains(l, `"type":"user"`) {
			fmt.Fprintf(os.Stderr, "expected a user line, got %s\n", l)
			return 1
		}
		switch mode {
		case "crash":
			fmt.Fprintln(os.Stderr, "fatal: the fake CLI broke on purpose")
			return 3
		case "malformed":
			emit("this is not json {")
			emit(`{"type":"assistant","message":`)
		}
		for _, o := range turn {
			if mode == "object" && strings.Contains(o, `"type":"result"`) {
				// A command of the turn wrote an object, as a commit does.
				if err := enginetest.WriteObject(os.Getenv("GIT_OBJECT_DIRECTORY")); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
			}
			if strings.Contains(o, `"type":"control_response"`) {
				// Answer only once the engine asked to interrupt.
				req, ok := next()
				if !ok {
					return 0
				}
				if !strings.Contains(req, `"subtype":"interrupt"`) {
					fmt.Fprintf(os.Stderr, "expected an interrupt, got %s\n", req)
					return 1
				}
				var cr struct {
					RequestID string `json:"request_id"`
				}
				json.Unmarshal([]byte(req), &cr)
				o = strings.Replace(o, `"int-1"`, `"`+cr.RequestID+`"`, 1)
			}
			emit(o)
		}
	}
	// Past the fixture: wait for stdin to close.
	for {
		if _, ok := next(); !ok {
			return 0
		}
	}
}

// fakeRun is what the fake recorded of its processes.
type fakeRun struct {
	Args  []string
	Stdin []string
}

func readFakeLog(t *testing.T, dir string) []fakeRun {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []fakeRun
	index := map[int]int{}
	for l := range strings.Lines(string(b)) {
		var e fakeLog
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.Args != nil {
			index[e.PID] = len(runs)
			runs = append(runs, fakeRun{Args: e.Args})
			continue
		}
		i := index[e.PID]
		runs[i].Stdin = append(runs[i].Stdin, e.Stdin)
	}
	return runs
}

// fakeEngine is the engine on the fake CLI replaying fixture.
func fakeEngine(t *testing.T, fixture, mode string) (*Engine, string) {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fx, err := filepath.Abs(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "FAKE_CLAUDE_FIXTURE=" + fx, "FAKE_CLAUDE_DIR=" + dir, "FAKE_CLAUDE_MODE=" + mode}
	eng := New(Options{Command: exe, StateDir: filepath.Join(dir, "state"), APIKey: "sk-fake",
		Environ: func() []string { return env }, EnvAllow: []string{"FAKE_CLAUDE_FIXTURE", "FAKE_CLAUDE_DIR", "FAKE_CLAUDE_MODE"}})
	return eng, dir
}

func hasArgs(args []string, want ...string) bool {
	for i := range args {
		if slices.Equal(args[i:min(len(args), i+len(want))], want) {
			return true
		}
	}
	return false
}
