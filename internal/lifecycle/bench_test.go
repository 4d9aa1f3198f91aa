package lifecycle

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// BenchmarkDefault: the deterministic manifest of a task with a long
// description (seed 003's target for evaluation: under 5 s).
func BenchmarkDefault(b *testing.B) {
	p := testPolicy()
	t := task.Task{Description: strings.Repeat("make the session cookie last a week and use $GH_TOKEN; ", 40), Persona: "senior"}
	for b.Loop() {
		Default(t, p, []string{"PORT=1"})
	}
}

// BenchmarkProgressObserve: what the executor adds to each observation.
func BenchmarkProgressObserve(b *testing.B) {
	p := NewProgress(time.Now())
	call := event.ToolCall{Turn: 1, CallID: "a", Name: "read_file", Args: json.RawMessage(`{"path":"internal/auth/token.go"}`)}
	res := event.ToolResult{Turn: 1, CallID: "a", Name: "read_file"}
	now := time.Now()
	for b.Loop() {
		p.Observe(call, now)
		p.Observe(res, now)
	}
}
