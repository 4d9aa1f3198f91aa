package extproc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TestMarkerFoundInStoredJSON: a message's marker names its injections,
// also once the CLI stored the message JSON-encoded, and no other.
func TestMarkerFoundInStoredJSON(t *testing.T) {
	t.Parallel()
	text := Message("intro", []inject.Injection{{ID: 3, Kind: inject.Message, Text: `say "hi"`}, {ID: 14, Kind: inject.Message, Text: "x"}})
	stored, _ := json.Marshal(map[string]string{"content": text})
	for _, s := range []string{text, string(stored)} {
		if !Delivered(s, 3) || !Delivered(s, 14) {
			t.Errorf("the marker in %q does not name 3 and 14", s)
		}
		if Delivered(s, 1) || Delivered(s, 4) {
			t.Errorf("the marker in %q names 1 or 4", s)
		}
	}
	if !strings.HasPrefix(text, "intro\n\n") {
		t.Errorf("the message %q does not start with its intro", text)
	}
}

// TestTakeInboxSortsAndAcknowledges: a boundary's inbox sorts pauses, the
// messages the CLI took and those to show; acknowledging receipts the
// taken ones and ends the run with the last pause's text.
func TestTakeInboxSortsAndAcknowledges(t *testing.T) {
	t.Parallel()
	h := enginetest.NewHost(task.Task{ID: "t-inbox", Description: "d"})
	took := h.Inject(inject.Message, "taken before the restart", false)
	shown := h.Inject(inject.Message, "new", false)
	h.Inject(inject.Pause, "  ", false)
	pause := h.Inject(inject.Pause, "stop now", false)
	var latest task.Task
	in, err := TakeInbox(context.Background(), h, &latest, func(id int64) bool { return id == took })
	if err != nil {
		t.Fatal(err)
	}
	if latest.ID != "t-inbox" || len(in.Taken) != 1 || in.Taken[0].ID != took || len(in.Shown) != 1 || in.Shown[0].ID != shown || len(in.Pauses) != 2 {
		t.Fatalf("latest %q, inbox %+v", latest.ID, in)
	}
	commit := func(ctx context.Context, s engine.Step) error { _, err := h.Commit(ctx, s); return err }
	out, stop, err := in.Acknowledge(context.Background(), 2, h.Now(), commit)
	if err != nil || !stop || out.Status != engine.Paused || out.Reason != "stop now" || out.Turn != 2 {
		t.Fatalf("Acknowledge = %+v, %v, %v", out, stop, err)
	}
	if !h.Delivered(took) || !h.Delivered(pause) || h.Delivered(shown) {
		t.Error("the taken message and the pauses are not receipted alone")
	}
}

// TestFinishStoresItsEvent: a run's end is stored as the event of its
// status; when it cannot be, the failure's outcome is the run's.
func TestFinishStoresItsEvent(t *testing.T) {
	t.Parallel()
	h := enginetest.NewHost(task.Task{ID: "t-finish"})
	commit := func(ctx context.Context, s engine.Step) error { _, err := h.Commit(ctx, s); return err }
	fail := func(context.Context, error) engine.Outcome {
		return engine.Outcome{Status: engine.Paused, Reason: "failed"}
	}
	if o := Finish(context.Background(), 3, engine.Waiting, "which one?", commit, fail); o.Status != engine.Waiting || o.Reason != "which one?" || o.Turn != 3 {
		t.Errorf("Finish = %+v", o)
	}
	if !h.Has(event.KindNeedsInput, func(p event.Payload) bool { return p.(event.NeedsInput).Question == "which one?" }) {
		t.Error("the question was not stored as agent.needs_input")
	}
	broken := func(context.Context, engine.Step) error { return errors.New("store down") }
	if o := Finish(context.Background(), 3, engine.Completed, "done", broken, fail); o.Reason != "failed" {
		t.Errorf("Finish with a failing store = %+v, want the failure's outcome", o)
	}
}
