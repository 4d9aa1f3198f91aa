package metrics

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

var t0 = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

type fixture struct {
	st  *sqlite.Store
	bus *event.Bus
	c   *Collector
}

// newFixture opens a real store whose commits publish on a bus, and runs a
// Collector on them until the test ends.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	bus := event.NewBus(event.Options{}, 0)
	st := testkit.OpenStore(t, sqlite.Options{Publish: bus.Publish})
	c := New(Options{Store: st, Bus: bus, Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return &fixture{st: st, bus: bus, c: c}
}

// scrape writes the metrics after the counters have handled every event
// logged so far, and parses them strictly.
func (f *fixture) scrape(t testing.TB) scrape {
	t.Helper()
	ctx := context.Background()
	last, err := f.st.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the counters to handle every logged event", func() bool {
		f.c.mu.Lock()
		defer f.c.mu.Unlock()
		return f.c.counts.seen >= last
	})
	var b bytes.Buffer
	if err := f.c.WriteText(ctx, &b); err != nil {
		t.Fatal(err)
	}
	return mustParse(t, b.String())
}

func (f *fixture) task(t testing.TB) task.Task {
	t.Helper()
	id, err := task.NewID(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := task.New(id, task.Spec{Description: "work " + string(id), Priority: 2}, t0)
	if err != nil {
		t.Fatal(err)
	}
	ev := event.New(t0, tk.ID, event.TaskCreated{Description: tk.Description, Status: tk.Status})
	if _, err := f.st.CreateTask(context.Background(), tk, ev); err != nil {
		t.Fatal(err)
	}
	return tk
}

func (f *fixture) enqueue(t testing.TB, id task.ID, k inject.Kind) inject.Injection {
	t.Helper()
	inj, _, err := f.st.Enqueue(context.Background(), inject.Injection{TaskID: id, Kind: k, Source: inject.FromUser, Text: "hi", CreatedAt: t0},
		func(in inject.Injection) []event.Event {
			return []event.Event{event.New(t0, id, event.TaskMessage{InjectionID: in.ID, Source: string(in.Source), Kind: string(in.Kind), Text: in.Text})}
		})
	if err != nil {
		t.Fatal(err)
	}
	return inj
}

// TestValuesFollowActions: each kind of action moves its metric, and only
// its metric, in a real store.
func TestValuesFollowActions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()

	before := f.scrape(t)
	for _, st := range task.AllStatuses() {
		if v := before.must(t, "neuraphage_tasks", "status", string(st)); v != 0 {
			t.Errorf("tasks{%s} = %v on an empty store", st, v)
		}
	}
	if n := len(before.samplesOf("neuraphage_model_calls_total")); n != 0 {
		t.Errorf("%d model call series on an empty ledger", n)
	}
	if v := before.must(t, "neuraphage_build_info", "version", "test"); v != 1 {
		t.Errorf("build_info = %v", v)
	}

	a, b, c := f.task(t), f.task(t), f.task(t)
	if _, _, err := f.st.UpdateTask(ctx, c.ID, func(tk *task.Task) ([]event.Event, error) {
		if err := tk.Transition(task.Cancelled, "test", t0); err != nil {
			return nil, err
		}
		return []event.Event{event.New(t0, tk.ID, event.TaskStatus{From: task.Queued, To: task.Cancelled})}, nil
	}); err != nil {
		t.Fatal(err)
	}
	msg := f.enqueue(t, a.ID, inject.Message)
	f.enqueue(t, a.ID, inject.Nudge)
	if _, _, err := f.st.Checkpoint(ctx, store.Checkpoint{
		TaskID: a.ID, Delivered: []int64{msg.ID},
		Charges: []store.Charge{
			{Provider: "anthropic", Model: "claude-x", InputTokens: 1000, OutputTokens: 50, CacheReadTokens: 7, CostUSD: 0.25},
			{Provider: "anthropic", Model: "claude-x", InputTokens: 500, OutputTokens: 25, CacheWriteTokens: 3, CostUSD: 0.125},
		},
	}, event.New(t0, a.ID, event.Delivered{Turn: 1, InjectionIDs: []int64{msg.ID}, Kinds: []string{"message"}})); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.AppendEvents(ctx,
		event.New(t0, a.ID, event.HealthCheck{Status: "stuck", Tier: 1, Ladder: "hint"}),
		event.New(t0, a.ID, event.WatcherNudge{Severity: "hint", Message: "try"}),
		event.New(t0, a.ID, event.WatcherPause{Diagnosis: "loop"}),
		event.New(t0, a.ID, event.ModelRetry{Turn: 1, Attempt: 2, Class: "overloaded"}),
	); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.st.EnqueueMerge(ctx, store.MergeEntry{TaskID: b.ID, Repo: "/src", Branch: "nb", Target: "main"}, nil); err != nil {
		t.Fatal(err)
	}

	after := f.scrape(t)
	for _, want := range []struct {
		name string
		kv   []string
		v    float64
	}{
		{"neuraphage_tasks", []string{"status", "queued"}, 2},
		{"neuraphage_tasks", []string{"status", "cancelled"}, 1},
		{"neuraphage_tasks", []string{"status", "running"}, 0},
		{"neuraphage_model_calls_total", []string{"provider", "anthropic", "model", "claude-x"}, 2},
		{"neuraphage_model_tokens_total", []string{"provider", "anthropic", "model", "claude-x", "direction", "input"}, 1500},
		{"neuraphage_model_tokens_total", []string{"provider", "anthropic", "model", "claude-x", "direction", "output"}, 75},
		{"neuraphage_model_tokens_total", []string{"provider", "anthropic", "model", "claude-x", "direction", "cache_read"}, 7},
		{"neuraphage_model_tokens_total", []string{"provider", "anthropic", "model", "claude-x", "direction", "cache_write"}, 3},
		{"neuraphage_model_cost_usd_total", []string{"provider", "anthropic", "model", "claude-x"}, 0.375},
		{"neuraphage_injections_pending", nil, 1},
		{"neuraphage_injections_queued_total", []string{"kind", "message"}, 1},
		{"neuraphage_injections_queued_total", []string{"kind", "nudge"}, 1},
		{"neuraphage_injections_delivered_total", []string{"kind", "message"}, 1},
		{"neuraphage_injections_delivered_total", []string{"kind", "nudge"}, 0},
		{"neuraphage_watcher_findings_total", []string{"status", "stuck"}, 1},
		{"neuraphage_watcher_actions_total", []string{"action", "nudge"}, 1},
		{"neuraphage_watcher_actions_total", []string{"action", "pause"}, 1},
		{"neuraphage_watcher_actions_total", []string{"action", "abort"}, 0},
		{"neuraphage_model_retries_total", []string{"class", "overloaded"}, 1},
		{"neuraphage_merge_queue_depth", []string{"state", "queued"}, 1},
		{"neuraphage_merge_queue_depth", []string{"state", "running"}, 0},
	} {
		if got := after.must(t, want.name, want.kv...); got != want.v {
			t.Errorf("%s%v = %v, want %v", want.name, want.kv, got, want.v)
		}
	}
	last, err := f.st.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.must(t, "neuraphage_event_log_last_id"); got != float64(last) {
		t.Errorf("event_log_last_id = %v, want %d", got, last)
	}
	if got := after.must(t, "neuraphage_metrics_last_counted_id"); got != float64(last) {
		t.Errorf("metrics_last_counted_id = %v, want %d (every event handled)", got, last)
	}
	if got := after.must(t, "neuraphage_bus_published_total"); got < float64(last) {
		t.Errorf("bus_published_total = %v, want at least the %d logged events", got, last)
	}
	// A charge after a scrape: the running sums read only it and still
	// equal the whole ledger's.
	if _, _, err := f.st.Checkpoint(ctx, store.Checkpoint{TaskID: b.ID, Charges: []store.Charge{
		{Provider: "anthropic", Model: "claude-x", InputTokens: 8, OutputTokens: 2, CostUSD: 0.5}}}); err != nil {
		t.Fatal(err)
	}
	again := f.scrape(t)
	whole, err := f.st.Costs(ctx, store.CostQuery{By: "model"})
	if err != nil || len(whole) != 1 {
		t.Fatalf("Costs = %+v, %v", whole, err)
	}
	if got := again.must(t, "neuraphage_model_calls_total", "provider", "anthropic", "model", "claude-x"); got != float64(whole[0].Calls) || got != 3 {
		t.Errorf("model_calls_total = %v, want the ledger's %d", got, whole[0].Calls)
	}
	if got := again.must(t, "neuraphage_model_tokens_total", "provider", "anthropic", "model", "claude-x", "direction", "input"); got != float64(whole[0].InputTokens) {
		t.Errorf("input tokens = %v, want the ledger's %d", got, whole[0].InputTokens)
	}
	if got := again.must(t, "neuraphage_model_cost_usd_total", "provider", "anthropic", "model", "claude-x"); got != whole[0].CostUSD {
		t.Errorf("cost = %v, want the ledger's %v", got, whole[0].CostUSD)
	}
}

