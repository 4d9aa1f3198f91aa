package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/store/storetest"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func openBench(b *testing.B) *sqlite.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkEventLogAppend measures persisted events per second through the
// group-commit writer: producers emit without waiting (the hot path), and the
// clock stops only when everything is committed.
func BenchmarkEventLogAppend(b *testing.B) {
	for _, producers := range []int{1, 16} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			s := openBench(b)
			ctx := context.Background()
			e := event.New(time.Now(), "t-aaaaa", event.TaskMessage{InjectionID: 1, Source: "bench", Text: "a short observation of about fifty bytes"})
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for i := p; i < b.N; i += producers {
						if err := s.EmitEvents(ctx, e); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkAppendWaited measures acknowledged appends (each caller waits for
// its commit) from 64 concurrent callers: group commit shares transactions.
func BenchmarkAppendWaited(b *testing.B) {
	s := openBench(b)
	ctx := context.Background()
	e := event.New(time.Now(), "t-aaaaa", event.TaskStatus{From: task.Queued, To: task.Running})
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.AppendEvents(ctx, e); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkListTasks10k reads 10,000 tasks from the store.
func BenchmarkListTasks10k(b *testing.B) {
	s := openBench(b)
	storetest.Populate(b, s, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ts, err := s.ListTasks(ctx, store.ListOptions{})
		if err != nil || len(ts) != 10_000 {
			b.Fatalf("ListTasks = %d tasks, %v", len(ts), err)
		}
	}
}

// BenchmarkListSummaries10k reads what listings show of 10,000 tasks from
// the store's listing columns, whole and as a page of 50 from the middle:
// typed (every column) and as the daemon serves them (json: the listing
// column).
func BenchmarkListSummaries10k(b *testing.B) {
	s := openBench(b)
	storetest.Populate(b, s, 10_000)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		opts store.ListOptions
		want int
	}{
		{"all", store.ListOptions{}, 10_000},
		{"unfinished", store.ListOptions{Statuses: []task.Status{task.Queued, task.Running, task.Waiting, task.Paused, task.Merging}}, 10_000},
		{"page50", store.ListOptions{After: "t-005000", Limit: 50}, 50},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ts, err := s.ListSummaries(ctx, bc.opts)
				if err != nil || len(ts) != bc.want {
					b.Fatalf("ListSummaries = %d tasks, %v", len(ts), err)
				}
			}
		})
		b.Run(bc.name+"/json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := s.ListSummariesJSON(ctx, bc.opts)
				if err != nil || p.N != bc.want {
					b.Fatalf("ListSummariesJSON = %d tasks, %v", p.N, err)
				}
			}
		})
	}
}

// BenchmarkCheckpoint measures acknowledged checkpoints per second, each one
// conversation entry and one charge: the store's share of every model turn.
// With several tasks, each task's runner checkpoints in turn and group commit
// shares transactions between them; "mutate" also updates the task's usage,
// as an executor does.
func BenchmarkCheckpoint(b *testing.B) {
	msg := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		llm.TextPart("The middleware reads the token but never checks its expiry; I will add the check and a test."),
		llm.ToolCallPart(llm.ToolCall{ID: "toolu_01", Name: "read_file", Input: json.RawMessage(`{"path":"internal/auth/middleware.go"}`)}),
	}}
	charge := store.Charge{Provider: "anthropic", Model: "claude-sonnet-4-5", InputTokens: 12_000, OutputTokens: 400,
		CacheReadTokens: 10_000, CostUSD: 0.0123, DurationMs: 2300}
	usage := func(t *task.Task) ([]event.Event, error) {
		t.Usage.Iterations++
		t.Usage.InputTokens += charge.InputTokens
		t.Usage.OutputTokens += charge.OutputTokens
		t.Usage.CostUSD += charge.CostUSD
		return nil, nil
	}
	for _, bc := range []struct {
		tasks  int
		mutate bool
	}{{1, false}, {16, false}, {16, true}} {
		b.Run(fmt.Sprintf("tasks=%d/mutate=%t", bc.tasks, bc.mutate), func(b *testing.B) {
			s := openBench(b)
			ctx := context.Background()
			storetest.Populate(b, s, bc.tasks)
			now := time.Now()
			var mutate store.Mutation
			if bc.mutate {
				mutate = usage
			}
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range bc.tasks {
				wg.Go(func() {
					id := task.ID(fmt.Sprintf("t-%06d", w))
					from := 0
					for i := w; i < b.N; i += bc.tasks {
						if _, _, err := s.Checkpoint(ctx, store.Checkpoint{
							TaskID: id, From: from, Entries: []store.Entry{{Turn: from, At: now, Message: msg}},
							Charges: []store.Charge{charge}, Mutate: mutate,
						}); err != nil {
							b.Error(err)
							return
						}
						from++
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checkpoints/s")
		})
	}
}

// BenchmarkSpent measures the budget check the executor makes before each
// dispatch, over a ledger of 100,000 charges spread over 100 days: since the
// start of the last day, and over everything.
func BenchmarkSpent(b *testing.B) {
	s := openBench(b)
	ctx := context.Background()
	storetest.Populate(b, s, 1)
	const days, perDay = 100, 1000
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := range days {
		charges := make([]store.Charge, perDay)
		for i := range charges {
			charges[i] = store.Charge{At: start.Add(time.Duration(d)*24*time.Hour + time.Duration(i)*time.Minute),
				Provider: "anthropic", Model: "claude", CostUSD: 0.01}
		}
		if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: "t-000000", Charges: charges}); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name  string
		since time.Time
	}{
		{"last-day", start.Add((days - 1) * 24 * time.Hour)},
		{"all", time.Time{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := s.Spent(ctx, bc.since); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCounts measures what every `daemon status` and dashboard poll
// asks of the store, over 10,000 tasks and 100,000 logged events.
func BenchmarkCounts(b *testing.B) {
	s := openBench(b)
	storetest.Populate(b, s, 10_000)
	ctx := context.Background()
	evs := make([]event.Event, 1000)
	for i := range evs {
		evs[i] = event.New(time.Now(), "t-000001", event.ToolResult{Turn: i, CallID: "c", Name: "glob"})
	}
	for range 100 {
		if _, err := s.AppendEvents(ctx, evs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		c, err := s.Counts(ctx)
		if err != nil || c.Events < 100_000 {
			b.Fatalf("Counts = %+v, %v", c, err)
		}
	}
}

// BenchmarkTurnReads measures the small reads around a model turn, each a
// statement of the read pool: the task, its conversation's length and
// last entries, and its returned messages.
func BenchmarkTurnReads(b *testing.B) {
	s := openBench(b)
	storetest.Populate(b, s, 200)
	ctx := context.Background()
	id := task.ID("t-000100")
	msg := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("I will read the middleware first.")}}
	for i := range 20 {
		if _, _, err := s.Checkpoint(ctx, store.Checkpoint{TaskID: id, From: i, Entries: []store.Entry{{Turn: i, Message: msg}}}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("GetTask", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.GetTask(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ConversationLen", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n, err := s.ConversationLen(ctx, id); err != nil || n != 20 {
				b.Fatalf("ConversationLen = %d, %v", n, err)
			}
		}
	})
	b.Run("ConversationTail", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if es, err := s.Conversation(ctx, id, 16); err != nil || len(es) != 4 {
				b.Fatalf("Conversation = %d entries, %v", len(es), err)
			}
		}
	})
	b.Run("Returned", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Returned(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
