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

// resultsOf returns the results of the requests sent with method, in order.
func resultsOf(lines []transcriptLine, method string) []json.RawMessage {
	ids := map[int]bool{}
	var out []json.RawMessage
	for _, l := range lines {
		switch {
		case l.Dir == "send" && l.Msg.Method == method && l.Msg.ID != nil:
			ids[*l.Msg.ID] = true
		case l.Dir == "recv" && l.Msg.Method == "" && l.Msg.ID != nil && ids[*l.Msg.ID]:
			out = append(out, l.Msg.Result)
		}
	}
	return out
}

// TestRecordedProtocolFacts pins what docs/engines-wire.md says of the
// Codex app-server and Gemini ACP sessions TestCodexAppServer and
// TestGeminiACP recorded, so a re-recording with another CLI version shows
// what changed. It runs offline.
func TestRecordedProtocolFacts(t *testing.T) {
	t.Parallel()
	codex := readTranscript(t, "codex-app-server-"+codexVersion+".jsonl")
	var turns []string
	for _, r := range resultsOf(codex, "turn/start") {
		var v struct {
			Turn struct{ ID, Status string } `json:"turn"`
		}
		_ = json.Unmarshal(r, &v)
		if v.Turn.Status != "inProgress" {
			t.Errorf("turn/start answered status %q, want inProgress at once", v.Turn.Status)
		}
		turns = append(turns, v.Turn.ID)
	}
	steers := resultsOf(codex, "turn/steer")
	var steered struct {
		TurnID string `json:"turnId"`
	}
	if len(steers) != 1 || json.Unmarshal(steers[0], &steered) != nil || len(turns) != 3 || steered.TurnID != turns[0] {
		t.Errorf("turn/steer answered %s; want the id of the running turn (turns %q)", steers, turns)
	}
	var ended []string
	for _, l := range codex {
		if l.Msg.Method == "turn/completed" {
			var p struct {
				Turn struct{ ID, Status string } `json:"turn"`
			}
			_ = json.Unmarshal(l.Msg.Params, &p)
			ended = append(ended, p.Turn.Status)
		}
	}
	if strings.Join(ended, ",") != "completed,interrupted,completed" {
		t.Errorf("codex turns ended %q, want the steered turn completed, the next interrupted, the third completed", ended)
	}
	var stops []string
	for _, r := range resultsOf(readTranscript(t, "gemini-acp-"+geminiVersion+".jsonl"), "session/prompt") {
		var v struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(r, &v)
		stops = append(stops, v.StopReason)
	}
	if strings.Join(stops, ",") != "end_turn,cancelled" {
		t.Errorf("ACP prompts stopped %q, want end_turn then cancelled", stops)
	}
}
