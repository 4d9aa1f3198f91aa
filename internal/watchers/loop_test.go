package watchers

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

const (
	settle   = 20 * time.Second
	interval = 10 * time.Second
)

// run starts a service on w inside the bubble and returns it with a stop
// function that ends it and joins it.
func run(t *testing.T, w *world) (*Service, func()) {
	t.Helper()
	s := New(Options{Config: Config{Enabled: true, Settle: settle, MinInterval: interval, Timeout: time.Minute},
		Store: w, Sessions: w, Bus: w.bus, Actions: w,
		Models: func(llm.Tier) (llm.Client, string, error) { return w, "m", nil }})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := s.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	synctest.Wait()
	return s, func() { cancel(); wg.Wait() }
}

func add(t *testing.T, s *Service, sp Spec) store.WatchSession {
	t.Helper()
	ws, err := s.Add(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	return ws
}

func write(w *world, id task.ID, content string) {
	args, _ := json.Marshal(map[string]string{"path": "auth.go", "content": content})
	w.emit(id, event.ToolCall{Name: "write_file", Args: args})
	w.emit(id, event.ToolResult{Name: "write_file", Preview: "wrote auth.go"})
	w.emit(id, event.FileChanged{Path: "auth.go", Op: "modified"})
}

// Activity without a breakpoint is evaluated once it has settled: not
// before settle_secs, then once.
func TestSettleTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld()
		w.addTask("t-1")
		s, stop := run(t, w)
		defer stop()
		add(t, s, Spec{Task: "t-1", Role: "scope"})
		w.emit("t-1", event.Text{Text: "Thinking about the parser."})
		synctest.Wait()
		time.Sleep(settle - time.Second)
		synctest.Wait()
		if calls, _, _, _ := w.snapshot(); len(calls) != 0 {
			t.Fatalf("%d evaluations before the activity settled", len(calls))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		calls, evals, _, _ := w.snapshot()
		if len(calls) != 1 || !strings.Contains(calls[0], "[Assistant]: Thinking about the parser.") || evals[0].Decision != store.DecisionContinue {
			t.Fatalf("after settling: %d calls, evals %+v", len(calls), evals)
		}
		w.mu.Lock()
		ordinary := w.ordinary
		w.mu.Unlock()
		if ordinary != 0 {
			t.Errorf("%d evaluation calls not marked low priority: they would compete with the tasks' own calls", ordinary)
		}
		time.Sleep(10 * settle)
		synctest.Wait()
		if calls, _, _, _ := w.snapshot(); len(calls) != 1 {
			t.Errorf("%d evaluations of one stretch of activity", len(calls))
		}
	})
}

// A session has one evaluation in flight: breakpoints meanwhile coalesce
// into one next evaluation. And evaluations start at least the rate limit
// apart.
func TestOneInFlightAndRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld()
		w.gate = make(chan struct{})
		w.addTask("t-1")
		s, stop := run(t, w)
		defer stop()
		add(t, s, Spec{Task: "t-1", Role: "security"})
		ncalls := func() int { c, _, _, _ := w.snapshot(); return len(c) }
		write(w, "t-1", "one")
		synctest.Wait()
		if n := ncalls(); n != 1 {
			t.Fatalf("%d calls after a file change, want 1", n)
		}
		// Past the rate limit, still in flight: nothing more starts.
		time.Sleep(interval + time.Second)
		write(w, "t-1", "two")
		w.emit("t-1", event.TurnEnded{Turn: 1})
		write(w, "t-1", "three")
		synctest.Wait()
		if n := ncalls(); n != 1 {
			t.Fatalf("%d calls while one is in flight, want 1", n)
		}
		w.gate <- struct{}{}
		synctest.Wait()
		calls, _, _, maxIn := w.snapshot()
		if len(calls) != 2 || maxIn != 1 {
			t.Fatalf("%d calls (at most %d at once), want the coalesced second at once", len(calls), maxIn)
		}
		if !strings.Contains(calls[1], "two") || !strings.Contains(calls[1], "three") || strings.Contains(calls[1], `\"one\"`) {
			t.Errorf("the second evaluation weighs:\n%s", calls[1])
		}
		// The second started just now: a breakpoint right after it ends
		// waits for the rate limit.
		w.gate <- struct{}{}
		write(w, "t-1", "four")
		synctest.Wait()
		time.Sleep(interval - time.Second)
		synctest.Wait()
		if n := ncalls(); n != 2 {
			t.Fatalf("%d calls within the rate limit, want 2", n)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := ncalls(); n != 3 {
			t.Fatalf("%d calls once the rate allows, want 3", n)
		}
		w.gate <- struct{}{}
		synctest.Wait()
		if st := s.Stats(); st.Evaluations != 3 || st.Coalesced == 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// An urgent interjection goes through the door with its provenance; the
// delivery receipt follows the task's agent.delivered.
func TestUrgentInterjectionAndReceipt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld()
		w.reply = func(string) string {
			return "[INTERJECT]\nurgent: true\ncontent: Use a parameterized query.\n[/INTERJECT]"
		}
		w.addTask("t-1")
		s, stop := run(t, w)
		defer stop()
		ws := add(t, s, Spec{Task: "t-1", Role: "security"})
		write(w, "t-1", `"SELECT * FROM users WHERE name = '" + name + "'"`)
		synctest.Wait()
		_, evals, injs, _ := w.snapshot()
		if len(injs) != 1 {
			t.Fatalf("%d injections, want 1", len(injs))
		}
		inj := injs[0]
		want := inject.NewInterjection("t-1", ws.ID, "Security Reviewer", "supervisor", "Use a parameterized query.", true)
		want.ID = inj.ID
		if inj.Kind != want.Kind || inj.Source != want.Source || !inj.Urgent || inj.Text != want.Text || inj.Attrs["from"] != "Security Reviewer" || inj.Attrs["authority"] != "supervisor" {
			t.Errorf("injection %+v, want %+v", inj, want)
		}
		if evals[0].InjectionID != inj.ID || !evals[0].Urgent {
			t.Errorf("evaluation %+v", evals[0])
		}
		w.emit("t-1", event.Delivered{Turn: 3, InjectionIDs: []int64{inj.ID}, Kinds: []string{"interjection"}})
		synctest.Wait()
		if r := w.events(event.KindWatchDelivered); len(r) != 1 || r[0].Payload.(event.WatchDelivered).Session != ws.ID {
			t.Errorf("receipts %+v", r)
		}
	})
}

