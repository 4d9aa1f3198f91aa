package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
)

// Events emitted together are appended several to a statement: every one
// is stored, in order, with consecutive IDs, its time (now when it had
// none) and its payload, and the events committed say the same.
func TestEmitManyEventsInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var published []event.Event
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"), sqlite.Options{Publish: func(evs ...event.Event) { published = append(published, evs...) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, n := range []int{1, 7, 8, 9, 20} {
		published = nil
		evs := make([]event.Event, n)
		for i := range evs {
			evs[i] = event.New(t0.Add(time.Duration(i)*time.Second), "", event.ToolResult{Turn: i, CallID: fmt.Sprintf("c%d-%d", n, i), Name: "glob"})
		}
		evs[n/2].Time = time.Time{} // stored at the time of the write
		before := time.Now()
		committed, err := s.AppendEvents(ctx, evs...)
		if err != nil {
			t.Fatal(err)
		}
		if len(committed) != n || len(published) != n {
			t.Fatalf("%d events: %d committed, %d published", n, len(committed), len(published))
		}
		got, err := s.ReadEvents(ctx, event.Query{AfterID: committed[0].ID - 1, Limit: n})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d events appended, %d read back", n, len(got))
		}
		for i, e := range got {
			p, ok := e.Payload.(event.ToolResult)
			if e.ID != committed[0].ID+int64(i) || committed[i].ID != e.ID || !ok || p.Turn != i || p.CallID != fmt.Sprintf("c%d-%d", n, i) {
				t.Errorf("%d events: #%d read back as %+v (committed %+v)", n, i, e, committed[i])
			}
			switch {
			case i == n/2 && (e.Time.Before(before.Add(-time.Second)) || !committed[i].Time.Equal(e.Time)):
				t.Errorf("%d events: #%d without a time stored at %v (committed %v)", n, i, e.Time, committed[i].Time)
			case i != n/2 && !e.Time.Equal(t0.Add(time.Duration(i)*time.Second)):
				t.Errorf("%d events: #%d at %v", n, i, e.Time)
			}
		}
	}
	if err := s.EmitEvents(ctx, event.New(t0, "", event.ToolResult{Name: "x"}), event.New(t0, "", event.TextDelta{Text: "x"})); err == nil {
		t.Error("a transient event was logged")
	}
}
