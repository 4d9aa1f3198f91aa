package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// emitEngine emits n observations (tool calls), then completes.
type emitEngine struct{ n int }

func (emitEngine) Name() string { return "bench" }
func (emitEngine) Ready() error { return nil }
func (e emitEngine) Run(ctx context.Context, r engine.Run) engine.Outcome {
	for i := range e.n {
		r.Host.Emit(event.ToolCall{Turn: i, CallID: fmt.Sprint("c", i), Name: "bash"})
	}
	return engine.Outcome{Status: engine.Completed, Reason: "emitted"}
}

// nullCode gets no code and pushes nothing: the benchmarks measure the
// coordinator, not git.
type nullCode struct{}

func (nullCode) Checkout(_ context.Context, _ Assignment, dir string) error {
	return os.MkdirAll(dir, 0o755)
}
func (nullCode) Push(context.Context, Assignment, string, string, string) error { return nil }

// storeHost is the executor host's side the benchmarks need: observations
// into a real store, which publishes them on the bus.
type storeHost struct {
	st *sqlite.Store
	id task.ID
}

func (h storeHost) Emit(ps ...event.Payload) {
	evs := make([]event.Event, len(ps))
	for i, p := range ps {
		evs[i] = event.New(time.Now(), h.id, p)
	}
	h.st.EmitEvents(context.Background(), evs...)
}
func (storeHost) Conversation(context.Context) ([]llm.Message, error) { return nil, nil }
func (h storeHost) Commit(context.Context, engine.Step) (task.Task, error) {
	return task.Task{ID: h.id}, nil
}
func (h storeHost) Prepare(context.Context) (task.Task, error)          { return task.Task{ID: h.id}, nil }
func (storeHost) Inbox(context.Context) ([]inject.Injection, error)     { return nil, nil }
func (storeHost) Interrupts() <-chan struct{}                           { return nil }
func (storeHost) UrgentWaiting(context.Context) bool                    { return false }
func (storeHost) Allow(context.Context) *engine.Stop                    { return nil }
func (storeHost) RecordLearning(context.Context, engine.Learning) error { return nil }
func (storeHost) Now() time.Time                                        { return time.Now() }

// benchCluster is an embedded server, a coordinator and workers in this
// process, with the coordinator's observations counted as the store
// publishes them on the bus.
type benchCluster struct {
	coord *Coordinator
	st    *sqlite.Store
	bus   *event.Bus
	seen  atomic.Int64
	repo  string
}

func newBenchCluster(b *testing.B, workers, capacity, obs int) *benchCluster {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tokens, err := OpenTokens(filepath.Join(b.TempDir(), "tokens.json"))
	if err != nil {
		b.Fatal(err)
	}
	srv, err := StartServer(ServerOptions{Listen: "127.0.0.1:0", StoreDir: b.TempDir(), Tokens: tokens})
	if err != nil {
		b.Fatal(err)
	}
	nc, err := nats.Connect(srv.URL(), nats.Token(srv.Internal))
	if err != nil {
		b.Fatal(err)
	}
	bc := &benchCluster{bus: event.NewBus(event.Options{}, 0)}
	bc.st = testkit.OpenStore(b, sqlite.Options{Publish: func(evs ...event.Event) {
		bc.seen.Add(int64(len(evs)))
		bc.bus.Publish(evs...)
	}})
	bc.coord, err = NewCoordinator(ctx, Options{Conn: nc, Tokens: tokens, Heartbeat: 200 * time.Millisecond, Misses: 50})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); bc.coord.Serve(ctx) }()
	for range workers {
		_, tok, err := tokens.Issue(nil)
		if err != nil {
			b.Fatal(err)
		}
		w, err := NewWorker(WorkerOptions{URL: srv.URL(), Token: tok, Capacity: capacity, Dir: b.TempDir(),
			Code: nullCode{}, Heartbeat: 200 * time.Millisecond,
			Engine: func(Assignment) (engine.Engine, error) { return emitEngine{n: obs}, nil }})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx) }()
	}
	b.Cleanup(func() { cancel(); wg.Wait(); nc.Close(); srv.Shutdown() })
	bc.repo = b.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=B", "-c", "user.email=b@localhost", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if _, err := git.Run(ctx, bc.repo, args...); err != nil {
			b.Fatal(err)
		}
	}
	testkit.WaitFor(b, "the workers joined", func() bool { return len(bc.coord.Status(ctx).Workers) == workers })
	return bc
}

// run runs one task through the coordinator.
func (bc *benchCluster) run(ctx context.Context, id task.ID) engine.Outcome {
	return bc.coord.Run(ctx, engine.Run{Task: task.Task{ID: id, Repo: bc.repo}, Dir: bc.repo, Branch: "main",
		Host: storeHost{st: bc.st, id: id}})
}

// Observations from a worker into the coordinator's store and bus: one
// task emits b.N observations; the clock stops when the store has
// published the last.
func BenchmarkObservationsIntoStore(b *testing.B) {
	bc := newBenchCluster(b, 1, 1, b.N)
	b.ResetTimer()
	start := time.Now()
	if out := bc.run(context.Background(), "t-bench"); out.Status != engine.Completed {
		b.Fatalf("outcome %+v", out)
	}
	testkit.WaitFor(b, "every observation stored", func() bool { return bc.seen.Load() >= int64(b.N) })
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "obs/s")
}

// 1,000 tasks across 4 workers (250 slots each), 20 observations each:
// wall time, CPU and peak memory of the process (the coordinator with the
// four in-process workers: an upper bound of the coordinator's own).
func BenchmarkCoordinator1000Tasks(b *testing.B) {
	const ntasks, obs = 1000, 20
	bc := newBenchCluster(b, 4, 250, obs)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	start := time.Now()
	for n := range b.N {
		var wg sync.WaitGroup
		var failed atomic.Int64
		for i := range ntasks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if out := bc.run(context.Background(), task.ID(fmt.Sprintf("t-%d-%d", n, i))); out.Status != engine.Completed {
					failed.Add(1)
				}
			}()
		}
		wg.Wait()
		if failed.Load() > 0 {
			b.Fatalf("%d tasks did not complete", failed.Load())
		}
	}
	testkit.WaitFor(b, "every observation stored", func() bool { return bc.seen.Load() >= int64(b.N*ntasks*obs) })
	elapsed := time.Since(start)
	b.StopTimer()
	close(stop)
	sampler.Wait()
	var after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) / time.Duration(b.N)
	b.ReportMetric(float64(b.N*ntasks)/elapsed.Seconds(), "tasks/s")
	b.ReportMetric(cpu.Seconds(), "cpu-s/1000tasks")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(after.Maxrss)/1024, "maxrss-MB")
}
