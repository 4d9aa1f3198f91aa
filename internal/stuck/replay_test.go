package stuck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// jsonl renders events one per line, as `neuraphage events --json` prints
// them.
func jsonl(t *testing.T, evs []event.Event) string {
	t.Helper()
	var b strings.Builder
	for _, e := range evs {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestReadJSONL(t *testing.T) {
	t.Parallel()
	s := newStream("t-aaaaa")
	s.prelude()
	s.turn("Fixing it.", edit("internal/pay/pay.go", "a", "b"), bash("go test ./...", buildErr).failed())
	want := s.events()
	for i := range want {
		want[i].ID = int64(100 + i)
	}
	lines := strings.Split(strings.TrimSuffix(jsonl(t, want), "\n"), "\n")
	// Blank lines, indentation and CRLF endings do not matter.
	in := "\n" + strings.Join(lines[:3], "\r\n") + "\n   \n\t" + strings.Join(lines[3:], "\n\n") + "\n\n"
	got, err := ReadJSONL(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ReadJSONL (-want +got):\n%s", diff)
	}
}

func TestReadJSONLKeepsUnknownKinds(t *testing.T) {
	t.Parallel()
	in := `{"time":"2026-11-21T09:00:00Z","kind":"agent.tool.call","task_id":"t-aaaaa","data":{"turn":1,"call_id":"c1","name":"bash","args":{"command":"ls"}}}
{"time":"2026-11-21T09:00:01Z","kind":"agent.hologram","task_id":"t-aaaaa","data":{"depth":3}}
{"time":"2026-11-21T09:00:02Z","kind":"agent.tool.result","task_id":"t-aaaaa","data":{"turn":1,"call_id":"c1","name":"bash","preview":"a.go","size":4}}
`
	evs, err := ReadJSONL(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("read %d events, want 3", len(evs))
	}
	u, ok := evs[1].Payload.(event.Unknown)
	if !ok || u.Kind != "agent.hologram" || string(u.Raw) != `{"depth":3}` {
		t.Errorf("unknown kind read as %#v", evs[1].Payload)
	}
	if vs := Replay(evs, Config{}); len(vs) != 0 {
		t.Errorf("Replay over an unknown kind found %v", vs)
	}
}

func TestReadJSONLErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	good := `{"time":"2026-11-21T09:00:00Z","kind":"task.status","task_id":"t-aaaaa","data":{"from":"queued","to":"running"}}`
	tests := []struct {
		name string
		bad  string
		line int
	}{
		{"not JSON", `{"time": oops`, 3},
		{"no kind", `{"time":"2026-11-21T09:00:00Z","task_id":"t-aaaaa"}`, 3},
		{"a known kind with bad data", `{"time":"2026-11-21T09:00:00Z","kind":"agent.usage","data":{"input_tokens":"many"}}`, 3},
		{"a bad time", `{"time":"yesterday","kind":"agent.text","data":{"text":"x"}}`, 3},
		{"an array", `[1,2]`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := good + "\n\n" + tt.bad + "\n" + good + "\n"
			evs, err := ReadJSONL(strings.NewReader(in))
			if err == nil {
				t.Fatalf("ReadJSONL read %d events and no error", len(evs))
			}
			if want := fmt.Sprintf("line %d: ", tt.line); !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
			if evs != nil {
				t.Errorf("ReadJSONL returned events with its error: %v", evs)
			}
		})
	}
}

func TestReadJSONLLongLine(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("long output ", 20_000) // 240 KB, over the scanner's default
	e := event.New(t0, "t-aaaaa", event.Text{Turn: 1, Text: text})
	evs, err := ReadJSONL(strings.NewReader(jsonl(t, []event.Event{e})))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Payload.(event.Text).Text != text {
		t.Errorf("the long line did not read back")
	}
}

