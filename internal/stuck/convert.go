package stuck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Converters from public trajectory formats to the observations Replay
// reads, so trajectories from other agents can be scored. Each maps one
// agent step to a turn: turn.started, the step's thought as agent.text, the
// tool call, its result (preview, tail and hash as the native agent makes
// them) and the files it changed, turn.ended. What a format does not record
// (token usage, exit codes for SWE-agent) is left out, so the spend checks
// and `failing` see less than they would live.

// convertStart is the time given to a trajectory without times.
var convertStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// builder appends the observations of one converted task.
type builder struct {
	id    task.ID
	now   time.Time
	turn  int
	calls map[string]string // call id → tool name
	out   []event.Event
}

func newBuilder(id task.ID) *builder {
	b := &builder{id: id, now: convertStart, calls: map[string]string{}}
	b.emit(b.now, event.TaskStatus{From: task.Queued, To: task.Running})
	return b
}

// emit appends p at t, or a millisecond after the last event when t is
// zero or earlier (events stay in order).
func (b *builder) emit(t time.Time, p event.Payload) {
	if t.IsZero() || t.Before(b.now) {
		t = b.now.Add(time.Millisecond)
	}
	b.now = t
	b.out = append(b.out, event.New(t, b.id, p))
}

func (b *builder) startTurn(t time.Time, thought string) {
	b.turn++
	b.emit(t, event.TurnStarted{Turn: b.turn, Engine: "import"})
	if thought = strings.TrimSpace(thought); thought != "" {
		b.emit(t, event.Text{Turn: b.turn, Text: thought})
	}
}

func (b *builder) call(t time.Time, id, name string, args any) {
	raw, err := json.Marshal(args)
	if err != nil {
		raw = []byte("{}")
	}
	b.calls[id] = name
	b.emit(t, event.ToolCall{Turn: b.turn, CallID: id, Name: name, Args: raw})
}

func (b *builder) result(t time.Time, id, out string, failed bool, took time.Duration) {
	name := b.calls[id]
	delete(b.calls, id)
	b.emit(t, event.ToolResult{Turn: b.turn, CallID: id, Name: name, Error: failed, Size: len(out),
		Preview: event.ResultPreview(out), Tail: event.ResultTail(out), Hash: event.ContentHash(out), DurationMs: took.Milliseconds()})
}

func (b *builder) endTurn(t time.Time, reason string) {
	b.emit(t, event.TurnEnded{Turn: b.turn, StopReason: reason, Attempts: 1})
}

// ohEvent is an OpenHands event as its event stream stores and its server
// sends it: an action ({"action", "args"}) or an observation
// ({"observation", "cause", "content", "extras"}).
type ohEvent struct {
	ID          json.Number     `json:"id"`
	Timestamp   string          `json:"timestamp"`
	Source      string          `json:"source"`
	Message     string          `json:"message"`
	Action      string          `json:"action"`
	Args        json.RawMessage `json:"args"`
	Observation string          `json:"observation"`
	Cause       json.Number     `json:"cause"`
	Content     string          `json:"content"`
	Extras      json.RawMessage `json:"extras"`
}

type ohArgs struct {
	Command         string          `json:"command"`
	Code            string          `json:"code"`
	Path            string          `json:"path"`
	Content         *string         `json:"content"`
	FileText        *string         `json:"file_text"`
	OldStr          *string         `json:"old_str"`
	NewStr          *string         `json:"new_str"`
	ViewRange       json.RawMessage `json:"view_range"`
	Thought         string          `json:"thought"`
	WaitForResponse bool            `json:"wait_for_response"`
	URL             string          `json:"url"`
	BrowserActions  string          `json:"browser_actions"`
	Name            string          `json:"name"`
	Arguments       json.RawMessage `json:"arguments"`
}

type ohExtras struct {
	ExitCode   *int   `json:"exit_code"`
	AgentState string `json:"agent_state"`
	Reason     string `json:"reason"`
	Path       string `json:"path"`
	Error      bool   `json:"error"`
	Metadata   struct {
		ExitCode *int `json:"exit_code"`
	} `json:"metadata"`
}