func (sc scrape) samplesOf(name string) []sample {
	var out []sample
	for _, s := range sc.samples {
		if s.name == name {
			out = append(out, s)
		}
	}
	return out
}

// TestHostileLabelValuesAreEscaped: a model name (it comes from the
// user's config and the provider's answers) with quotes, braces, line
// feeds, backslashes, a fake metric line and bytes that are not UTF-8
// stays one label value; nothing is injected into the exposition.
func TestHostileLabelValuesAreEscaped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.task(t)
	hostile := "m\"} 1\n# TYPE neuraphage_tasks counter\nneuraphage_injected_total 99\n\\\"\xff\xfe end"
	if _, _, err := f.st.Checkpoint(context.Background(), store.Checkpoint{TaskID: a.ID,
		Charges: []store.Charge{{Provider: "evil\\", Model: hostile, InputTokens: 1, CostUSD: 0.5}}}); err != nil {
		t.Fatal(err)
	}
	sc := f.scrape(t)
	want := strings.ToValidUTF8(hostile, "\uFFFD")
	if got := sc.must(t, "neuraphage_model_cost_usd_total", "provider", "evil\\", "model", want); got != 0.5 {
		t.Errorf("cost of the hostile model = %v, want 0.5", got)
	}
	if _, ok := sc.types["neuraphage_injected_total"]; ok || len(sc.samplesOf("neuraphage_injected_total")) > 0 {
		t.Errorf("a label value injected a metric")
	}
	if sc.types["neuraphage_tasks"] != "gauge" {
		t.Errorf("neuraphage_tasks has type %q; a label value changed it", sc.types["neuraphage_tasks"])
	}

	for in, want := range map[string]string{
		`a"b`:       `a\"b`,
		`a\b`:       `a\\b`,
		"a\nb":      `a\nb`,
		"\xff":      "\uFFFD",
		`\"` + "\n": `\\\"\n`,
	} {
		if got := escapeLabel(in); got != want {
			t.Errorf("escapeLabel(%q) = %q, want %q", in, got, want)
		}
	}
	if got := escapeHelp("a\\b\n\"c\""); got != `a\\b\n"c"` {
		t.Errorf("escapeHelp = %q", got)
	}
}

