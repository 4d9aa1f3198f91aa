package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// failures collects what a Notifier reports.
type failures struct {
	mu  sync.Mutex
	got []event.NotifyFailed
}

func (f *failures) report(_ task.ID, p event.Payload) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, p.(event.NotifyFailed))
}

func (f *failures) list() []event.NotifyFailed {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// publishAll publishes the events of a fleet's afternoon: five raise a
// signal, the rest none.
func publishAll(bus *event.Bus) {
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	evs := []event.Event{
		event.New(t0, "t-aaaaa", event.TaskStatus{From: task.Queued, To: task.Running}),
		event.New(t0, "t-aaaaa", event.TaskStatus{From: task.Running, To: task.Waiting, Reason: "which database?"}),
		event.New(t0, "t-bbbbb", event.TaskStatus{From: task.Running, To: task.Paused, Reason: "paused by user"}),
		event.New(t0, "t-ccccc", event.TaskStatus{From: task.Running, To: task.Paused, Reason: "budget of $2.00 spent"}),
		event.New(t0, "t-ddddd", event.TaskStatus{From: task.Running, To: task.Failed, Reason: "tests never passed"}),
		event.New(t0, "t-eeeee", event.MergeLanded{Entry: 1, Target: "main", Commit: "0123456789abcdef"}),
		event.New(t0, "t-fffff", event.MergeParked{Entry: 2, Reason: "the gate failed 3 times"}),
		event.New(t0, "t-fffff", event.MergeQueued{Entry: 2}),
		// The same question again at once is debounced.
		event.New(t0, "t-aaaaa", event.TaskStatus{From: task.Running, To: task.Waiting, Reason: "which database?"}),
	}
	for i := range evs {
		evs[i].ID = int64(i + 1)
	}
	bus.Publish(evs...)
}

var wantSignals = []string{
	"t-aaaaa needs_input which database?",
	"t-ccccc paused budget of $2.00 spent",
	"t-ddddd failed tests never passed",
	"t-eeeee landed landed on main as 0123456789ab",
	"t-fffff merge_parked the gate failed 3 times",
}

func signalLines(t *testing.T, data []string) []string {
	t.Helper()
	var out []string
	for _, d := range data {
		var s Signal
		if err := json.Unmarshal([]byte(d), &s); err != nil {
			t.Fatalf("not a signal: %q: %v", d, err)
		}
		if s.Title != string(s.TaskID)+" "+strings.ReplaceAll(s.Signal, "_", " ") || s.EventID == 0 {
			t.Errorf("signal %+v: bad title or event id", s)
		}
		out = append(out, string(s.TaskID)+" "+s.Signal+" "+s.Reason)
	}
	slices.Sort(out)
	return out
}

// runNotifier runs n on bus until the test ends, and waits for it to
// subscribe.
func runNotifier(t *testing.T, n *Notifier, bus *event.Bus) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, bus) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	testkit.WaitFor(t, "the notifier to subscribe", func() bool { return bus.Stats().Subscribers == 1 })
}

// TestCommandAndWebhookGetEachSignalOnce: a command and a local webhook
// receiver get the five signals, once each, as JSON.
func TestCommandAndWebhookGetEachSignalOnce(t *testing.T) {
	out := filepath.Join(t.TempDir(), "signals")
	var mu sync.Mutex
	var posted []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s with %q", r.Method, r.Header.Get("Content-Type"))
		}
		mu.Lock()
		posted = append(posted, string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	var f failures
	bus := event.NewBus(event.Options{}, 0)
	n := New(Options{Command: "cat >> " + out, Webhook: srv.URL, Debounce: time.Hour, Report: f.report})
	runNotifier(t, n, bus)
	publishAll(bus)

	lines := func() []string {
		b, _ := os.ReadFile(out)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	testkit.WaitFor(t, "the command and the webhook to get five signals", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(lines()) >= len(wantSignals) && len(posted) >= len(wantSignals)
	})
	// The deliveries are serial: once the last webhook POST is in, every
	// signal has been delivered; none more may come.
	if got := signalLines(t, lines()); !slices.Equal(got, wantSignals) {
		t.Errorf("command got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantSignals, "\n"))
	}
	mu.Lock()
	got := signalLines(t, posted)
	mu.Unlock()
	if !slices.Equal(got, wantSignals) {
		t.Errorf("webhook got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantSignals, "\n"))
	}
	if fl := f.list(); len(fl) != 0 {
		t.Errorf("failures reported: %+v", fl)
	}
}

// TestFailingChannelsAreReported: a command that exits 1 and a webhook that
// answers 500 are recorded as notify.failed, with what they said.
func TestFailingChannelsAreReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "topic is closed", http.StatusInternalServerError)
	}))
	defer srv.Close()
	var f failures
	n := New(Options{Command: "echo no such channel; exit 1", Webhook: srv.URL, Report: f.report})
	bus := event.NewBus(event.Options{}, 0)
	runNotifier(t, n, bus)
	e := event.New(time.Now(), "t-aaaaa", event.TaskStatus{From: task.Running, To: task.Failed, Reason: "x"})
	e.ID = 1
	bus.Publish(e)
	testkit.WaitFor(t, "two failures", func() bool { return len(f.list()) == 2 })
	fl := f.list()
	if fl[0].Channel != "command" || !strings.Contains(fl[0].Error, "no such channel") || fl[0].Signal != Failed {
		t.Errorf("command failure = %+v", fl[0])
	}
	if fl[1].Channel != "webhook" || !strings.Contains(fl[1].Error, "500") || !strings.Contains(fl[1].Error, "topic is closed") {
		t.Errorf("webhook failure = %+v", fl[1])
	}
}

