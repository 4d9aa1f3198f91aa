package control_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/control"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

func newControl(t *testing.T, randomness []byte) (*control.Control, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return control.New(st, func() time.Time { return t0 }, bytes.NewReader(randomness), control.Defaults{Engine: "native"}, slog.New(slog.DiscardHandler)), st
}

func TestCreateRetriesOnIDCollision(t *testing.T) {
	t.Parallel()
	// The first two draws give the same ID; the third a new one.
	same := []byte{1, 2, 3, 4, 5}
	c, _ := newControl(t, append(append(append([]byte{}, same...), same...), 9, 9, 9, 9, 9))
	ctx := context.Background()
	a, err := c.Create(ctx, task.Spec{Description: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Create(ctx, task.Spec{Description: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == b.ID || b.ID != "t-99999" {
		t.Errorf("ids %s and %s: want a retry to t-99999 after the collision", a.ID, b.ID)
	}
	if a.Engine != "native" {
		t.Errorf("engine = %q, want the default", a.Engine)
	}
}

func TestSendAndMoves(t *testing.T) {
	t.Parallel()
	c, st := newControl(t, counting(200))
	ctx := context.Background()
	tk, err := c.Create(ctx, task.Spec{Description: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var inv *task.InvalidError
	if _, err := c.Send(ctx, string(tk.ID), "   ", false); !errors.As(err, &inv) {
		t.Errorf("empty message error = %v, want *task.InvalidError", err)
	}
	if _, err := c.Send(ctx, "t-zzzzz", "hi", false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("message to unknown task error = %v, want ErrNotFound", err)
	}
	inj, err := c.Send(ctx, string(tk.ID)[2:4], " hello ", false)
	if err != nil || inj.Text != "hello" || inj.Source != "user" {
		t.Fatalf("Send by prefix = %+v, %v", inj, err)
	}
	if got, err := c.Pause(ctx, string(tk.ID), ""); err != nil || got.Status != task.Paused || got.CloseReason != "paused by user" {
		t.Fatalf("Pause = %+v, %v", got, err)
	}
	if _, err := c.Pause(ctx, string(tk.ID), ""); err == nil {
		t.Error("pausing a paused task succeeded")
	}
	if _, err := c.Cancel(ctx, string(tk.ID), "done with it"); err != nil {
		t.Fatal(err)
	}
	var fin *task.FinishedError
	if _, err := c.Send(ctx, string(tk.ID), "too late", false); !errors.As(err, &fin) {
		t.Errorf("message to a cancelled task error = %v, want *FinishedError", err)
	}
	evs, err := st.ReadEvents(ctx, event.Query{Filter: event.Filter{TaskID: tk.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []event.Kind
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	want := []event.Kind{event.KindTaskCreated, event.KindTaskMessage, event.KindTaskStatus, event.KindTaskStatus}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
}

func TestRecoverLeavesWaitingAndPausedAlone(t *testing.T) {
	t.Parallel()
	c, st := newControl(t, counting(200))
	ctx := context.Background()
	var ids []task.ID
	for _, to := range [][]task.Status{{task.Running}, {task.Running, task.Waiting}, {task.Paused}, {}} {
		tk, err := c.Create(ctx, task.Spec{Description: "x"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range to {
			if _, _, err := st.UpdateTask(ctx, tk.ID, store.Transition(s, "", t0)); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, tk.ID)
	}
	got, err := c.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != ids[0] {
		t.Fatalf("Recover = %v, want only the running task %s", got, ids[0])
	}
	want := []task.Status{task.Queued, task.Waiting, task.Paused, task.Queued}
	for i, id := range ids {
		tk, err := st.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status != want[i] || tk.ResumePending != (i == 0) {
			t.Errorf("task %d: %s resume=%v, want %s resume=%v", i, tk.Status, tk.ResumePending, want[i], i == 0)
		}
	}
}

// counting returns n bytes 0, 1, 2, …: distinct IDs for n/5 draws.
func counting(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}
