package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/store/storetest"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// shortTemp returns a short temporary directory: Unix socket paths are limited.
func shortTemp(tb testing.TB) string {
	dir, err := os.MkdirTemp("", "np")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

type running struct {
	cancel context.CancelFunc
	done   chan error
	client *client.Client
	paths  config.Paths
}

// start runs a daemon in this process under home until the test ends.
func start(tb testing.TB, home string) *running {
	tb.Helper()
	p, err := config.ResolvePaths(func(k string) string {
		if k == "NEURAPHAGE_HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1), paths: p, client: client.New(p.Socket)}
	ready := make(chan struct{})
	go func() {
		r.done <- daemon.Run(ctx, daemon.Options{
			Paths: p, Config: config.Default(), Version: "test",
			Logger: slog.New(slog.DiscardHandler), Ready: func() { close(ready) },
		})
	}()
	select {
	case <-ready:
	case err := <-r.done:
		cancel()
		tb.Fatalf("daemon did not start: %v", err)
	}
	tb.Cleanup(func() { r.stop(tb) })
	return r
}

func (r *running) stop(tb testing.TB) error {
	r.cancel()
	r.client.Close()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(20 * time.Second):
		tb.Fatal("daemon did not stop")
		return nil
	}
}

func TestSecondDaemonRefusedAndShutdownCleansUp(t *testing.T) {
	t.Parallel()
	home := shortTemp(t)
	r := start(t, home)
	ctx := context.Background()
	if _, err := r.client.CreateTask(ctx, api.CreateTaskRequest{Description: "one"}); err != nil {
		t.Fatal(err)
	}
	err := daemon.Run(ctx, daemon.Options{Paths: r.paths, Config: config.Default(), Logger: slog.New(slog.DiscardHandler)})
	var are *daemon.AlreadyRunningError
	if !errors.As(err, &are) || are.PID != os.Getpid() {
		t.Fatalf("second Run = %v, want *AlreadyRunningError naming pid %d", err, os.Getpid())
	}
	// A watch stream must not hold up shutdown.
	stream, err := r.client.Watch(ctx, event.Query{AfterID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if err := r.stop(t); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	for _, f := range []string{r.paths.Socket, r.paths.PIDFile, api.TokenPath(r.paths.Socket)} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind after shutdown (%v)", filepath.Base(f), err)
		}
	}
	if _, err := stream.Next(); err == nil {
		t.Error("watch stream still open after shutdown")
	}
	// The log ends with the stopping event, flushed before the store closed.
	st, err := sqlite.Open(ctx, r.paths.DBFile, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evs, err := st.ReadEvents(ctx, event.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1]; last.Kind != event.KindDaemonStopping {
		t.Errorf("last event = %s, want daemon.stopping", last.Kind)
	}
}

func TestRecoveryMarksRunningTasks(t *testing.T) {
	t.Parallel()
	home := shortTemp(t)
	// Leave a task "running" as a crashed daemon would.
	r := start(t, home)
	tk, err := r.client.CreateTask(context.Background(), api.CreateTaskRequest{Description: "was running"})
	if err != nil {
		t.Fatal(err)
	}
	r.stop(t)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, r.paths.DBFile, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.UpdateTask(ctx, tk.ID, func(t *task.Task) ([]event.Event, error) {
		return nil, t.Transition(task.Running, "", time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r2 := start(t, home)
	d, err := r2.client.GetTask(ctx, string(tk.ID))
	if err != nil {
		t.Fatal(err)
	}
	if d.Task.Status != task.Queued || !d.Task.ResumePending {
		t.Errorf("after restart: %s resume=%v, want queued with resume pending", d.Task.Status, d.Task.ResumePending)
	}
	evs, err := r2.client.Events(ctx, event.Query{Filter: event.Filter{Kinds: []string{"daemon.recovered"}}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("recovered events = %v, %v", evs, err)
	}
}

func TestWatchDeliversEveryChangeInOrder(t *testing.T) {
	t.Parallel()
	r := start(t, shortTemp(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := r.client.Watch(ctx, event.Query{AfterID: 0, Filter: event.Filter{Kinds: []string{"task"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := r.client.CreateTask(ctx, api.CreateTaskRequest{Description: fmt.Sprintf("task %d", i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var last int64
	for range n {
		e, err := stream.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e.ID <= last || e.Kind != event.KindTaskCreated {
			t.Fatalf("event %d (%s) after %d", e.ID, e.Kind, last)
		}
		last = e.ID
	}
}

// BenchmarkTaskListJSON10k measures the `task list --all --json` round trip
// (request, store read, encoding, socket, printing) with 10,000 tasks.
func BenchmarkTaskListJSON10k(b *testing.B) {
	home := shortTemp(b)
	p, _ := config.ResolvePaths(func(k string) string {
		if k == "NEURAPHAGE_HOME" {
			return home
		}
		return ""
	})
	ctx := context.Background()
	st, err := sqlite.Open(ctx, p.DBFile, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	storetest.PopulateHeld(b, st, 10_000) // held: the daemon stays idle
	st.Close()
	r := start(b, home)
	var out bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out.Reset()
		raw, err := r.client.ListPageJSON(ctx, client.ListQuery{All: true})
		if err != nil {
			b.Fatal(err)
		}
		out.Write(raw) // what the CLI prints
	}
	b.ReportMetric(float64(out.Len()), "bytes")
}
