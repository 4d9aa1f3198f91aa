package executor

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// countingStore counts the reads of the injection queue.
type countingStore struct {
	store.Store
	mu    sync.Mutex
	reads int
}

func (s *countingStore) Pending(ctx context.Context, id task.ID) ([]inject.Injection, error) {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
	return s.Store.Pending(ctx, id)
}

// take returns the reads counted since the last take.
func (s *countingStore) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.reads
	s.reads = 0
	return n
}

// A turn boundary (Prepare, then Inbox) reads the task's queue once, also
// when it carries out a blocking rebase and a change of persona there, and
// the inbox holds what was waiting and the outcomes, never the requests.
func TestBoundaryReadsTheQueueOnce(t *testing.T) {
	e := newExecEnv(t, Config{}, nil)
	st := &countingStore{Store: e.st}
	e.ex.st = st
	e.ex.personas = &chainPersonas{}
	e.ex.rebase = func(context.Context, task.Task, inject.Injection) RebaseReply {
		return RebaseReply{Text: "rebased", Outcome: inject.Rebased}
	}
	tk := e.create("work", 2)
	h := e.ex.newHost(tk, &run{id: tk.ID, interrupts: make(chan struct{}, 1)})
	ctx := context.Background()
	for _, inj := range []inject.Injection{
		{TaskID: tk.ID, Kind: inject.Message, Source: inject.FromUser, Text: "hello"},
		{TaskID: tk.ID, Kind: inject.Rebase, Source: inject.FromMainWatcher, Urgency: inject.Blocking, Text: "main moved", Urgent: true},
		{TaskID: tk.ID, Kind: inject.Persona, Source: inject.FromUser, Text: "harder",
			Attrs: map[string]string{"from": tk.Persona, "to": "senior", "by": "user"}},
	} {
		if _, err := e.ex.Inject(ctx, inj); err != nil {
			t.Fatal(err)
		}
	}
	for boundary, want := range [][]inject.Kind{
		{inject.Message, inject.Rebase, inject.Persona},
		{inject.Message, inject.Rebase, inject.Persona}, // not delivered: still waiting
	} {
		st.take()
		got, err := h.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		inbox, err := h.Inbox(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := st.take(); n != 1 {
			t.Errorf("boundary %d read the queue %d times, want once", boundary+1, n)
		}
		var kinds []inject.Kind
		for _, inj := range inbox {
			kinds = append(kinds, inj.Kind)
			if inj.IsBlockingRebase() || inj.IsPersonaRequest() {
				t.Errorf("boundary %d: the inbox holds a request: %+v", boundary+1, inj)
			}
		}
		if !slices.Equal(kinds, want) {
			t.Errorf("boundary %d: inbox kinds %v, want %v", boundary+1, kinds, want)
		}
		if got.Persona != "senior" {
			t.Errorf("boundary %d: Prepare returned persona %q, want senior", boundary+1, got.Persona)
		}
	}
	// Inbox without a Prepare reads the queue itself.
	st.take()
	if _, err := h.Inbox(ctx); err != nil {
		t.Fatal(err)
	}
	if n := st.take(); n != 1 {
		t.Errorf("Inbox alone read the queue %d times, want once", n)
	}
}
