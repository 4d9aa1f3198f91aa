package event

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Every observation kind decodes back to its own typed payload, so the log
// and the watch stream carry them whole.
func TestObservationsRoundTrip(t *testing.T) {
	t.Parallel()
	payloads := []Payload{
		TurnStarted{Turn: 1, Engine: "native", Model: "m", Resumed: true},
		TurnEnded{Turn: 1, StopReason: "tool_use", Attempts: 2, DurationMs: 5},
		Text{Turn: 1, Text: "hi"},
		TextDelta{Turn: 1, Text: "h", Reset: true},
		ToolCall{Turn: 1, CallID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)},
		ToolResult{Turn: 1, CallID: "c1", Name: "bash", Error: true, Size: 3, Preview: "err", DurationMs: 1},
		Usage{Turn: 1, Provider: "anthropic", Model: "m", InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, CostUSD: 0.5, TotalTokens: 10, TotalCostUSD: 1},
		FileChanged{Turn: 1, Path: "a.go", Op: "modified", Tool: "edit_file"},
		NeedsInput{Turn: 2, Question: "which?"},
		Completed{Turn: 3, Summary: "done"},
		Failed{Turn: 3, Reason: "no"},
		Delivered{Turn: 2, InjectionIDs: []int64{4}, Kinds: []string{"nudge"}, LatencyMs: []int64{9}},
		Interrupted{Turn: 2, Dropped: []string{"model call"}},
		Learning{Turn: 2, LearningID: 1, Summary: "s", Tags: []string{"a"}},
		ModelError{Turn: 2, Class: "context_too_long", Message: "m"},
		ModelRetry{Turn: 2, Attempt: 2, MaxAttempts: 5, Class: "overloaded", Status: 529, Message: "overloaded", WaitMs: 1500},
		TaskReturned{Status: "completed", InjectionIDs: []int64{4}, Kinds: []string{"message"}, Texts: []string{"stop"}},
		DiskFull{Recovered: true, Tasks: []task.ID{"t-aaaaa"}, WaitedMs: 9},
		TaskMessage{InjectionID: 4, Source: "watcher", Kind: "nudge", Attrs: map[string]string{"severity": "high"}, Urgent: true, Text: "t"},
	}
	for _, p := range payloads {
		e := New(t0, "t-aaaaa", p)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", p.EventKind(), err)
		}
		if diff := cmp.Diff(e, back); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", p.EventKind(), diff)
		}
		if _, full := p.(DiskFull); full {
			continue
		}
		if got, want := e.Transient(), p.EventKind() == KindTextDelta; got != want {
			t.Errorf("%s: Transient() = %v", p.EventKind(), got)
		}
	}
}

// A full disk is announced live only (the log cannot take it); its end is
// logged.
func TestDiskFullIsTransientUntilRecovered(t *testing.T) {
	t.Parallel()
	if !New(t0, "", DiskFull{Err: "full"}).Transient() || New(t0, "", DiskFull{Recovered: true}).Transient() {
		t.Error("DiskFull: want transient while full, logged once recovered")
	}
}

// Retries logged before the kind was renamed (agent.model.retry) still
// decode as ModelRetry.
func TestModelRetryOldKindDecodes(t *testing.T) {
	t.Parallel()
	var e Event
	raw := `{"id":3,"time":"2026-11-21T09:00:00Z","kind":"agent.model.retry","task_id":"t-aaaaa","data":{"turn":1,"attempt":2,"max_attempts":5,"class":"timeout","wait_ms":10}}`
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatal(err)
	}
	if p, ok := e.Payload.(ModelRetry); !ok || p.Attempt != 2 {
		t.Errorf("decoded payload %#v, want a ModelRetry", e.Payload)
	}
}