// TestBusBacklogIsTheSlowestReader: a subscriber that reads nothing shows
// as the bus's backlog.
func TestBusBacklogIsTheSlowestReader(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	slow := f.bus.Subscribe(event.Filter{})
	defer slow.Close()
	a := f.task(t)
	for range 5 {
		if _, err := f.st.AppendEvents(context.Background(), event.New(t0, a.ID, event.TaskDependency{Blocker: a.ID})); err != nil {
			t.Fatal(err)
		}
	}
	sc := f.scrape(t)
	if got := sc.must(t, "neuraphage_bus_backlog_events"); got < 6 {
		t.Errorf("bus_backlog_events = %v, want at least the 6 events the slow reader left", got)
	}
	if got := sc.must(t, "neuraphage_bus_subscribers"); got < 2 {
		t.Errorf("bus_subscribers = %v, want the collector's and the slow one", got)
	}
}

type failing struct{}

func (failing) WriteText(context.Context, *bytes.Buffer) error { return errors.New("disk on fire") }

func TestHandler(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	srv := httptest.NewServer(Handler(f.c, nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ContentType {
		t.Fatalf("GET = %s, %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	mustParse(t, body.String())

	resp, err = http.Post(srv.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST = %s, want 405", resp.Status)
	}

	bad := httptest.NewServer(Handler(failing{}, nil))
	defer bad.Close()
	resp, err = http.Get(bad.URL)
	if err != nil {
		t.Fatal(err)
	}
	body.Reset()
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body.String(), "disk on fire") {
		t.Errorf("failing scrape = %s %q, want 500 with the error", resp.Status, body.String())
	}
}