// ohTimes are the layouts OpenHands writes timestamps in (Python's
// isoformat, with or without a zone).
var ohTimes = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02T15:04:05"}

func ohTime(s string) time.Time {
	for _, l := range ohTimes {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// FromOpenHands converts an OpenHands event stream (a JSON array of events,
// JSON Lines, or the events of one conversation concatenated) into the
// observations of task id. Agent actions become tool calls (run → bash,
// read → read_file, write → write_file, edit → edit_file, others under
// their own name), observations their results (failed when the command's
// exit code is not 0, or an error observation), agent messages texts (a
// message waiting for a response is a question to the user), and agent
// state changes task statuses.
func FromOpenHands(r io.Reader, id task.ID) ([]event.Event, error) {
	evs, err := decodeAll[ohEvent](r)
	if err != nil {
		return nil, fmt.Errorf("reading OpenHands events: %w", err)
	}
	b := newBuilder(id)
	open := false // a turn waits for its observation
	for _, e := range evs {
		t := ohTime(e.Timestamp)
		switch {
		case e.Action != "" && e.Source == "agent":
			var a ohArgs
			_ = json.Unmarshal(e.Args, &a)
			if open {
				b.endTurn(t, "tool_use")
				open = false
			}
			switch e.Action {
			case "message", "think", "finish", "reject":
				text := words1(strings.TrimSpace(e.Message))
				if text == "" {
					text = a.Thought
				}
				b.startTurn(t, text)
				b.endTurn(t, "end_turn")
				if e.Action == "message" && a.WaitForResponse {
					b.emit(t, event.NeedsInput{Turn: b.turn, Question: text})
				}
				if e.Action == "finish" {
					b.emit(t, event.Completed{Turn: b.turn, Summary: text})
				}
				continue
			case "system", "recall", "change_agent_state":
				continue
			}
			name, args := ohCall(e.Action, a)
			b.startTurn(t, a.Thought)
			b.call(t, "oh-"+e.ID.String(), name, args)
			open = true
		case e.Observation != "":
			var x ohExtras
			_ = json.Unmarshal(e.Extras, &x)
			if e.Observation == "agent_state_changed" {
				if open {
					b.endTurn(t, "tool_use")
					open = false
				}
				if to, ok := ohStates[x.AgentState]; ok {
					b.emit(t, event.TaskStatus{To: to, Reason: x.Reason})
				}
				continue
			}
			cid := "oh-" + e.Cause.String()
			name, ok := b.calls[cid]
			if !ok {
				continue // an observation of no agent action (a user's command, a recall)
			}
			exit := x.ExitCode
			if exit == nil {
				exit = x.Metadata.ExitCode
			}
			failed := e.Observation == "error" || x.Error || exit != nil && *exit != 0
			b.result(t, cid, e.Content, failed, 0)
			if !failed && (name == "write_file" || name == "edit_file") && x.Path != "" {
				b.emit(t, event.FileChanged{Turn: b.turn, Path: x.Path, Op: "modified", Tool: name})
			}
		}
	}
	if open {
		b.endTurn(time.Time{}, "tool_use")
	}
	return b.out, nil
}

var ohStates = map[string]task.Status{
	"running": task.Running, "awaiting_user_input": task.Waiting, "paused": task.Paused,
	"finished": task.Completed, "error": task.Failed, "stopped": task.Cancelled, "rejected": task.Failed,
}

// ohCall maps an OpenHands action to a tool call in the native vocabulary.
func ohCall(action string, a ohArgs) (string, map[string]any) {
	switch action {
	case "run":
		return "bash", map[string]any{"command": a.Command}
	case "run_ipython":
		return "ipython", map[string]any{"code": a.Code}
	case "read":
		m := map[string]any{"path": a.Path}
		if len(a.ViewRange) > 0 && string(a.ViewRange) != "null" {
			m["view_range"] = a.ViewRange
		}
		return "read_file", m
	case "write":
		return "write_file", map[string]any{"path": a.Path, "content": deref(a.Content)}
	case "edit":
		switch {
		case a.Command == "view":
			m := map[string]any{"path": a.Path}
			if len(a.ViewRange) > 0 && string(a.ViewRange) != "null" {
				m["view_range"] = a.ViewRange
			}
			return "read_file", m
		case a.FileText != nil:
			return "write_file", map[string]any{"path": a.Path, "content": *a.FileText}
		case a.OldStr != nil:
			return "edit_file", map[string]any{"path": a.Path, "old_text": *a.OldStr, "new_text": deref(a.NewStr)}
		case a.Content != nil:
			return "edit_file", map[string]any{"path": a.Path, "content": *a.Content}
		}
		// insert, undo_edit: a change whose content the event does not say
		return "edit_file", map[string]any{"path": a.Path, "command": a.Command, "insert": deref(a.NewStr)}
	case "browse":
		return "browse", map[string]any{"url": a.URL}
	case "browse_interactive":
		return "browse", map[string]any{"actions": a.BrowserActions}
	case "call_tool_mcp":
		return "mcp_" + a.Name, map[string]any{"arguments": a.Arguments}
	}
	return action, map[string]any{"command": a.Command, "path": a.Path}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// sweTrajectory is a SWE-agent .traj file: its steps under "trajectory".
type sweTrajectory struct {
	Trajectory []struct {
		Thought       string  `json:"thought"`
		Response      string  `json:"response"`
		Action        string  `json:"action"`
		Observation   string  `json:"observation"`
		ExecutionTime float64 `json:"execution_time"`
	} `json:"trajectory"`
}

// sweEdits are SWE-agent commands that change files; their content is not
// in the trajectory, so each is a change of unknown content (progress).
var sweEdits = []string{"edit ", "create ", "str_replace_editor create", "str_replace_editor str_replace",
	"str_replace_editor insert", "str_replace_editor undo_edit", "insert ", "append "}

// FromSWEAgent converts a SWE-agent trajectory (a .traj JSON file) into the
// observations of task id. Each step is a turn: its thought as text, its
// action as a bash call, its observation as the result. SWE-agent records
// no exit codes and no times: results are not marked failed (the failure
// checks see less), and each step takes its execution time plus five
// seconds of thinking.
func FromSWEAgent(r io.Reader, id task.ID) ([]event.Event, error) {
	var tr sweTrajectory
	if err := json.NewDecoder(r).Decode(&tr); err != nil {
		return nil, fmt.Errorf("reading a SWE-agent trajectory: %w", err)
	}
	if tr.Trajectory == nil {
		return nil, fmt.Errorf(`reading a SWE-agent trajectory: no "trajectory" list`)
	}
	b := newBuilder(id)
	for i, st := range tr.Trajectory {
		t := b.now.Add(5 * time.Second)
		thought := st.Thought
		if thought == "" {
			thought = st.Response
		}
		b.startTurn(t, thought)
		action := strings.TrimSpace(st.Action)
		if action == "" {
			b.endTurn(t, "end_turn")
			continue
		}
		cid := fmt.Sprintf("swe-%d", i)
		b.call(t, cid, "bash", map[string]any{"command": action})
		took := time.Duration(st.ExecutionTime * float64(time.Second))
		b.result(t.Add(took), cid, st.Observation, false, took)
		for _, p := range sweEdits {
			if strings.HasPrefix(action, p) {
				path := ""
				if f := strings.Fields(strings.TrimPrefix(action, "str_replace_editor")); len(f) > 1 {
					path = f[1]
				}
				b.emit(time.Time{}, event.FileChanged{Turn: b.turn, Path: path, Op: "modified", Tool: "bash"})
				break
			}
		}
		b.endTurn(time.Time{}, "tool_use")
	}
	return b.out, nil
}

// decodeAll reads a JSON array of T, or a sequence of JSON values of T
// (JSON Lines or concatenated objects).
func decodeAll[T any](r io.Reader) ([]T, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4096)
	dec := json.NewDecoder(br)
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		var out []T
		if err := dec.Decode(&out); err != nil {
			return nil, err
		}
		return out, nil
	}
	var out []T
	for {
		var v T
		if err := dec.Decode(&v); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("value %d: %w", len(out)+1, err)
		}
		out = append(out, v)
	}
}
