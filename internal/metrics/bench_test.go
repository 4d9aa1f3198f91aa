package metrics

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/store"
)

// BenchmarkScrape1000Tasks: one scrape (the store's reads, the counters,
// the text) with 1,000 tasks, each with 10 model calls in the ledger over
// 4 models, and 50 open merge entries.
func BenchmarkScrape1000Tasks(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	for i := range 1000 {
		tk := f.task(b)
		charges := make([]store.Charge, 10)
		for j := range charges {
			charges[j] = store.Charge{Provider: "anthropic", Model: fmt.Sprintf("model-%d", (i+j)%4), InputTokens: 1000, OutputTokens: 100, CostUSD: 0.01}
		}
		if _, _, err := f.st.Checkpoint(ctx, store.Checkpoint{TaskID: tk.ID, Charges: charges}); err != nil {
			b.Fatal(err)
		}
		if i%20 == 0 {
			if _, _, err := f.st.EnqueueMerge(ctx, store.MergeEntry{TaskID: tk.ID, Repo: "/src", Branch: "b", Target: "main"}, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	sc := f.scrape(b)
	if got := sc.must(b, "neuraphage_tasks", "status", "queued"); got != 1000 {
		b.Fatalf("tasks{queued} = %v, want 1000", got)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		if err := f.c.WriteText(ctx, &buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/scrape")
}
