package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The agent runtime's part of the suite: checkpoints, conversations, the
// cost ledger, learnings and injection kinds.

func entry(turn int, m llm.Message) store.Entry {
	return store.Entry{Turn: turn, At: t0.Add(time.Duration(turn) * time.Second), Message: m}
}

func assistantCall(id, name, input string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		llm.TextPart("reading it"),
		llm.ToolCallPart(llm.ToolCall{ID: id, Name: name, Input: json.RawMessage(input)}),
	}}
}

func toolResult(id, content string, isErr bool) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
		llm.ToolResultPart(llm.ToolResult{CallID: id, Content: content, IsError: isErr}),
	}}
}

// withSeq returns es numbered from first.
func withSeq(first int, es ...store.Entry) []store.Entry {
	out := make([]store.Entry, len(es))
	for i, e := range es {
		e.Seq = first + i
		out[i] = e
	}
	return out
}

func wantConversation(t *testing.T, s store.Store, id task.ID, want []store.Entry) {
	t.Helper()
	ctx := context.Background()
	got, err := s.Conversation(ctx, id, 0)
	if err != nil {
		t.Fatalf("Conversation(%s): %v", id, err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Conversation(%s) (-want +got):\n%s", id, diff)
	}
	n, err := s.ConversationLen(ctx, id)
	if err != nil || n != len(want) {
		t.Errorf("ConversationLen(%s) = %d, %v; want %d", id, n, err, len(want))
	}
}

func testCheckpointConversation(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk)
	wantConversation(t, s, tk.ID, nil)

	first := []store.Entry{
		entry(0, llm.UserText("add token expiry checks")),
		entry(1, assistantCall("call-1", "read_file", `{"path":"auth.go"}`)),
		entry(1, toolResult("call-1", "package auth", false)),
	}
	got, evs, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: tk.ID, From: 0, Entries: first})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 0 {
		t.Errorf("Checkpoint without events returned %+v", evs)
	}
	// Without Mutate the task is returned as stored.
	if diff := cmp.Diff(tk, got); diff != "" {
		t.Errorf("Checkpoint task (-want +got):\n%s", diff)
	}
	wantConversation(t, s, tk.ID, withSeq(0, first...))

	second := []store.Entry{entry(2, toolResult("call-2", "no such file", true))}
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: tk.ID, From: 3, Entries: second}); err != nil {
		t.Fatal(err)
	}
	all := append(withSeq(0, first...), withSeq(3, second...)...)
	wantConversation(t, s, tk.ID, all)
	tail, err := s.Conversation(ctx, tk.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all[2:], tail); diff != "" {
		t.Errorf("Conversation(from 2) (-want +got):\n%s", diff)
	}
	if past, err := s.Conversation(ctx, tk.ID, 10); err != nil || len(past) != 0 {
		t.Errorf("Conversation(from past the end) = %v, %v; want nothing", past, err)
	}

	// A stale length, behind or ahead, is a conflict and changes nothing.
	for _, from := range []int{0, 3, 5} {
		_, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: tk.ID, From: from, Entries: second},
			event.New(t0, tk.ID, futureKind{X: -1}))
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("Checkpoint(from %d of 4) error = %v, want ErrConflict", from, err)
		}
	}
	_, _, err = s.Checkpoint(ctx, store.Checkpoint{TaskID: tk.ID, From: 2, Replace: true, Entries: second})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("Replace with a stale length error = %v, want ErrConflict", err)
	}
	wantConversation(t, s, tk.ID, all)

	// Replace swaps the whole conversation for a shorter one, from seq 0.
	summary := []store.Entry{entry(3, llm.UserText("summary: auth.go read, config missing")), entry(3, llm.UserText("go on"))}
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: tk.ID, From: 4, Replace: true, Entries: summary}); err != nil {
		t.Fatal(err)
	}
	wantConversation(t, s, tk.ID, withSeq(0, summary...))
	// And appending continues after it.
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: tk.ID, From: 2, Entries: first[:1]}); err != nil {
		t.Fatal(err)
	}
	wantConversation(t, s, tk.ID, append(withSeq(0, summary...), withSeq(2, first[:1]...)...))

	// Another task's conversation is its own.
	other := newTask(t, "t-bbbbb", "b", nil)
	mustCreate(t, s, other)
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: other.ID, From: 0, Entries: second}); err != nil {
		t.Fatal(err)
	}
	wantConversation(t, s, other.ID, withSeq(0, second...))
	if n, err := s.ConversationLen(ctx, tk.ID); err != nil || n != 3 {
		t.Errorf("ConversationLen(a) = %d, %v; want 3", n, err)
	}

	// Unknown tasks.
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: "t-zzzzz", Entries: first}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Checkpoint(unknown task) error = %v, want ErrNotFound", err)
	}
	if _, err := s.Conversation(ctx, "t-zzzzz", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Conversation(unknown task) error = %v, want ErrNotFound", err)
	}
	if _, err := s.ConversationLen(ctx, "t-zzzzz"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ConversationLen(unknown task) error = %v, want ErrNotFound", err)
	}
	if n := len(rec.events()); n != 2 {
		t.Errorf("published %d events, want the 2 creations", n)
	}
}

