package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
)

// TestMain makes the test binary a fake `codex` when FAKE_CODEX_MODE is
// set: "replay" answers the engine from a recording of the real CLI's
// app-server traffic (FAKE_CODEX_FIXTURE), logging every message it is
// sent (FAKE_CODEX_DIR/log.jsonl); "record" sits between the engine and
// the real CLI (FAKE_CODEX_REAL) and writes the traffic to a new
// FAKE_CODEX_DIR/<n>.jsonl; "crash" answers initialize and dies. With
// FAKE_CODEX_OBJECT set, a replayed turn writes an object before it ends.
func TestMain(m *testing.M) {
	if mode := os.Getenv("FAKE_CODEX_MODE"); mode != "" && len(os.Args) > 1 && (os.Args[1] == "app-server" || os.Args[1] == "--version") {
		os.Exit(fakeCodex(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeEnv are the variables the engine lets through to the fake.
var fakeEnv = []string{"FAKE_CODEX_MODE", "FAKE_CODEX_FIXTURE", "FAKE_CODEX_DIR", "FAKE_CODEX_REAL", "FAKE_CODEX_VERSION", "FAKE_CODEX_OBJECT"}

// recorded is one line of a recording.
type recorded struct {
	Dir string          `json:"dir"` // send (engine → CLI) or recv
	Msg json.RawMessage `json:"msg"`
}

func fakeCodex(mode string, args []string) int {
	if args[0] == "--version" {
		fmt.Println("codex-cli " + orDefault(os.Getenv("FAKE_CODEX_VERSION"), MinVersion))
		return 0
	}
	switch mode {
	case "record":
		return fakeRecord(args)
	case "crash":
		in := bufio.NewScanner(os.Stdin)
		if in.Scan() {
			var m msg
			_ = json.Unmarshal(in.Bytes(), &m)
			b, _ := json.Marshal(map[string]any{"id": m.ID, "result": map[string]any{}})
			fmt.Println(string(b))
		}
		fmt.Fprintln(os.Stderr, "thread 'main' panicked: fake crash for the test")
		return 101
	}
	return fakeReplay()
}

func orDefault(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// fakeRecord runs the real CLI, writing what passes either way.
func fakeRecord(args []string) int {
	dir := os.Getenv("FAKE_CODEX_DIR")
	var f *os.File
	for n := 1; ; n++ {
		var err error
		f, err = os.OpenFile(filepath.Join(dir, strconv.Itoa(n)+".jsonl"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	defer f.Close()
	var mu sync.Mutex
	write := func(dir string, line []byte) {
		if !json.Valid(line) {
			return
		}
		b, _ := json.Marshal(recorded{Dir: dir, Msg: append(json.RawMessage(nil), line...)})
		mu.Lock()
		f.Write(append(b, '\n'))
		mu.Unlock()
	}
	cmd := exec.Command(os.Getenv("FAKE_CODEX_REAL"), args...)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		in := bufio.NewScanner(os.Stdin)
		in.Buffer(nil, 64<<20)
		for in.Scan() {
			write("send", in.Bytes())
			stdin.Write(append(in.Bytes(), '\n'))
		}
		stdin.Close()
	}()
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 64<<20)
	for out.Scan() {
		write("recv", out.Bytes())
		os.Stdout.Write(append(out.Bytes(), '\n'))
	}
	_ = cmd.Wait()
	return 0
}

// segment is a message the engine sent in the recording and what the CLI
// sent back before the engine's next one.
type segment struct {
	method string
	id     *int64
	recvs  []json.RawMessage
}

// fakeReplay answers each message the engine sends with what the real
// CLI sent after the same message in the recording: the engine must send
// the recording's methods in its order (else the fake exits 3). Responses
// carry the engine's request ids.
func fakeReplay() int {
	segs, err := loadSegments(os.Getenv("FAKE_CODEX_FIXTURE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	logf, err := os.OpenFile(filepath.Join(os.Getenv("FAKE_CODEX_DIR"), "log.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logf.Close()
	ids := map[int64]int64{} // recorded id → the engine's
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 64<<20)
	for in.Scan() {
		logf.Write(append(append([]byte(nil), in.Bytes()...), '\n'))
		var m msg
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			fmt.Fprintln(os.Stderr, "fake codex: not JSON:", in.Text())
			return 3
		}
		if m.Method == "" {
			continue // an answer to a request of the CLI's
		}
		if len(segs) == 0 {
			fmt.Fprintf(os.Stderr, "fake codex: %s beyond the recording\n", m.Method)
			return 3
		}
		s := segs[0]
		segs = segs[1:]
		if s.method != m.Method {
			fmt.Fprintf(os.Stderr, "fake codex: got %s, the recording has %s\n", m.Method, s.method)
			return 3
		}
		if s.id != nil && m.ID != nil {
			ids[*s.id] = *m.ID
		}
		for _, r := range s.recvs {
			var out map[string]json.RawMessage
			_ = json.Unmarshal(r, &out)
			if _, isMethod := out["method"]; !isMethod && out["id"] != nil {
				var rid int64
				_ = json.Unmarshal(out["id"], &rid)
				if eid, ok := ids[rid]; ok {
					out["id"], _ = json.Marshal(eid)
				}
			}
			if os.Getenv("FAKE_CODEX_OBJECT") != "" && string(out["method"]) == `"turn/completed"` {
				// A command of the turn wrote an object, as a commit does.
				if err := enginetest.WriteObject(os.Getenv("GIT_OBJECT_DIRECTORY")); err != nil {
					fmt.Fprintln(os.Stderr, "fake codex:", err)
					return 3
				}
			}
			b, _ := json.Marshal(out)
			os.Stdout.Write(append(b, '\n'))
			// A request of the CLI's (an approval) waits for its answer, as
			// the real CLI does, before the recording goes on: otherwise the
			// turn could end, and the engine stop the fake, before the
			// answer reached the log.
			if _, isMethod := out["method"]; isMethod && out["id"] != nil {
				if !awaitAnswer(in, logf, out["id"]) {
					fmt.Fprintln(os.Stderr, "fake codex: no answer to", string(b))
					return 3
				}
			}
		}
	}
	return 0
}

// awaitAnswer reads the engine's lines, logging each, until the answer to
// the request with this id; false when stdin ends first or a new request
// comes instead.
func awaitAnswer(in *bufio.Scanner, logf *os.File, id json.RawMessage) bool {
	for in.Scan() {
		logf.Write(append(append([]byte(nil), in.Bytes()...), '\n'))
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.Method != "" {
			return false
		}
		if string(m.ID) == string(id) {
			return true
		}
	}
	return false
}

func loadSegments(path string) ([]segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var segs []segment
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r recorded
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, err
		}
		if r.Dir == "send" {
			var m msg
			_ = json.Unmarshal(r.Msg, &m)
			if m.Method == "" {
				continue
			}
			segs = append(segs, segment{method: m.Method, id: m.ID})
			continue
		}
		if len(segs) > 0 {
			segs[len(segs)-1].recvs = append(segs[len(segs)-1].recvs, r.Msg)
		}
	}
	return segs, sc.Err()
}

// readLog is what the engine sent the fake.
func readLog(t *testing.T, dir string) []msg {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []msg
	b, _ := io.ReadAll(f)
	for _, line := range splitLines(b) {
		var m msg
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("the engine sent a line that is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			out = append(out, append([]byte(nil), sc.Bytes()...))
		}
	}
	return out
}
