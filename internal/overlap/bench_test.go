package overlap

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervisor/supervisortest"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// memStore is the store in memory, for benchmarks that measure the radar
// and not SQLite.
type memStore struct {
	mu    sync.Mutex
	tasks map[task.ID]task.Task
	evs   int
}

func (m *memStore) GetTask(_ context.Context, id task.ID) (task.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return t, store.ErrNotFound
	}
	return t, nil
}

func (m *memStore) ListTasks(context.Context, store.ListOptions) ([]task.Task, error) {
	return nil, nil
}

func (m *memStore) GetWorktree(_ context.Context, id task.ID) (store.Worktree, error) {
	return store.Worktree{TaskID: id, Repo: "/repo", Path: "/wt/" + string(id)}, nil
}

func (m *memStore) AppendEvents(_ context.Context, evs ...event.Event) ([]event.Event, error) {
	m.mu.Lock()
	m.evs += len(evs)
	m.mu.Unlock()
	return evs, nil
}

func (m *memStore) ReadEvents(context.Context, event.Query) ([]event.Event, error) { return nil, nil }

// instant forecasts a conflict at once: the radar's own time, without git.
type instant struct{}

func (instant) Forecast(context.Context, Side, Side) (Forecast, error) {
	return Forecast{Result: Conflict, Conflicts: []string{"shared.go"}}, nil
}

func fleet(n int) *memStore {
	m := &memStore{tasks: map[task.ID]task.Task{}}
	for i := range n {
		id := task.ID(fmt.Sprintf("t-%05d", i))
		m.tasks[id] = task.Task{ID: id, Status: task.Running, Description: "task " + string(id)}
	}
	return m
}

// BenchmarkObserve500 is the tracking cost of one file-change observation
// with 500 running tasks, each having changed 20 files of its own
// already: a new file for one task, then the same file again.
func BenchmarkObserve500(b *testing.B) {
	const n = 500
	st := fleet(n)
	r := New(Options{Config: Config{Enabled: true}, Store: st, Inject: (&supervisortest.Actions{}).Inject, Forecaster: instant{}})
	ctx := context.Background()
	for i := range n {
		id := task.ID(fmt.Sprintf("t-%05d", i))
		for f := range 20 {
			r.Observe(ctx, event.New(time.Now(), id, event.FileChanged{Path: fmt.Sprintf("pkg%d/f%d.go", i, f)}))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := task.ID(fmt.Sprintf("t-%05d", i%n))
		r.Observe(ctx, event.New(time.Now(), id, event.FileChanged{Path: fmt.Sprintf("new/%d.go", i)}))
	}
}

// BenchmarkSecondChangeToNotices is the time from the second task's first
// change of a file the first changed (published on the bus) to both
// notices queued, among 500 running tasks, with the forecast answered at
// once (git merge-tree's time is BenchmarkGitForecast's).
func BenchmarkSecondChangeToNotices(b *testing.B) {
	const n = 500
	st := fleet(n)
	bus := event.NewBus(event.Options{}, 0)
	defer bus.Close()
	var told atomic.Int64
	got := make(chan struct{}, 1)
	act := &supervisortest.Actions{OnInject: func(inject.Injection, time.Time) {
		if told.Add(1)%2 == 0 {
			got <- struct{}{}
		}
	}}
	r := New(Options{Config: Config{Enabled: true}, Store: st, Bus: bus, Log: st, Inject: act.Inject, Forecaster: instant{}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for bus.Stats().Subscribers == 0 {
		time.Sleep(time.Millisecond)
	}
	var id int64
	pub := func(t task.ID, path string) {
		id++
		e := event.New(time.Now(), t, event.FileChanged{Path: path})
		e.ID = id
		bus.Publish(e)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		a, c := task.ID(fmt.Sprintf("t-%05d", (2*i)%n)), task.ID(fmt.Sprintf("t-%05d", (2*i+1)%n))
		path := fmt.Sprintf("shared/%d.go", i)
		b.StopTimer()
		pub(a, path)
		b.StartTimer()
		pub(c, path)
		<-got
	}
}

// BenchmarkGitForecast is one forecast of a real pair with git:
// photographing both work trees, git merge-tree, both diff stats and the
// line ranges of the shared file; merge-tree-ns/op is merge-tree's own
// time.
func BenchmarkGitForecast(b *testing.B) {
	repo := b.TempDir()
	gitIn(b, repo, "init", "-q", "-b", "main")
	writeFile(b, filepath.Join(repo, "a.go"), lines(200))
	gitIn(b, repo, "add", ".")
	gitIn(b, repo, "commit", "-q", "-m", "base")
	sides := make([]Side, 2)
	for i := range sides {
		p := filepath.Join(b.TempDir(), "wt")
		gitIn(b, repo, "worktree", "add", "-q", "-b", fmt.Sprintf("w%d", i), p, "main")
		writeFile(b, filepath.Join(p, "a.go"), fmt.Sprintf("side %d\n", i)+lines(200))
		sides[i] = Side{TaskID: task.ID(fmt.Sprintf("t-%d", i)), Repo: repo, Path: p, Files: []string{"a.go"}}
	}
	var mt time.Duration
	for b.Loop() {
		f, err := GitForecaster{}.Forecast(context.Background(), sides[0], sides[1])
		if err != nil || f.Result != Conflict || len(f.Lines) != 1 || !f.Lines[0].Intersect {
			b.Fatalf("forecast %+v, %v", f, err)
		}
		mt += f.Took
	}
	b.ReportMetric(float64(mt.Nanoseconds())/float64(b.N), "merge-tree-ns/op")
}
