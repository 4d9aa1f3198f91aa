package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// BenchmarkLearningToQueue measures the time from a learning's observation
// (the executor recording a record_learning call: the store's
// RecordLearning, whose commit publishes agent.learning) to each related
// recipient's injection, with 100 running tasks: the source, 10 tasks
// related to it by tags and 89 unrelated ones. The rules decide, or the
// syncer persona on a scripted model server without latency. It reports
// the latencies' p50, p99 and max in milliseconds.
func BenchmarkLearningToQueue(b *testing.B) {
	b.Run("rules", func(b *testing.B) { benchLearningToQueue(b, false) })
	b.Run("persona", func(b *testing.B) { benchLearningToQueue(b, true) })
}

const (
	benchRelated   = 10
	benchUnrelated = 89
)

func benchRelatedID(i int) task.ID { return task.ID(fmt.Sprintf("t-r%04d", i)) }

func benchLearningToQueue(b *testing.B, persona bool) {
	h := newHarness(b, false)
	src := h.task("t-s0000", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil)
	for i := range benchRelated {
		h.task(benchRelatedID(i), fmt.Sprintf("Build JWT auth client number %d", i), []string{"auth", "jwt"}, task.Running, nil)
	}
	for i := range benchUnrelated {
		h.task(task.ID(fmt.Sprintf("t-x%04d", i)), fmt.Sprintf("Polish the greeting banner variant %d", i), []string{"ui"}, task.Running, nil)
	}
	type arrival struct {
		learning string
		at       time.Time
	}
	arrivals := make(chan arrival, 1024)
	h.act.onInject = func(inj executor.Injection, at time.Time) { arrivals <- arrival{inj.Attrs["learning"], at} }
	cfg := baseConfig()
	cfg.MaxPerMinute, cfg.Cooldown, cfg.MaxPending = 1<<30, 0, 1<<20
	h.start(cfg, func(o *Options) {
		if persona {
			o.Decider, _ = personaDecider(b, benchScript())
		}
	})
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N*benchRelated)
	b.ResetTimer()
	for i := range b.N {
		observed := time.Now()
		l, _, err := h.st.RecordLearning(ctx, store.Learning{TaskID: src.id, Summary: burstSummary(i), Tags: []string{"auth", "jwt"}, CreatedAt: observed.UTC()},
			func(sl store.Learning) []event.Event {
				return []event.Event{event.New(sl.CreatedAt, src.id, event.Learning{Turn: i + 1, LearningID: sl.ID, Summary: sl.Summary, Tags: sl.Tags})}
			})
		if err != nil {
			b.Fatal(err)
		}
		if l.Merged {
			b.Fatalf("learning %d merged with another", i)
		}
		id := itoa(l.ID)
		for got := 0; got < benchRelated; {
			select {
			case a := <-arrivals:
				if a.learning != id {
					b.Fatalf("an injection of learning %s while waiting for %s", a.learning, id)
				}
				lat = append(lat, a.at.Sub(observed))
				got++
			case <-time.After(30 * time.Second):
				b.Fatalf("learning %d reached %d of %d related tasks in 30s", i, got, benchRelated)
			}
		}
	}
	b.StopTimer()
	if n := h.act.count(); n != b.N*benchRelated {
		b.Fatalf("%d injections, want %d", n, b.N*benchRelated)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(quantile(lat, 0.50)), "p50-ms")
	b.ReportMetric(ms(quantile(lat, 0.99)), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
}

// quantile returns the q-quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// benchScript is the syncer persona naming the related tasks, helpful.
func benchScript() *llmtest.Script {
	var rs []string
	for i := range benchRelated {
		rs = append(rs, fmt.Sprintf(`{"task-id": %q, "relevance": "high", "urgency": "helpful", "message": "The API task found something about JWT endpoints."}`, benchRelatedID(i)))
	}
	return &llmtest.Script{Default: &llmtest.Conversation{Name: "syncer",
		Steps: []llmtest.Step{{Text: `{"recipients": [` + strings.Join(rs, ", ") + `]}`}}}}
}
