package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// run starts rt.Run(ctx, loop) and returns a channel closed when it has
// returned, and the cancel that ends it.
func run(t *testing.T, rt *Runtime, loop func(context.Context)) (done chan struct{}, cancel context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done = make(chan struct{})
	go func() {
		defer close(done)
		if err := rt.Run(ctx, loop); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	return done, cancel
}

func TestRunRestartsAPanickingLoopAfterItsBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var pauses []int
		rt := New(Options{Backoff: func(n int) time.Duration {
			pauses = append(pauses, n) // on Run's goroutine, read after synctest.Wait
			return time.Duration(n) * time.Second
		}})
		var starts atomic.Int32
		done, cancel := run(t, rt, func(ctx context.Context) {
			if starts.Add(1) <= 2 {
				panic("the loop blew up")
			}
			<-ctx.Done()
		})
		synctest.Wait()
		if n, st := starts.Load(), rt.Stats(); n != 1 || st.Restarts != 1 || !st.Running {
			t.Fatalf("at once: %d starts, stats %+v; want 1 start, 1 restart, running", n, st)
		}
		time.Sleep(time.Second - time.Nanosecond)
		synctest.Wait()
		if n := starts.Load(); n != 1 {
			t.Fatalf("before the first pause ended: %d starts, want 1", n)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if n := starts.Load(); n != 2 {
			t.Fatalf("after the first pause: %d starts, want 2", n)
		}
		time.Sleep(2 * time.Second) // the second pause is longer
		synctest.Wait()
		if n, st := starts.Load(), rt.Stats(); n != 3 || st.Restarts != 2 || st.Panics != 0 {
			t.Fatalf("after the second pause: %d starts, stats %+v; want 3 starts, 2 restarts", n, st)
		}
		if len(pauses) != 2 || pauses[0] != 1 || pauses[1] != 2 {
			t.Errorf("backoffs asked for %v, want [1 2]", pauses)
		}
		cancel()
		<-done
		if st := rt.Stats(); st.Running {
			t.Errorf("still running after Run returned: %+v", st)
		}
	})
}

func TestRunRestartsALoopWhoseFeedEnded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rt := New(Options{})
		var starts atomic.Int32
		done, cancel := run(t, rt, func(ctx context.Context) {
			if starts.Add(1) == 1 {
				return // the feed ended
			}
			<-ctx.Done()
		})
		time.Sleep(time.Second) // the default pause
		synctest.Wait()
		if n, st := starts.Load(), rt.Stats(); n != 2 || st.Restarts != 0 {
			t.Errorf("%d starts, stats %+v; want 2 starts and no restart counted (no crash)", n, st)
		}
		cancel()
		<-done
	})
}

func TestRunJoinsItsJobs(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rt := New(Options{})
		release, handled := make(chan struct{}), make(chan string, 1)
		done, cancel := run(t, rt, func(ctx context.Context) {
			rt.Go(ctx, func(ctx context.Context) func(context.Context) {
				return func(context.Context) { handled <- "first" }
			})
			rt.Go(ctx, func(ctx context.Context) func(context.Context) {
				<-release // a model call that outlives the loop
				return func(context.Context) { handled <- "second" }
			})
			for {
				select {
				case <-ctx.Done():
					return
				case fn := <-rt.Results():
					rt.Safely(func() { fn(ctx) }, "handling a result")
				}
			}
		})
		synctest.Wait()
		if got := <-handled; got != "first" {
			t.Fatalf("the loop handled %q, want the first job's result", got)
		}
		cancel()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Run returned before its job ended")
		default:
		}
		close(release)
		<-done
		select {
		case got := <-handled:
			t.Errorf("the loop ran %q after it ended", got)
		default:
		}
	})
}

func TestGoRecoversAPanickingJob(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rt := New(Options{})
		rt.Go(t.Context(), func(context.Context) func(context.Context) { panic("the job blew up") })
		synctest.Wait()
		if st := rt.Stats(); st.Panics != 1 {
			t.Errorf("stats %+v, want one panic", st)
		}
		select {
		case <-rt.Results():
			t.Error("a panicking job handed a result back")
		default:
		}
	})
}

func TestSafely(t *testing.T) {
	t.Parallel()
	rt := New(Options{})
	if p := rt.Safely(func() {}, "fine"); p != nil {
		t.Errorf("Safely of a handler that returned = %v", p)
	}
	if p := rt.Safely(func() { panic("boom") }, "handling", "task", "t-1"); p != "boom" {
		t.Errorf("Safely of a panicking handler = %v, want boom", p)
	}
	if st := rt.Stats(); st.Panics != 1 || st.Restarts != 0 {
		t.Errorf("stats %+v, want one panic", st)
	}
}

// tick is a logged test event.
type tick struct{ N int }

func (tick) EventKind() event.Kind { return "test.tick" }

// memLog is an event log in memory; append assigns IDs and publishes, as
// the store's writer does.
type memLog struct {
	bus *event.Bus
	mu  sync.Mutex
	evs []event.Event // guarded by mu
}