func testCheckpointDelivery(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	a, b := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil)
	mustCreate(t, s, a)
	mustCreate(t, s, b)
	enqueue := func(id task.ID, text string) inject.Injection {
		t.Helper()
		inj, _, err := s.Enqueue(ctx, inject.Injection{TaskID: id, Source: "user", Text: text, CreatedAt: t0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return inj
	}
	i1, i2, j1 := enqueue(a.ID, "one"), enqueue(a.ID, "two"), enqueue(b.ID, "for b")
	deliveredAt := t0.Add(time.Hour)
	cp := func(from int, ids ...int64) store.Checkpoint {
		return store.Checkpoint{
			TaskID: a.ID, From: from, Entries: []store.Entry{entry(from, llm.UserText(fmt.Sprint(ids)))},
			Delivered: ids, DeliveredAt: deliveredAt,
			Charges: []store.Charge{{At: t0, Provider: "p", Model: "m", CostUSD: 0.5}},
		}
	}
	receipt := event.New(t0, a.ID, futureKind{X: 1})
	if _, evs, err := s.Checkpoint(ctx, cp(0, i1.ID), receipt); err != nil || len(evs) != 1 {
		t.Fatalf("delivering %d = %v, %v", i1.ID, evs, err)
	}
	pendingIDs := func(id task.ID) []int64 {
		t.Helper()
		p, err := s.Pending(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, inj := range p {
			ids = append(ids, inj.ID)
		}
		return ids
	}
	if diff := cmp.Diff([]int64{i2.ID}, pendingIDs(a.ID)); diff != "" {
		t.Errorf("Pending(a) after delivery (-want +got):\n%s", diff)
	}
	published := len(rec.events())

	// Every refused delivery commits nothing: no entry, no charge, no event,
	// no injection marked.
	for _, tc := range []struct {
		name string
		cp   store.Checkpoint
		err  error
	}{
		{"delivered twice", cp(1, i1.ID), store.ErrConflict},
		{"twice in one checkpoint", cp(1, i2.ID, i2.ID), store.ErrConflict},
		{"another task's", cp(1, i2.ID, j1.ID), store.ErrNotFound},
		{"unknown", cp(1, i2.ID, 9999), store.ErrNotFound},
	} {
		if _, _, err := s.Checkpoint(ctx, tc.cp, receipt); !errors.Is(err, tc.err) {
			t.Errorf("%s: error = %v, want %v", tc.name, err, tc.err)
		}
		if n, err := s.ConversationLen(ctx, a.ID); err != nil || n != 1 {
			t.Errorf("%s: conversation length = %d, %v; want 1", tc.name, n, err)
		}
	}
	if diff := cmp.Diff([]int64{i2.ID}, pendingIDs(a.ID)); diff != "" {
		t.Errorf("Pending(a) after refused deliveries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{j1.ID}, pendingIDs(b.ID)); diff != "" {
		t.Errorf("Pending(b) after refused deliveries (-want +got):\n%s", diff)
	}
	if usd, err := s.Spent(ctx, time.Time{}); err != nil || usd != 0.5 {
		t.Errorf("Spent after refused checkpoints = %v, %v; want 0.5", usd, err)
	}
	if n := len(rec.events()); n != published {
		t.Errorf("refused checkpoints published %d events", n-published)
	}

	// Racing checkpoints delivering the same injection: exactly one wins.
	const racers = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for range racers {
		wg.Go(func() {
			_, _, err := s.Checkpoint(ctx, cp(1, i2.ID))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("losing racer error = %v, want ErrConflict", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d of %d racing checkpoints delivered the same injection, want 1", wins, racers)
	}
	if n, err := s.ConversationLen(ctx, a.ID); err != nil || n != 2 {
		t.Errorf("conversation length after the race = %d, %v; want 2", n, err)
	}
	if ids := pendingIDs(a.ID); len(ids) != 0 {
		t.Errorf("Pending(a) after the race = %v, want empty", ids)
	}
}

func testCheckpointMutate(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk) // event 1
	inj, _, err := s.Enqueue(ctx, inject.Injection{TaskID: tk.ID, Source: "user", Text: "hi", CreatedAt: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	charge := store.Charge{At: t0, Provider: "p", Model: "m", InputTokens: 100, OutputTokens: 10, CostUSD: 0.25}
	start := transition(task.Running, "")
	mutate := func(tk *task.Task) ([]event.Event, error) {
		evs, err := start(tk)
		tk.Usage.Iterations++
		tk.Usage.CostUSD += charge.CostUSD
		return append(evs, event.New(t0, tk.ID, futureKind{X: 1})), err
	}

	// A failing mutation takes the whole checkpoint with it.
	_, _, err = s.Checkpoint(ctx, store.Checkpoint{
		TaskID: tk.ID, Entries: []store.Entry{entry(0, llm.UserText("hi"))},
		Delivered: []int64{inj.ID}, Charges: []store.Charge{charge},
		Mutate: func(tk *task.Task) ([]event.Event, error) {
			tk.Usage.Iterations = 99
			return []event.Event{event.New(t0, tk.ID, futureKind{X: -1})}, errors.New("refused")
		},
	}, event.New(t0, tk.ID, futureKind{X: -2}))
	if err == nil || err.Error() != "refused" {
		t.Fatalf("failing mutation error = %v, want refused", err)
	}
	if stored, err := s.GetTask(ctx, tk.ID); err != nil || stored.Usage.Iterations != 0 {
		t.Errorf("failed checkpoint changed the task: %+v, %v", stored.Usage, err)
	}
	wantConversation(t, s, tk.ID, nil)
	if p, err := s.Pending(ctx, tk.ID); err != nil || len(p) != 1 {
		t.Errorf("failed checkpoint delivered: pending = %v, %v", p, err)
	}
	if usd, err := s.Spent(ctx, time.Time{}); err != nil || usd != 0 {
		t.Errorf("failed checkpoint charged: spent = %v, %v", usd, err)
	}

	got, evs, err := s.Checkpoint(ctx, store.Checkpoint{
		TaskID: tk.ID, Entries: []store.Entry{entry(0, llm.UserText("hi"))},
		Delivered: []int64{inj.ID}, DeliveredAt: t0, Charges: []store.Charge{charge}, Mutate: mutate,
	}, event.New(t0, tk.ID, futureKind{X: 2}), event.New(t0, tk.ID, futureKind{X: 3}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != task.Running || got.Usage.Iterations != 1 || got.Usage.CostUSD != 0.25 {
		t.Errorf("checkpointed task: status %s usage %+v", got.Status, got.Usage)
	}
	stored, err := s.GetTask(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, stored); diff != "" {
		t.Errorf("stored task differs from returned (-returned +stored):\n%s", diff)
	}
	// The mutation's events first, then evs, with the next IDs (the failed
	// checkpoint used none).
	type idKind struct {
		ID   int64
		Kind event.Kind
	}
	wantEvs := []idKind{{2, event.KindTaskStatus}, {3, "future.thing"}, {4, "future.thing"}, {5, "future.thing"}}
	summarize := func(evs []event.Event) []idKind {
		out := make([]idKind, len(evs))
		for i, e := range evs {
			out[i] = idKind{e.ID, e.Kind}
		}
		return out
	}
	if diff := cmp.Diff(wantEvs, summarize(evs)); diff != "" {
		t.Errorf("committed events (-want +got):\n%s", diff)
	}
	for i, x := range []int{1, 2, 3} {
		if p, ok := evs[i+1].Payload.(futureKind); !ok || p.X != x {
			t.Errorf("event %d payload = %#v, want futureKind{%d}", evs[i+1].ID, evs[i+1].Payload, x)
		}
	}
	if diff := cmp.Diff(evs, rec.events()[1:]); diff != "" {
		t.Errorf("published events differ from returned (-returned +published):\n%s", diff)
	}
	logged, err := s.ReadEvents(ctx, event.Query{AfterID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantEvs, summarize(logged)); diff != "" {
		t.Errorf("logged events (-want +got):\n%s", diff)
	}
}

func testCosts(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openFresh(t, open)
	a, b, idle := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil), newTask(t, "t-ccccc", "c", nil)
	for _, tk := range []task.Task{a, b, idle} {
		mustCreate(t, s, tk)
	}
	day := func(d, hour int) time.Time { return time.Date(2026, 11, 20+d, hour, 0, 0, 0, time.UTC) }
	// 23:30 at UTC+2 is 21:30 UTC the same day; 01:00 at UTC+2 is the day before in UTC.
	east := time.FixedZone("UTC+2", 2*3600)
	charges := []struct {
		task task.ID
		c    store.Charge
	}{
		{a.ID, store.Charge{At: day(1, 9), Provider: "anthropic", Model: "claude", InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 500, CostUSD: 0.5, DurationMs: 1200}},
		{a.ID, store.Charge{At: time.Date(2026, 11, 21, 23, 30, 0, 0, east), Provider: "openai", Model: "gpt", InputTokens: 200, OutputTokens: 20, CostUSD: 0.25}},
		{a.ID, store.Charge{At: day(2, 9), Provider: "anthropic", Model: "claude", InputTokens: 2000, OutputTokens: 200, CacheWriteTokens: 300, CostUSD: 1}},
		{b.ID, store.Charge{At: time.Date(2026, 11, 23, 1, 0, 0, 0, east), Provider: "openai", Model: "gpt", InputTokens: 400, OutputTokens: 40, CostUSD: 0.125}},
		// The store sets the task: a charge naming another is still b's.
		{b.ID, store.Charge{TaskID: a.ID, At: day(3, 9), Provider: "anthropic", Model: "claude", InputTokens: 8000, OutputTokens: 800, CostUSD: 2}},
	}
	for _, c := range charges {
		if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: c.task, Charges: []store.Charge{c.c}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		q    store.CostQuery
		want []store.CostRow
	}{
		{"total", store.CostQuery{}, []store.CostRow{
			{Key: "total", Calls: 5, InputTokens: 11600, OutputTokens: 1160, CacheReadTokens: 500, CacheWriteTokens: 300, CostUSD: 3.875},
		}},
		{"by day", store.CostQuery{By: "day"}, []store.CostRow{
			{Key: "2026-11-21", Calls: 2, InputTokens: 1200, OutputTokens: 120, CacheReadTokens: 500, CostUSD: 0.75},
			{Key: "2026-11-22", Calls: 2, InputTokens: 2400, OutputTokens: 240, CacheWriteTokens: 300, CostUSD: 1.125},
			{Key: "2026-11-23", Calls: 1, InputTokens: 8000, OutputTokens: 800, CostUSD: 2},
		}},
		{"by task", store.CostQuery{By: "task"}, []store.CostRow{
			{Key: "t-aaaaa", Calls: 3, InputTokens: 3200, OutputTokens: 320, CacheReadTokens: 500, CacheWriteTokens: 300, CostUSD: 1.75},
			{Key: "t-bbbbb", Calls: 2, InputTokens: 8400, OutputTokens: 840, CostUSD: 2.125},
		}},
		{"by model", store.CostQuery{By: "model"}, []store.CostRow{
			{Key: "anthropic/claude", Calls: 3, InputTokens: 11000, OutputTokens: 1100, CacheReadTokens: 500, CacheWriteTokens: 300, CostUSD: 3.5},
			{Key: "openai/gpt", Calls: 2, InputTokens: 600, OutputTokens: 60, CostUSD: 0.375},
		}},
		{"since, by model", store.CostQuery{By: "model", Since: day(2, 0)}, []store.CostRow{
			{Key: "anthropic/claude", Calls: 2, InputTokens: 10000, OutputTokens: 1000, CacheWriteTokens: 300, CostUSD: 3},
			{Key: "openai/gpt", Calls: 1, InputTokens: 400, OutputTokens: 40, CostUSD: 0.125},
		}},
		{"one task, by day", store.CostQuery{TaskID: b.ID, By: "day"}, []store.CostRow{
			{Key: "2026-11-22", Calls: 1, InputTokens: 400, OutputTokens: 40, CostUSD: 0.125},
			{Key: "2026-11-23", Calls: 1, InputTokens: 8000, OutputTokens: 800, CostUSD: 2},
		}},
		{"one task since", store.CostQuery{TaskID: a.ID, Since: day(1, 12)}, []store.CostRow{
			{Key: "total", Calls: 2, InputTokens: 2200, OutputTokens: 220, CacheWriteTokens: 300, CostUSD: 1.25},
		}},
		{"total of nothing", store.CostQuery{TaskID: idle.ID}, []store.CostRow{{Key: "total"}}},
		{"groups of nothing", store.CostQuery{TaskID: idle.ID, By: "day"}, nil},
	} {
		got, err := s.Costs(ctx, tc.q)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(store.CostRow{}, "LastID")); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if _, err := s.Costs(ctx, store.CostQuery{By: "week"}); err == nil {
		t.Error("Costs(by week) succeeded, want an error")
	}
	for _, tc := range []struct {
		since time.Time
		want  float64
	}{
		{time.Time{}, 3.875},
		{day(1, 9), 3.875},
		{day(2, 0), 3.125},
		{day(3, 9), 2},
		{day(3, 10), 0},
	} {
		if got, err := s.Spent(ctx, tc.since); err != nil || got != tc.want {
			t.Errorf("Spent(%v) = %v, %v; want %v", tc.since, got, err, tc.want)
		}
	}
	testCostsAfter(t, s, b.ID)
}

// testCostsAfter: running sums kept from AfterID and LastID equal the
// whole ledger's, reading only the charges added since.
func testCostsAfter(t *testing.T, s store.Store, id task.ID) {
	t.Helper()
	ctx := context.Background()
	all, err := s.Costs(ctx, store.CostQuery{By: "model"})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, r := range all {
		if r.LastID <= 0 {
			t.Fatalf("Costs row %s has LastID %d, want the largest charge ID", r.Key, r.LastID)
		}
		last = max(last, r.LastID)
	}
	if none, err := s.Costs(ctx, store.CostQuery{By: "model", AfterID: last}); err != nil || len(none) != 0 {
		t.Fatalf("Costs(after the last charge) = %+v, %v; want no rows", none, err)
	}
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: id, Charges: []store.Charge{
		{Provider: "openai", Model: "gpt", InputTokens: 10, OutputTokens: 1, CostUSD: 0.5},
		{Provider: "openai", Model: "gpt", InputTokens: 20, OutputTokens: 2, CostUSD: 0.25},
	}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Costs(ctx, store.CostQuery{By: "model", AfterID: last})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.CostRow{{Key: "openai/gpt", Calls: 2, InputTokens: 30, OutputTokens: 3, CostUSD: 0.75, LastID: last + 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Costs(AfterID %d) (-want +got):\n%s", last, diff)
	}
}

func testLearnings(t *testing.T, open Opener) {
	ctx := context.Background()
	s, rec := openFresh(t, open)
	a, b := newTask(t, "t-aaaaa", "a", nil), newTask(t, "t-bbbbb", "b", nil)
	mustCreate(t, s, a)
	mustCreate(t, s, b)
	record := func(l store.Learning) []event.Event {
		return []event.Event{event.New(l.CreatedAt, l.TaskID, futureKind{X: int(l.ID)})}
	}
	var stored []store.Learning
	for i, l := range []store.Learning{
		{TaskID: a.ID, Summary: "tests need CGO_ENABLED=0", Detail: "the race detector build fails otherwise", Tags: []string{"build", "ci"}, CreatedAt: t0},
		{TaskID: b.ID, Summary: "the auth package keeps its keys in testdata", CreatedAt: t0.Add(time.Minute)},
		{TaskID: a.ID, Summary: "gofmt runs in CI", Tags: []string{"ci"}, CreatedAt: t0.Add(2 * time.Minute)},
	} {
		got, evs, err := s.RecordLearning(ctx, l, record)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID <= 0 || (i > 0 && got.ID <= stored[i-1].ID) {
			t.Errorf("learning %d has id %d, want increasing ids", i, got.ID)
		}
		if len(evs) != 1 || evs[0].ID <= 0 || evs[0].Payload.(futureKind).X != int(got.ID) {
			t.Errorf("RecordLearning events = %+v, want one built from id %d", evs, got.ID)
		}
		// Stored as explicit (the default kind), with its task as its one
		// source.
		l.ID, l.Kind, l.UpdatedAt = got.ID, "explicit", l.CreatedAt
		l.Sources = []store.LearningSource{{TaskID: l.TaskID, Kind: "explicit", At: l.CreatedAt}}
		if diff := cmp.Diff(l, got); diff != "" {
			t.Errorf("RecordLearning returned (-want +got):\n%s", diff)
		}
		stored = append(stored, got)
	}
	published := len(rec.events())
	if _, _, err := s.RecordLearning(ctx, store.Learning{TaskID: "t-zzzzz", Summary: "x"}, record); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RecordLearning(unknown task) error = %v, want ErrNotFound", err)
	}
	if _, _, err := s.RecordLearning(ctx, store.Learning{TaskID: a.ID}, record); err == nil {
		t.Error("RecordLearning accepted an empty summary")
	}
	if n := len(rec.events()); n != published {
		t.Errorf("refused learnings published %d events", n-published)
	}
	for _, tc := range []struct {
		name string
		q    store.LearningQuery
		want []store.Learning
	}{
		{"all", store.LearningQuery{}, stored},
		{"one task", store.LearningQuery{TaskID: a.ID}, []store.Learning{stored[0], stored[2]}},
		{"after", store.LearningQuery{AfterID: stored[0].ID}, stored[1:]},
		{"after, one task", store.LearningQuery{TaskID: a.ID, AfterID: stored[0].ID}, stored[2:]},
		{"limit", store.LearningQuery{Limit: 2}, stored[:2]},
		{"after the last", store.LearningQuery{AfterID: stored[2].ID}, nil},
	} {
		got, err := s.Learnings(ctx, tc.q)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Learnings(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
}

func testInjectionKinds(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openFresh(t, open)
	tk := newTask(t, "t-aaaaa", "a", nil)
	mustCreate(t, s, tk)
	var want []inject.Injection
	for _, inj := range []inject.Injection{
		{TaskID: tk.ID, Source: "user", Text: "plain", CreatedAt: t0},
		{TaskID: tk.ID, Source: "watcher", Kind: "interjection", Attrs: map[string]string{"severity": "high", "from": "watcher"}, Text: "stop", Urgent: true, CreatedAt: t0},
		{TaskID: tk.ID, Source: "syncer", Kind: "sync", Attrs: map[string]string{}, Text: "main moved", CreatedAt: t0},
		// The typed fields come back typed, the free-form attributes as
		// they were.
		{TaskID: tk.ID, Source: inject.FromMainWatcher, Kind: inject.Rebase, Urgency: inject.Blocking, Attrs: map[string]string{"main": "main", "behind": "2"},
			Text: "main moved", Urgent: true, CreatedAt: t0},
		{TaskID: tk.ID, Source: inject.FromMainWatcher, Kind: inject.Rebase, Urgency: inject.Blocking, Outcome: inject.Conflict, Text: "conflicts", CreatedAt: t0},
		{TaskID: tk.ID, Source: inject.FromSyncer, Kind: inject.Sync, Urgency: inject.FYI, Attrs: map[string]string{"from": "t-bbbbb"}, Text: "fyi", CreatedAt: t0},
	} {
		got, _, err := s.Enqueue(ctx, inj, nil)
		if err != nil {
			t.Fatal(err)
		}
		inj.ID = got.ID
		if inj.Kind == "" {
			inj.Kind = "message"
		}
		if diff := cmp.Diff(inj, got); diff != "" {
			t.Errorf("Enqueue returned (-want +got):\n%s", diff)
		}
		want = append(want, inj)
	}
	pending, err := s.Pending(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, pending, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Pending (-want +got):\n%s", diff)
	}
}
