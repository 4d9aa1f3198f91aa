package event

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// proc.leftover_stopped decodes back to its typed payload.
func TestProcLeftoverStoppedRoundTrip(t *testing.T) {
	t.Parallel()
	e := New(t0, "t-aaaaa", ProcLeftoverStopped{Command: `sh -c "sleep 1000 &"`, Reason: "left by a daemon that died",
		Processes: []ProcStopped{{PID: 42, Command: "sleep 1000"}}, Survivors: []ProcStopped{{PID: 43, Command: "cat"}}})
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
