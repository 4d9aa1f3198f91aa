package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
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
