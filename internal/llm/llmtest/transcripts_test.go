package llmtest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// transcriptLine is one line of a recorded stdio session with a CLI's
// structured protocol: what was sent or received, and when (seconds from
// the start).
type transcriptLine struct {
	T   float64 `json:"t"`
	Dir string  `json:"dir"`
	Msg struct {
		ID     *int            `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	} `json:"msg"`
}

func readTranscript(t *testing.T, name string) []transcriptLine {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "clis", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []transcriptLine
	for line := range strings.Lines(string(raw)) {
		var l transcriptLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, l)
	}
	return out
}

// resultOf returns the result of the request sent with method.
func resultOf(lines []transcriptLine, method string) json.RawMessage {
	id := -1
	for _, l := range lines {
		if l.Dir == "send" && l.Msg.Method == method && l.Msg.ID != nil {
			id = *l.Msg.ID
		}
		if l.Dir == "recv" && l.Msg.Method == "" && l.Msg.ID != nil && *l.Msg.ID == id {
			return l.Msg.Result
		}
	}
	return nil
}

// TestRecordedProtocolFacts pins what docs/engines-wire.md says of the
// recorded Codex app-server and Gemini ACP sessions, so a re-recording
// with another CLI version shows what changed.
func TestRecordedProtocolFacts(t *testing.T) {
	t.Parallel()
	lastTurn := func(lines []transcriptLine) (status string) {
		for _, l := range lines {
			if l.Msg.Method == "turn/completed" {
				var p struct {
					Turn struct{ Status string } `json:"turn"`
				}
				_ = json.Unmarshal(l.Msg.Params, &p)
				status = p.Turn.Status
			}
		}
		return status
	}
	basic := readTranscript(t, "codex-app-server-0.169.0-basic.jsonl")
	if got := lastTurn(basic); got != "completed" {
		t.Errorf("codex basic: last turn %q, want completed", got)
	}
	steer := readTranscript(t, "codex-app-server-0.169.0-steer.jsonl")
	var started struct {
		Turn struct{ ID string } `json:"turn"`
	}
	_ = json.Unmarshal(resultOf(steer, "turn/start"), &started)
	var steered struct {
		TurnID string `json:"turnId"`
	}
	_ = json.Unmarshal(resultOf(steer, "turn/steer"), &steered)
	if started.Turn.ID == "" || steered.TurnID != started.Turn.ID {
		t.Errorf("codex steer: turn/steer answered turn %q, want the running turn %q", steered.TurnID, started.Turn.ID)
	}
	interrupt := readTranscript(t, "codex-app-server-0.169.0-interrupt.jsonl")
	statuses := []string{}
	for _, l := range interrupt {
		if l.Msg.Method == "turn/completed" {
			var p struct {
				Turn struct{ Status string } `json:"turn"`
			}
			_ = json.Unmarshal(l.Msg.Params, &p)
			statuses = append(statuses, p.Turn.Status)
		}
	}
	if strings.Join(statuses, ",") != "interrupted,completed" {
		t.Errorf("codex interrupt: turns ended %q, want interrupted then a new turn completed", statuses)
	}
	for name, want := range map[string]string{"gemini-acp-0.61.0-basic.jsonl": "end_turn", "gemini-acp-0.61.0-cancel.jsonl": "cancelled"} {
		var r struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(resultOf(readTranscript(t, name), "session/prompt"), &r)
		if r.StopReason != want {
			t.Errorf("%s: session/prompt stopped %q, want %q", name, r.StopReason, want)
		}
	}
}
