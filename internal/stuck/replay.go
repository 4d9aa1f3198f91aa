package stuck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Verdict is a finding met while replaying a recorded stream.
type Verdict struct {
	TaskID task.ID `json:"task_id"`
	// Line is the event's position (1-based) in the stream, blank lines
	// not counted.
	Line    int   `json:"line"`
	EventID int64 `json:"event_id,omitempty"`
	Finding
}

// Replay runs the checks over a recorded stream of events, in order, with
// one detector per task (created at its first event, in root ""). Before
// each event the clock checks run at that event's time. A finding is
// reported when it is new: another check or loop than the last one
// reported for that task, or the same after progress in between.
func Replay(evs []event.Event, cfg Config) []Verdict {
	type state struct {
		d        *Detector
		reported map[string]bool // keys reported since the last progress
		progress int
	}
	tasks := map[task.ID]*state{}
	var out []Verdict
	report := func(st *state, id task.ID, line int, evID int64, fs []Finding) {
		for _, f := range fs {
			if p := st.d.Counters().Progress; p != st.progress {
				st.reported, st.progress = map[string]bool{}, p
			}
			if st.reported[f.Key] {
				continue
			}
			st.reported[f.Key] = true
			out = append(out, Verdict{TaskID: id, Line: line, EventID: evID, Finding: f})
		}
	}
	for i, e := range evs {
		st := tasks[e.TaskID]
		if st == nil {
			st = &state{d: New(cfg, "", e.Time), reported: map[string]bool{}}
			tasks[e.TaskID] = st
		}
		line := i + 1
		if _, status := e.Payload.(event.TaskStatus); !status {
			report(st, e.TaskID, line, e.ID, st.d.Tick(e.Time))
		}
		report(st, e.TaskID, line, e.ID, st.d.Observe(e))
	}
	return out
}

// maxLine bounds one line of a JSONL stream.
const maxLine = 16 << 20

// ReadJSONL reads a stream of events, one JSON object per line, in the
// form `neuraphage events --json` prints: {"time", "kind", "task_id",
// "data"}. Blank lines are skipped; a line that is not an event is an
// error naming it. Events of kinds this build does not know are kept (and
// ignored by the checks).
func ReadJSONL(r io.Reader) ([]event.Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var out []event.Event
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e event.Event
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("line %d: not an event: %w", n, err)
		}
		if e.Kind == "" {
			return nil, fmt.Errorf("line %d: not an event: no \"kind\"", n)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