// A session past its budget pauses itself and evaluates no more.
func TestBudgetPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld()
		w.cost = 0.5
		w.addTask("t-1")
		s, stop := run(t, w)
		defer stop()
		add(t, s, Spec{Task: "t-1", Role: "tests", BudgetUSD: 0.8})
		for i := range 4 {
			write(w, "t-1", strings.Repeat("x", i+1))
			synctest.Wait()
			time.Sleep(interval)
			synctest.Wait()
		}
		ws := w.session("tests")
		calls, _, _, _ := w.snapshot()
		if len(calls) != 2 || ws.Status != store.WatchPaused || ws.Reason != "budget reached" {
			t.Fatalf("%d calls, session %s (%s); want paused after two", len(calls), ws.Status, ws.Reason)
		}
		if _, err := s.Resume(context.Background(), "tests"); err == nil {
			t.Error("a session past its budget resumed")
		}
	})
}

// A session on tags picks up a task created after it and leaves others
// alone; a session on one task ends when the task does, and an
// interjection decided as it ended is recorded, not sent.
func TestTagsAndParentEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld()
		w.gate = make(chan struct{})
		w.reply = func(string) string { return "[INTERJECT]\nurgent: false\ncontent: add a test\n[/INTERJECT]" }
		s, stop := run(t, w)
		defer stop()
		add(t, s, Spec{Tags: []string{"auth"}, Role: "tests"})
		w.addTask("t-auth", "auth")
		w.addTask("t-ui", "ui")
		write(w, "t-ui", "ui")
		write(w, "t-auth", "auth")
		synctest.Wait()
		calls, _, _, _ := w.snapshot()
		if len(calls) != 1 || !strings.Contains(calls[0], "t-auth") {
			t.Fatalf("calls %d; want one, for the tagged task", len(calls))
		}
		w.gate <- struct{}{}
		synctest.Wait()

		one := add(t, s, Spec{Task: "t-ui", Role: "scope"})
		write(w, "t-ui", "more")
		synctest.Wait()
		w.finish("t-ui")
		synctest.Wait()
		w.gate <- struct{}{}
		synctest.Wait()
		ws := w.session("scope")
		if ws.Status != store.WatchEnded || !strings.Contains(ws.Reason, "completed") {
			t.Errorf("session on a finished task: %s (%s)", ws.Status, ws.Reason)
		}
		_, evals, injs, _ := w.snapshot()
		last := evals[len(evals)-1]
		if last.SessionID != one.ID || last.InjectionID != 0 || !strings.Contains(last.Undelivered, "task finished") {
			t.Errorf("the evaluation as its task ended: %+v", last)
		}
		for _, inj := range injs {
			if inj.TaskID == "t-ui" {
				t.Errorf("an interjection reached the finished task: %+v", inj)
			}
		}
	})
}