func (l *memLog) ReadEvents(_ context.Context, q event.Query) ([]event.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []event.Event
	for _, e := range l.evs {
		if e.ID > q.AfterID && q.Filter.Match(e) && (q.Limit == 0 || len(out) < q.Limit) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (l *memLog) append(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := event.New(time.Now(), "t-1", tick{n})
	e.ID = int64(len(l.evs) + 1)
	l.evs = append(l.evs, e)
	l.bus.Publish(e)
}

// The loop goes on after the last event it handled: the events published
// while it was down are read from the log, none twice. A loop that records
// nothing handled starts live.
func TestFollowResumesAfterTheLastEventHandled(t *testing.T) {
	t.Parallel()
	for _, record := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			bus := event.NewBus(event.Options{}, 0)
			log := &memLog{bus: bus}
			rt := New(Options{})
			var (
				mu   sync.Mutex
				seen []int // guarded by mu
			)
			done, cancel := run(t, rt, func(ctx context.Context) {
				evs, stop := rt.Follow(ctx, bus, log, event.Filter{})
				defer stop()
				for {
					select {
					case <-ctx.Done():
						return
					case e := <-evs:
						mu.Lock()
						seen = append(seen, e.Payload.(tick).N)
						mu.Unlock()
						if record {
							rt.Handled(e)
						}
						if e.Payload.(tick).N == 2 {
							panic("the loop blew up at the second event")
						}
					}
				}
			})
			synctest.Wait() // following
			log.append(1)
			log.append(2)
			synctest.Wait() // crashed, pausing
			log.append(3)
			log.append(4)
			time.Sleep(time.Second)
			synctest.Wait() // restarted
			log.append(5)
			synctest.Wait()
			cancel()
			<-done
			want := "[1 2 3 4 5]"
			if !record {
				want = "[1 2 5]"
			}
			mu.Lock()
			got := fmt.Sprint(seen)
			mu.Unlock()
			if got != want {
				t.Errorf("record=%t: events seen %s, want %s", record, got, want)
			}
		})
	}
}

// slowModel answers only when its context ends, or with reply at once
// when reply is set.
type slowModel struct{ reply string }

func (m slowModel) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if m.reply != "" {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart(m.reply)}},
			Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}, CostUSD: 0.01}, nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (m slowModel) Stream(ctx context.Context, req *llm.Request, _ func(llm.Event)) (*llm.Response, error) {
	return m.Complete(ctx, req)
}

func TestAskTimesOutAndTheFallbackDecides(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := NewDegraded(nil)
		p := Persona{Model: func() (llm.Client, string, error) { return slowModel{}, "m", nil }, Timeout: 30 * time.Second}
		start := time.Now()
		v, err := Ask(t.Context(), p, "who?", func(string) (string, error) { return "persona", nil })
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 30*time.Second {
			t.Fatalf("Ask = %q, %v after %v; want the deadline after 30s", v, err, time.Since(start))
		}
		v, err = Fallback(d, v, err, func() string { return "rules" })
		if v != "rules" || err == nil {
			t.Errorf("Fallback = %q, %v; want the rules' answer and the error", v, err)
		}
		if s := d.State(); !s.On || s.Failures != 1 || !strings.Contains(s.Reason, "deadline") {
			t.Errorf("degraded state %+v, want on, one failure, the reason", s)
		}
		time.Sleep(time.Minute)
		var spent float64
		p.Model = func() (llm.Client, string, error) { return slowModel{reply: "ok"}, "m", nil }
		p.Spent = func(_ llm.Usage, usd float64) { spent += usd }
		v, err = Ask(t.Context(), p, "who?", func(r string) (string, error) { return "persona:" + r, nil })
		v, err = Fallback(d, v, err, func() string { return "rules" })
		if v != "persona:ok" || err != nil || spent != 0.01 {
			t.Errorf("Fallback = %q, %v, spent %v; want the persona's parsed answer, its cost", v, err, spent)
		}
		if s := d.State(); s.On || s.Failures != 1 || s.Secs != 60 {
			t.Errorf("degraded state %+v, want off after one minute degraded", s)
		}
	})
}

func TestAskWithoutAModel(t *testing.T) {
	t.Parallel()
	p := Persona{Model: func() (llm.Client, string, error) { return nil, "", errors.New("no model for the tier") }}
	if _, err := Ask(t.Context(), p, "q", func(string) (int, error) { return 1, nil }); err == nil {
		t.Error("Ask without a model succeeded")
	}
}

// StartAfter makes the first feed replay the log after a position, even
// its beginning, where a feed of a runtime that handled nothing starts
// live.
func TestStartAfterReplaysTheLog(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{}, 0)
	log := &memLog{bus: bus}
	for i := range 3 {
		log.append(i)
	}
	for _, tc := range []struct {
		from int64
		want []int64
	}{{0, []int64{1, 2, 3}}, {2, []int64{3}}} {
		r := New(Options{})
		r.StartAfter(tc.from)
		ctx, cancel := context.WithCancel(context.Background())
		feed, stop := r.Follow(ctx, bus, log, event.Filter{})
		var got []int64
		for len(got) < len(tc.want) {
			got = append(got, (<-feed).ID)
		}
		stop()
		cancel()
		if !slices.Equal(got, tc.want) {
			t.Errorf("StartAfter(%d): %v, want %v", tc.from, got, tc.want)
		}
	}
}
