package event

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type logged struct{ N int }

func (logged) EventKind() Kind { return "test.logged" }

type delta struct{ N int }

func (delta) EventKind() Kind { return "test.delta" }
func (delta) Transient() bool { return true }

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

func ev(id int64, task string, p Payload) Event {
	e := New(t0, "", p)
	e.ID, e.TaskID = id, taskID(task)
	return e
}

func drain(t *testing.T, s *Subscription) []Event {
	t.Helper()
	var out []Event
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		e, err := s.Next(ctx)
		cancel()
		if err != nil {
			return out
		}
		out = append(out, e)
	}
}

func TestBusOrderAndFilters(t *testing.T) {
	t.Parallel()
	b := NewBus(Options{}, 0)
	all := b.Subscribe(Filter{})
	one := b.Subscribe(Filter{TaskID: "t-aaaaa"})
	kinds := b.Subscribe(Filter{Kinds: []string{"test.delta"}})
	defer all.Close()
	defer one.Close()
	defer kinds.Close()
	b.Publish(ev(1, "t-aaaaa", logged{1}), ev(2, "t-bbbbb", logged{2}), ev(0, "t-aaaaa", delta{3}), ev(3, "t-aaaaa", logged{4}))
	ids := func(evs []Event) []int64 {
		var out []int64
		for _, e := range evs {
			out = append(out, e.ID)
		}
		return out
	}
	if diff := cmp.Diff([]int64{1, 2, 0, 3}, ids(drain(t, all))); diff != "" {
		t.Errorf("all (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{1, 0, 3}, ids(drain(t, one))); diff != "" {
		t.Errorf("task filter (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{0}, ids(drain(t, kinds))); diff != "" {
		t.Errorf("kind filter (-want +got):\n%s", diff)
	}
	if got := b.LastID(); got != 3 {
		t.Errorf("LastID = %d, want 3", got)
	}
}

func TestSlowSubscriberDropsOnlyTransient(t *testing.T) {
	t.Parallel()
	b := NewBus(Options{Buffer: 4, LagLimit: 100}, 0)
	s := b.Subscribe(Filter{})
	defer s.Close()
	for i := range 10 {
		b.Publish(ev(int64(i+1), "", logged{i}), ev(0, "", delta{i}))
	}
	got := drain(t, s)
	var nLogged, nDelta int
	for _, e := range got {
		if e.Transient() {
			nDelta++
		} else {
			nLogged++
		}
	}
	if nLogged != 10 {
		t.Errorf("logged events delivered = %d, want all 10", nLogged)
	}
	if nDelta != 2 || s.Dropped() != 8 || b.Stats().Dropped != 8 {
		t.Errorf("transient delivered %d, dropped %d (bus %d); want 2 delivered, 8 dropped", nDelta, s.Dropped(), b.Stats().Dropped)
	}
}

func TestLaggedSubscriberEnds(t *testing.T) {
	t.Parallel()
	b := NewBus(Options{Buffer: 2, LagLimit: 5}, 0)
	s := b.Subscribe(Filter{})
	fast := b.Subscribe(Filter{})
	defer fast.Close()
	for i := range 6 {
		b.Publish(ev(int64(i+1), "", logged{i}))
		if _, err := fast.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, ErrLagged) {
		t.Errorf("lagged Next error = %v, want ErrLagged", err)
	}
	st := b.Stats()
	if st.Lagged != 1 || st.Subscribers != 1 {
		t.Errorf("stats = %+v, want 1 lagged and the fast subscriber left", st)
	}
	// Publish never blocked: the fast subscriber got everything.
}

func TestCloseWakesReaders(t *testing.T) {
	t.Parallel()
	b := NewBus(Options{}, 0)
	s := b.Subscribe(Filter{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Next(context.Background())
		done <- err
	}()
	b.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("Next after bus Close = %v, want ErrClosed", err)
	}
	if err := b.Subscribe(Filter{}).err; !errors.Is(err, ErrClosed) {
		t.Errorf("Subscribe after Close err = %v", err)
	}
	b.Close() // idempotent
}

// memLog is an event log in memory for Follow.
type memLog struct {
	mu  sync.Mutex
	evs []Event
}

func (l *memLog) ReadEvents(_ context.Context, q Query) ([]Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.evs {
		if e.ID > q.AfterID && q.Filter.Match(e) && (q.Limit == 0 || len(out) < q.Limit) {
			out = append(out, e)
		}
	}
	return out, nil
}

// commit appends to the log and then publishes, as the store's writer does.
func (l *memLog) commit(b *Bus, e Event) {
	l.mu.Lock()
	e.ID = int64(len(l.evs) + 1)
	l.evs = append(l.evs, e)
	l.mu.Unlock()
	b.Publish(e)
}

func TestFollowReplaysThenGoesLiveWithoutGaps(t *testing.T) {
	t.Parallel()
	log := &memLog{}
	b := NewBus(Options{Buffer: 4, LagLimit: 8}, 0)
	for i := range 2500 { // more than a page
		log.commit(b, New(t0, "", logged{i}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan int64, 10000)
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, b, log, Query{AfterID: 10}, func(e Event) error {
			got <- e.ID
			if e.ID == 5000 {
				return errStop
			}
			return nil
		})
	}()
	// Live events while the follower replays; the tiny lag limit forces it to
	// fall back to the log at least once.
	for i := 2500; i < 5000; i++ {
		log.commit(b, New(t0, "", logged{i}))
	}
	if err := <-done; !errors.Is(err, errStop) {
		t.Fatalf("Follow = %v", err)
	}
	close(got)
	want := int64(11)
	for id := range got {
		if id != want {
			t.Fatalf("got id %d, want %d: a gap or a duplicate", id, want)
		}
		want++
	}
	if want != 5001 {
		t.Errorf("followed up to %d, want 5000", want-1)
	}
}

var errStop = fmt.Errorf("stop")

func TestEventJSONRoundTrip(t *testing.T) {
	t.Parallel()
	e := New(t0, "t-aaaaa", TaskStatus{From: "queued", To: "paused", Reason: "r"})
	e.ID = 7
	b, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":7,"time":"2026-11-21T09:00:00Z","kind":"task.status","task_id":"t-aaaaa","data":{"from":"queued","to":"paused","reason":"r"}}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
	var back Event
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"id":1,"time":"2026-11-21T09:00:00Z","kind":"task.status","data":{"from":"queued","to":"running"}}`))
	f.Add([]byte(`{"kind":"task.created","data":{"tags":["a"]}}`))
	f.Add([]byte(`{"kind":"future.kind","data":[1,2,3]}`))
	f.Add([]byte(`{"kind":"task.message","data":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Event
		if err := e.UnmarshalJSON(b); err != nil {
			return
		}
		if e.Payload == nil {
			t.Fatalf("decoded event without a payload: %s", b)
		}
		if _, err := e.MarshalJSON(); err != nil {
			t.Fatalf("re-encoding a decoded event: %v", err)
		}
	})
}

func TestStatsBacklogIsTheSlowestReader(t *testing.T) {
	t.Parallel()
	b := NewBus(Options{}, 0)
	slow, fast := b.Subscribe(Filter{}), b.Subscribe(Filter{})
	defer slow.Close()
	defer fast.Close()
	if got := b.Stats().Backlog; got != 0 {
		t.Fatalf("backlog before any event = %d, want 0", got)
	}
	for i := range 5 {
		b.Publish(ev(int64(i+1), "", logged{i}))
	}
	for range 5 {
		if _, err := fast.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := slow.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.Stats().Backlog; got != 4 {
		t.Errorf("backlog = %d, want 4 (the slow reader read 1 of 5)", got)
	}
	slow.Close()
	if got := b.Stats().Backlog; got != 0 {
		t.Errorf("backlog after the slow reader closed = %d, want 0", got)
	}
}