// interleave merges two streams by time, as the event log holds them.
func interleave(a, b []event.Event) []event.Event {
	out := make([]event.Event, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || len(a) > 0 && !b[0].Time.Before(a[0].Time) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	for i := range out {
		out[i].ID = int64(i + 1)
	}
	return out
}

// A stuck task and a healthy one in one log: findings are per task, a
// persisting loop is reported once, and again after progress.
func TestReplayTwoTasks(t *testing.T) {
	t.Parallel()
	stuck := newStream("t-stuck")
	stuck.prelude()
	// The same call failing six times, with another message each time
	// (so only the failing check sees it).
	for i := range 6 {
		stuck.turn("Building.", bash("go build ./...", fmt.Sprintf("# pay\nundefined: %s", []string{"ledger", "Ledger", "ledger.Post", "Post", "Entry", "ledger.Entry"}[i])).failed())
	}
	stuck.turn("Adding the import.", edit("internal/pay/handler.go", "import (", "import (\n\t\"ledger\""))
	for i := range 3 {
		stuck.turn("Building.", bash("go build ./...", fmt.Sprintf("# pay\nmissing: %c", 'x'+i)).failed())
	}
	healthy := newStream("t-healthy")
	healthy.now = t0.Add(3 * time.Second)
	healthy.prelude()
	for i := range 20 {
		healthy.turn("", write(fmt.Sprintf("docs/part%d.md", i), sourceFile(i)))
	}
	evs := interleave(stuck.events(), healthy.events())
	got := Replay(evs, Config{})
	type v struct {
		Task  task.ID
		Check Check
	}
	var brief []v
	for _, r := range got {
		brief = append(brief, v{r.TaskID, r.Check})
		if r.Line < 1 || r.Line > len(evs) || evs[r.Line-1].TaskID != r.TaskID || evs[r.Line-1].ID != r.EventID {
			t.Errorf("verdict %+v does not point at its event", r)
		}
		if r.Line > 0 && r.Line <= len(evs) && evs[r.Line-1].Kind != event.KindToolResult {
			t.Errorf("failing verdict at a %s event", evs[r.Line-1].Kind)
		}
	}
	want := []v{{"t-stuck", Failing}, {"t-stuck", Failing}}
	if diff := cmp.Diff(want, brief); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

// An exact loop trips both repeat and failing at every step; a persisting
// finding must still be reported once per check.
func TestReplayDeduplicatesTwoChecks(t *testing.T) {
	t.Parallel()
	s := newStream("t-loop")
	s.prelude()
	for range 8 {
		s.turn("Building again.", bash("go build ./...", buildErr).failed())
	}
	got := Replay(s.events(), Config{})
	n := map[Check]int{}
	for _, r := range got {
		n[r.Check]++
	}
	if n[Failing] == 0 || n[Repeat] == 0 {
		t.Fatalf("verdicts %v, want failing and repeat", n)
	}
	if n[Failing] > 1 || n[Repeat] > 1 {
		t.Errorf("Replay reported %d failing and %d repeat verdicts for one persisting loop, want one each", n[Failing], n[Repeat])
	}
}

// A pause is not idleness: replaying a paused and resumed task reports no
// no-progress at the resume.
func TestReplayPauseIsNotIdle(t *testing.T) {
	t.Parallel()
	s := newStream("t-pause")
	s.prelude()
	s.status(task.Running, task.Paused)
	s.now = s.now.Add(3 * time.Hour)
	s.status(task.Paused, task.Running)
	s.prelude()
	for _, r := range Replay(s.events(), Config{}) {
		t.Errorf("unexpected verdict at line %d: %s", r.Line, r.Finding)
	}
}

func FuzzReadJSONL(f *testing.F) {
	s := newStream("t-aaaaa")
	s.prelude()
	s.turn("Building.", bash("go build ./...", buildErr).failed())
	var b bytes.Buffer
	for _, e := range s.events() {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	f.Add(b.String())
	f.Add(`{"kind":"agent.tool.result","data":{"call_id":"x","error":true}}` + "\n" + `{"kind":"x"}`)
	f.Add("\n\n{}\n")
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := ReadJSONL(strings.NewReader(in))
		if err != nil {
			if evs != nil {
				t.Errorf("events with an error")
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Errorf("error %q does not name its line", err)
			}
			return
		}
		for _, e := range evs {
			if e.Kind == "" || e.Payload == nil {
				t.Errorf("event without kind or payload: %+v", e)
			}
		}
		Replay(evs, Config{})
	})
}
