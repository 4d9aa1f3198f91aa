package stuck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// openHandsLoop is an OpenHands event stream in which the agent runs the
// same failing test four times, after one edit.
func openHandsLoop() string {
	var b strings.Builder
	b.WriteString(`[{"id":0,"timestamp":"2025-03-01T10:00:00.000001","source":"agent","observation":"agent_state_changed","content":"","extras":{"agent_state":"running"},"message":""},` + "\n")
	b.WriteString(`{"id":1,"timestamp":"2025-03-01T10:00:01","source":"agent","action":"edit","args":{"path":"/workspace/app.py","command":"str_replace","old_str":"a = 1","new_str":"a = 2","thought":"Fix a."},"message":"I edited"},` + "\n")
	b.WriteString(`{"id":2,"timestamp":"2025-03-01T10:00:02","source":"agent","observation":"edit","cause":1,"content":"The file /workspace/app.py has been edited.","extras":{"path":"/workspace/app.py","diff":"-a = 1\n+a = 2"},"message":""},` + "\n")
	for i := range 4 {
		id := 3 + 2*i
		fmt.Fprintf(&b, `{"id":%d,"timestamp":"2025-03-01T10:0%d:00","source":"agent","action":"run","args":{"command":"python -m pytest tests/test_app.py","thought":"Run the tests again."},"message":"Running command"},`+"\n", id, 1+i)
		fmt.Fprintf(&b, `{"id":%d,"timestamp":"2025-03-01T10:0%d:05","source":"agent","observation":"run","cause":%d,"content":"FAILED tests/test_app.py::test_a - assert 2 == 3\n1 failed in 0.0%ds","extras":{"command":"python -m pytest tests/test_app.py","metadata":{"exit_code":1}},"message":""}`, id+1, 1+i, id, 3+i)
		if i < 3 {
			b.WriteString(",\n")
		}
	}
	b.WriteString("]\n")
	return b.String()
}

func TestFromOpenHands(t *testing.T) {
	t.Parallel()
	evs, err := FromOpenHands(strings.NewReader(openHandsLoop()), "oh-1")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[event.Kind]int{}
	for _, e := range evs {
		kinds[e.Kind]++
		if e.TaskID != "oh-1" {
			t.Fatalf("event of task %q, want oh-1", e.TaskID)
		}
	}
	if kinds[event.KindToolCall] != 5 || kinds[event.KindToolResult] != 5 || kinds[event.KindFileChanged] != 1 {
		t.Errorf("kinds = %v, want 5 calls, 5 results, 1 file change", kinds)
	}
	vs := Replay(evs, Config{})
	if len(vs) == 0 || vs[0].Check != Failing {
		t.Fatalf("verdicts = %+v, want a failing loop", vs)
	}
}

func TestFromOpenHandsJSONLines(t *testing.T) {
	t.Parallel()
	in := `{"id":1,"timestamp":"2025-03-01T10:00:01Z","source":"agent","action":"message","args":{"content":"EUR or USD?","wait_for_response":true},"message":"EUR or USD?"}
{"id":2,"timestamp":"2025-03-01T10:00:02Z","source":"user","action":"message","args":{"content":"EUR"},"message":"EUR"}
`
	evs, err := FromOpenHands(strings.NewReader(in), "oh-2")
	if err != nil {
		t.Fatal(err)
	}
	var asked bool
	for _, e := range evs {
		if q, ok := e.Payload.(event.NeedsInput); ok && q.Question == "EUR or USD?" {
			asked = true
		}
	}
	if !asked {
		t.Errorf("the agent's question was not converted: %+v", evs)
	}
	if _, err := FromOpenHands(strings.NewReader("{not json"), "x"); err == nil {
		t.Errorf("no error for a broken stream")
	}
}

func TestFromSWEAgent(t *testing.T) {
	t.Parallel()
	var steps []string
	steps = append(steps, `{"thought":"Open the file.","action":"open src/app.py","observation":"[File: src/app.py (40 lines total)]\n1:import os","execution_time":0.2}`)
	steps = append(steps, `{"thought":"Edit it.","action":"edit 3:3\na = 2\nend_of_edit","observation":"File updated.","execution_time":0.3}`)
	for range 4 {
		steps = append(steps, `{"thought":"Run the reproduction again.","action":"python reproduce.py","observation":"Traceback (most recent call last):\n  File \"reproduce.py\", line 3\nValueError: bad a","execution_time":1.5}`)
	}
	in := `{"environment":"swe_main","trajectory":[` + strings.Join(steps, ",") + `],"info":{"exit_status":"submitted"}}`
	evs, err := FromSWEAgent(strings.NewReader(in), "swe-1")
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, e := range evs {
		if _, ok := e.Payload.(event.FileChanged); ok {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d file changes, want 1 (the edit)", changed)
	}
	vs := Replay(evs, Config{})
	if len(vs) == 0 || vs[0].Check != Repeat {
		t.Fatalf("verdicts = %+v, want a repeat", vs)
	}
	if _, err := FromSWEAgent(strings.NewReader(`{"history":[]}`), "x"); err == nil {
		t.Errorf("no error for a file without a trajectory")
	}
}

func FuzzFromOpenHands(f *testing.F) {
	f.Add(openHandsLoop())
	f.Add(`{"id":1,"action":"run","source":"agent","args":{}}`)
	f.Fuzz(func(t *testing.T, s string) {
		evs, err := FromOpenHands(strings.NewReader(s), "f")
		if err == nil {
			Replay(evs, Config{})
		}
	})
}
