package gemini

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain makes the test binary a fake `gemini` when it is run as one
// (its first argument is -p or --version): it replays recorded stream-json
// turns (FAKE_GEMINI_FIXTURES, from the real CLI; the session's n-th
// prompt gets the n-th, the last repeating), keeps the session's prompts in
// a file under HOME as the CLI does, and records its arguments and
// environment (FAKE_GEMINI_DIR/log.jsonl).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "-p" || os.Args[1] == "--version") {
		os.Exit(fakeGemini(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeLog is one process of the fake.
type fakeLog struct {
	PID    int      `json:"pid"`
	Args   []string `json:"args"`
	Prompt string   `json:"prompt"`
	Home   string   `json:"home"`
	Key    string   `json:"key"`
	Base   string   `json:"base"`
}

func fakeGemini(args []string) int {
	if args[0] == "--version" {
		v := os.Getenv("FAKE_GEMINI_VERSION")
		if v == "" {
			v = MinVersion
		}
		fmt.Println(v)
		return 0
	}
	prompt, sid, resume := "", "", false
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-p":
			prompt = args[i+1]
		case "--session-id":
			sid = args[i+1]
		case "--resume":
			sid, resume = args[i+1], true
		}
	}
	home := os.Getenv("HOME")
	logf, err := os.OpenFile(filepath.Join(os.Getenv("FAKE_GEMINI_DIR"), "log.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, _ := json.Marshal(fakeLog{PID: os.Getpid(), Args: args, Prompt: prompt, Home: home,
		Key: os.Getenv("GEMINI_API_KEY"), Base: os.Getenv("GOOGLE_GEMINI_BASE_URL")})
	logf.Write(append(b, '\n'))
	logf.Close()
	session := filepath.Join(home, ".gemini", "tmp", "work", "chats", "session-2026-01-01T00-00-"+sid[:8]+".jsonl")
	old, err := os.ReadFile(session)
	if resume && err != nil {
		fmt.Fprintf(os.Stderr, "Error resuming session: Invalid session identifier %q\n", sid)
		return 42
	}
	if !resume && err == nil {
		fmt.Fprintf(os.Stderr, "session %s exists\n", sid)
		return 42
	}
	turn := strings.Count(string(old), "\n")
	if err := os.MkdirAll(filepath.Dir(session), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	line, _ := json.Marshal(map[string]string{"sessionId": sid, "prompt": prompt})
	if err := os.WriteFile(session, append(append(old, line...), '\n'), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fixtures := strings.Split(os.Getenv("FAKE_GEMINI_FIXTURES"), ",")
	fixture, err := os.ReadFile(filepath.Join(os.Getenv("FAKE_GEMINI_TESTDATA"), fixtures[min(turn, len(fixtures)-1)]))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mode := os.Getenv("FAKE_GEMINI_MODE")
	if hang := os.Getenv("FAKE_GEMINI_HANG_TURN"); hang != "" && hang != strconv.Itoa(turn) {
		mode = ""
	}
	if mode == "crash" {
		fmt.Fprintln(os.Stderr, "fatal: the fake CLI broke on purpose")
		return 3
	}
	fmt.Fprintln(os.Stderr, "YOLO mode is enabled. All tool calls will be automatically approved.")
	out := bufio.NewWriter(os.Stdout)
	for l := range strings.Lines(string(fixture)) {
		if mode == "noresult" && strings.Contains(l, `"type":"result"`) {
			break
		}
		out.WriteString(l)
		out.Flush()
		if mode == "hang" && strings.Contains(l, `"type":"tool_use"`) {
			for { // a tool that never ends: only a signal stops it
				time.Sleep(time.Hour)
			}
		}
	}
	return 0
}