// TestHangingWebhookBlocksNothing: a webhook that never answers holds one
// delivery until its timeout; meanwhile Offer returns at once, a full queue
// drops signals (recorded), and the hung POST is recorded as timed out.
func TestHangingWebhookBlocksNothing(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var f failures
	n := New(Options{Webhook: srv.URL, Queue: 2, Timeout: 200 * time.Millisecond, Report: f.report})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { n.deliverAll(ctx) })
	defer wg.Wait()
	defer cancel()

	offer := func(id task.ID) bool {
		return n.Offer(Signal{Signal: Failed, TaskID: id, Title: string(id) + " failed"})
	}
	offer("t-aaaaa")
	<-arrived // the deliverer is held by the webhook now
	// Two fit in the queue; the rest are dropped, and Offer does not wait.
	queued := 0
	for _, id := range []task.ID{"t-bbbbb", "t-ccccc", "t-ddddd", "t-eeeee", "t-fffff"} {
		if offer(id) {
			queued++
		}
	}
	if queued != 2 {
		t.Errorf("%d signals queued behind the hung one, want 2", queued)
	}
	testkit.WaitFor(t, "the hung POST to time out", func() bool {
		for _, fl := range f.list() {
			if fl.Channel == "webhook" && strings.Contains(fl.Error, "timed out") {
				return true
			}
		}
		return false
	})
	dropped := 0
	for _, fl := range f.list() {
		if fl.Channel == "queue" {
			dropped++
		}
	}
	if dropped != 3 {
		t.Errorf("%d drops recorded, want 3: %+v", dropped, f.list())
	}
}

// TestDebounce: the same signal for the same task is queued once per
// window; another task's, or another signal, is not held back.
func TestDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Options{Command: "true", Debounce: 30 * time.Second, Queue: 100})
		s := Signal{Signal: NeedsInput, TaskID: "t-aaaaa"}
		if !n.Offer(s) {
			t.Fatal("the first signal was not queued")
		}
		if n.Offer(s) {
			t.Error("the same signal at once was queued again")
		}
		if !n.Offer(Signal{Signal: NeedsInput, TaskID: "t-bbbbb"}) || !n.Offer(Signal{Signal: Paused, TaskID: "t-aaaaa"}) {
			t.Error("another task's signal, or another signal, was held back")
		}
		time.Sleep(29 * time.Second)
		if n.Offer(s) {
			t.Error("queued again within the window")
		}
		time.Sleep(time.Second)
		if !n.Offer(s) {
			t.Error("not queued again once the window passed")
		}
		if got := len(n.queue); got != 4 {
			t.Errorf("%d queued, want 4", got)
		}
	})
}

func TestClassifyLeavesOutUserPausesAndOtherChanges(t *testing.T) {
	for _, p := range []event.Payload{
		event.TaskStatus{From: task.Running, To: task.Paused, Reason: "paused by user"},
		event.TaskStatus{From: task.Paused, To: task.Queued},
		event.TaskStatus{From: task.Merging, To: task.Completed},
		event.MergeQueued{Entry: 1},
	} {
		if s, ok := Classify(event.New(time.Now(), "t-aaaaa", p)); ok {
			t.Errorf("%#v raised %+v", p, s)
		}
	}
}

// TestDesktopRunsNotifySendWhenPresent: notify.desktop runs notify-send
// with the title and reason; without it installed nothing fails.
func TestDesktopRunsNotifySendWhenPresent(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	bin := filepath.Join(dir, "notify-send")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s|' \"$@\" > "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var f failures
	n := New(Options{Desktop: true, Report: f.report, LookPath: func(string) (string, error) { return bin, nil }})
	n.deliver(context.Background(), Signal{Signal: NeedsInput, TaskID: "t-aaaaa", Title: "t-aaaaa needs input", Reason: "which database?"})
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "--app-name=neuraphage|t-aaaaa needs input|which database?|"; got != want {
		t.Errorf("notify-send got %q, want %q", got, want)
	}
	missing := New(Options{Desktop: true, Report: f.report, LookPath: func(string) (string, error) { return "", os.ErrNotExist }})
	missing.deliver(context.Background(), Signal{Signal: Failed, TaskID: "t-aaaaa"})
	if fl := f.list(); len(fl) != 0 {
		t.Errorf("failures: %+v", fl)
	}
}
