package cli

// Tests that untrusted text reaches the terminal harmlessly: a tool result,
// a description or the daemon's error text carrying a clear-screen sequence
// or a window-title sequence is printed visibly, and --json output is not
// touched.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// forged holds what a hostile file or model might put in front of a user:
// clear the screen, set the window title (OSC ended by BEL and by ST), a C1
// CSI and a right-to-left override.
const forged = "before\x1b[2J\x1b]0;pwned\x07\x1b]2;again\x1b\\ \u009b31m \u202eafter"

// harmless fails t if s holds anything a terminal would act on, or lacks the
// visible form of the forged sequences.
func harmless(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			t.Errorf("%s holds %U:\n%q", what, r, s)
			return
		}
	}
	if !strings.Contains(s, `\x1b[2J`) || !strings.Contains(s, `\x1b]0;pwned\x07`) {
		t.Errorf("%s does not show the forged sequences visibly:\n%q", what, s)
	}
}

func TestTerminalWriterJudgesSplitCharactersWhole(t *testing.T) {
	t.Parallel()
	in := []byte("é\u009b日\u202e" + forged + "\xff\xc3")
	want := words.Printable(string(in))
	for size := 1; size <= 4; size++ {
		var b bytes.Buffer
		w := newTerminalWriter(&b)
		for i := 0; i < len(in); i += size {
			if _, err := w.Write(in[i:min(i+size, len(in))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("writes of %d bytes: %q, want %q", size, b.String(), want)
		}
	}
}

func TestJSONGoesAroundTheTerminalWriter(t *testing.T) {
	t.Parallel()
	var plain, wrapped bytes.Buffer
	v := map[string]string{"s": forged + "\x7f"}
	if err := writeJSON(&plain, v); err != nil {
		t.Fatal(err)
	}
	w := newTerminalWriter(&wrapped)
	w.Write([]byte("\xc3")) // held back, then flushed before the JSON
	if err := writeJSON(w, v); err != nil {
		t.Fatal(err)
	}
	if got, want := wrapped.String(), `\xc3`+plain.String(); got != want {
		t.Errorf("JSON through the terminal writer:\n%q\nwant\n%q", got, want)
	}
}

func TestTaskLogPrintsForgedSequencesHarmlessly(t *testing.T) {
	t.Parallel()
	l := api.TaskLog{TaskID: "t-4k2x9", Entries: []api.LogEntry{
		{Seq: 0, Turn: 1, At: at(0), Message: assistant(llm.TextPart("model says "+forged), call("c1", "bash", `{"command":"cat evil.txt"}`))},
		{Seq: 1, Turn: 1, At: at(1), Message: llm.Message{Role: llm.RoleUser, Parts: []llm.Part{result("c1", forged+"\n", false)}}},
	}}
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/tasks/{ref}/log": func(w http.ResponseWriter, r *http.Request) { writeAPI(w, l) },
	})
	code, out, errOut := runCLI(t, home, "", "task", "log", "4k2")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	harmless(t, "task log", out)
	if strings.Count(out, `\x1b[2J`) != 2 {
		t.Errorf("task log shows the model text and the tool result, each once:\n%s", out)
	}

	code, out, _ = runCLI(t, home, "", "task", "log", "4k2", "--json")
	var want bytes.Buffer
	writeJSON(&want, l)
	if code != ExitOK || out != want.String() {
		t.Errorf("task log --json: exit %d, changed by the escaping:\n%q\nwant\n%q", code, out, want.String())
	}
}

func TestPsPrintsForgedSequencesHarmlessly(t *testing.T) {
	t.Parallel()
	tasks := api.TaskList{Tasks: []task.Summary{{ID: "t-4k2x9", Status: task.Running, Description: forged, CreatedAt: at(0), UpdatedAt: at(0)}}}
	// Framed as the daemon writes a listing: one task a line.
	row, _ := json.Marshal(tasks.Tasks[0])
	sent := bytes.NewBufferString("{\"tasks\":[\n" + string(row) + "\n]}\n")
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/tasks": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(sent.Bytes())
		},
	})
	code, out, errOut := runCLI(t, home, "", "ps")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// ps fits the description to its column, so only its start is shown.
	if strings.ContainsRune(out, 0x1b) || !strings.Contains(out, `before\x1b[2J`) {
		t.Errorf("ps:\n%q", out)
	}
	harmlessRunes(t, "ps", out)

	code, out, _ = runCLI(t, home, "", "ps", "--json")
	if code != ExitOK || out != sent.String() {
		t.Errorf("ps --json: exit %d, changed by the escaping:\n%q\nwant\n%q", code, out, sent.String())
	}
}

func TestEventsPrintForgedSequencesHarmlessly(t *testing.T) {
	t.Parallel()
	evs := api.EventList{Events: []event.Event{
		event.New(at(0), "t-4k2x9", event.TaskCreated{Status: task.Queued, Description: forged}),
		event.New(at(1), "t-4k2x9", event.TaskStatus{From: task.Running, To: task.Failed, Reason: forged}),
	}}
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/events": func(w http.ResponseWriter, r *http.Request) { writeAPI(w, evs) },
	})
	code, out, errOut := runCLI(t, home, "", "events")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	harmless(t, "events", out)
}

func TestDaemonErrorTextIsPrintedHarmlessly(t *testing.T) {
	t.Parallel()
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/tasks/{ref}/log": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			writeAPI(w, api.Error{Code: api.CodeNotFound, Message: "task " + forged + ": not found", Hint: forged})
		},
	})
	code, _, errOut := runCLI(t, home, "", "task", "log", "4k2")
	if code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	harmless(t, "stderr", errOut)
}

// harmlessRunes fails t if s holds anything a terminal would act on.
func harmlessRunes(t *testing.T, what, s string) {
	t.Helper()
	if words.Printable(s) != s {
		t.Errorf("%s is not terminal-safe:\n%q", what, s)
	}
}
