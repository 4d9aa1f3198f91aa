package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// BenchmarkLearningToQueue measures the time from a learning's observation
// to each related recipient's injection, with 100 running tasks: the
// source, 10 tasks related to it by tags and 89 unrelated ones. It reports
// the latencies' p50, p99 and max in milliseconds.
//
// In rules and persona the observation is the executor recording a
// record_learning call (the store's RecordLearning, whose commit publishes
// agent.learning); the rules decide, or the syncer persona on a scripted
// model server without latency. In model-pass and model-pass-persona it is
// the executor recording the source's agent.turn.ended, and the learning
// comes from the turn-end model pass (llm_extract) on a scripted model
// server without latency; then the rules or the persona decide.
func BenchmarkLearningToQueue(b *testing.B) {
	b.Run("rules", func(b *testing.B) { benchLearningToQueue(b, false) })
	b.Run("persona", func(b *testing.B) { benchLearningToQueue(b, true) })
	b.Run("model-pass", func(b *testing.B) { benchTurnToQueue(b, false) })
	b.Run("model-pass-persona", func(b *testing.B) { benchTurnToQueue(b, true) })
}

const (
	benchRelated   = 10
	benchUnrelated = 89
)

func benchRelatedID(i int) task.ID { return task.ID(fmt.Sprintf("t-r%04d", i)) }

// benchTasks adds the benchmark's running tasks and returns the source.
func benchTasks(h *harness) *agent {
	src := h.task("t-s0000", "Implement JWT token validation endpoint", []string{"auth", "api", "jwt"}, task.Running, nil)
	for i := range benchRelated {
		h.task(benchRelatedID(i), fmt.Sprintf("Build JWT auth client number %d", i), []string{"auth", "jwt"}, task.Running, nil)
	}
	for i := range benchUnrelated {
		h.task(task.ID(fmt.Sprintf("t-x%04d", i)), fmt.Sprintf("Polish the greeting banner variant %d", i), []string{"ui"}, task.Running, nil)
	}
	return src
}

// arrival is one injection: its learning and when it was queued.
type arrival struct {
	learning string
	at       time.Time
}

// benchArrivals tells of every injection of h.
func benchArrivals(h *harness) <-chan arrival {
	arrivals := make(chan arrival, 1024)
	h.act.OnInject = func(inj inject.Injection, at time.Time) { arrivals <- arrival{inj.Attrs["learning"], at} }
	return arrivals
}

// benchConfig lifts the rate limits: every learning goes out at once.
func benchConfig() Config {
	cfg := baseConfig()
	cfg.MaxPerMinute, cfg.Cooldown, cfg.MaxPending = 1<<30, 0, 1<<20
	return cfg
}

func benchLearningToQueue(b *testing.B, persona bool) {
	h := newHarness(b, false)
	src := benchTasks(h)
	arrivals := benchArrivals(h)
	h.start(benchConfig(), func(o *Options) {
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
	if n := h.act.Count(); n != b.N*benchRelated {
		b.Fatalf("%d injections, want %d", n, b.N*benchRelated)
	}
	reportLatency(b, lat)
}

// reportLatency reports the p50, p99 and max of the latencies in ms.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(quantile(lat, 0.50)), "p50-ms")
	b.ReportMetric(ms(quantile(lat, 0.99)), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
}

// benchTurnToQueue is benchLearningToQueue with the learning found by the
// turn-end model pass: each iteration the source runs a turn saying a new
// finding (turn.started, the text, turn.ended), the scripted model returns
// it as a learning, and the related tasks hear it. The clock starts when
// the executor records the turn.ended.
func benchTurnToQueue(b *testing.B, persona bool) {
	h := newHarness(b, false)
	src := benchTasks(h)
	arrivals := benchArrivals(h)
	pass, srv := modelPass(b, benchPassScript(), nil)
	cfg := benchConfig()
	cfg.LLMExtract = true
	s := h.start(cfg, func(o *Options) {
		o.Extractor = pass
		if persona {
			o.Decider, _ = personaDecider(b, benchScript())
		}
	})
	lat := make([]time.Duration, 0, b.N*benchRelated)
	seen := map[string]bool{}
	b.ResetTimer()
	for i := range b.N {
		src.Turn++
		h.pub(src.id, event.TurnStarted{Turn: src.Turn, Engine: "native", Model: "claude-test"})
		h.pub(src.id, event.Text{Turn: src.Turn, Text: burstSummary(i)})
		observed := time.Now()
		h.pub(src.id, event.TurnEnded{Turn: src.Turn, StopReason: "end_turn", Attempts: 1, DurationMs: 900})
		id := ""
		for got := 0; got < benchRelated; {
			select {
			case a := <-arrivals:
				switch {
				case id == "" && seen[a.learning]:
					b.Fatalf("turn %d: an injection of learning %s, relayed before", src.Turn, a.learning)
				case id == "":
					id, seen[a.learning] = a.learning, true
				case a.learning != id:
					b.Fatalf("turn %d: an injection of learning %s while waiting for %s", src.Turn, a.learning, id)
				}
				lat = append(lat, a.at.Sub(observed))
				got++
			case <-time.After(30 * time.Second):
				b.Fatalf("turn %d reached %d of %d related tasks in 30s (stats %+v)", src.Turn, got, benchRelated, s.Stats())
			}
		}
	}
	b.StopTimer()
	if n := h.act.Count(); n != b.N*benchRelated {
		b.Fatalf("%d injections, want %d", n, b.N*benchRelated)
	}
	if st := s.Stats(); st.ExtractCalls != uint64(b.N) || st.ExtractFailures != 0 || st.Learnings["llm"] != uint64(b.N) {
		b.Fatalf("stats = %+v, want %d passes, each with its learning", st, b.N)
	}
	if n := len(srv.Requests()); n != b.N {
		b.Fatalf("%d model pass requests, want %d", n, b.N)
	}
	reportLatency(b, lat)
}

// benchPassScript is the turn-end model pass returning the turn's text as
// its one learning.
func benchPassScript() *llmtest.Script {
	return &llmtest.Script{Conversations: []llmtest.Conversation{{Name: "extract",
		Match: llmtest.Match{System: modelPassSystem, Capture: map[string]string{"finding": `assistant: ([^\n"]+)`}},
		Steps: []llmtest.Step{{Text: `{"learnings": [{"summary": "${finding}", "tags": ["jwt"]}]}`}}}}}
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
