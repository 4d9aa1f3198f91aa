package web

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/fleet"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// benchFleet is a fleet of n tasks in every unfinished status.
func benchFleet(n int) *fleet.Fleet {
	statuses := []task.Status{task.Running, task.Queued, task.Waiting, task.Paused}
	list := make([]task.Summary, n)
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for i := range list {
		list[i] = task.Summary{ID: task.ID(fmt.Sprintf("t-%05d", i)), Status: statuses[i%len(statuses)], Engine: "native",
			Persona: "engineer", Description: fmt.Sprintf("task %d: fix the <flaky> test in pkg/%d", i, i), CreatedAt: t0.Add(time.Duration(i) * time.Second)}
	}
	f := fleet.New()
	f.Load(list, nil, api.RebaseStatus{}, nil)
	return f
}

// benchServer is a Server whose hub holds f, served over HTTP, with a
// signed-in session cookie.
func benchServer(tb testing.TB, f *fleet.Fleet) (*Server, *httptest.Server, *http.Cookie) {
	s := New(Options{Loopback: true})
	s.hub.load(f)
	hs := httptest.NewServer(s.Handler())
	tb.Cleanup(hs.Close)
	id, _ := s.auth.exchange(s.auth.mint())
	return s, hs, &http.Cookie{Name: cookieName, Value: id}
}

// BenchmarkFleetRender500 is the server's time to render the fleet page
// of 500 tasks from the fleet in memory (what the hub renders for a
// "fleet" frame, with the page around it).
func BenchmarkFleetRender500(b *testing.B) {
	s := New(Options{})
	f := benchFleet(500)
	var size int
	for b.Loop() {
		rows, need := rowsOf(f)
		var out strings.Builder
		if err := s.tpl.pages["fleet"].ExecuteTemplate(&out, "layout", pageData{Title: "fleet", Nav: "fleet", CSRF: "x", Rows: rows, Need: need}); err != nil {
			b.Fatal(err)
		}
		size = out.Len()
		f.Touch()
	}
	b.ReportMetric(float64(size), "bytes/page")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// sseClients connects n streams to the fleet and counts the frames each
// reads; the returned stop closes them.
func sseClients(tb testing.TB, hs *httptest.Server, cookie *http.Cookie, n int) (counts []*atomic.Int64, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	counts = make([]*atomic.Int64, n)
	ready := make(chan struct{}, n)
	for i := range n {
		counts[i] = &atomic.Int64{}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL+"/events", nil)
		req.AddCookie(cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		wg.Add(1)
		go func(c *atomic.Int64) {
			defer wg.Done()
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 4096)
			first, midLine := true, false
			for {
				l, err := r.ReadSlice('\n')
				if err != nil && err != bufio.ErrBufferFull {
					return
				}
				starts := !midLine
				midLine = err == bufio.ErrBufferFull
				if starts && strings.HasPrefix(string(l[:min(len(l), 7)]), "event: ") {
					if first {
						first = false
						ready <- struct{}{}
					}
					c.Add(1)
				}
			}
		}(counts[i])
	}
	for range n {
		<-ready // each has its first frames (the whole fleet)
	}
	return counts, func() { cancel(); wg.Wait() }
}

// BenchmarkSSE10Clients is how many fleet events per second the stream
// sustains to 10 browsers: each event (a tool call of a running task of
// 500) is applied once, rendered once and written to all 10 streams; the
// benchmark waits for every browser to read each batch, so nothing is
// dropped.
func BenchmarkSSE10Clients(b *testing.B) {
	const clients, batch = 10, 100
	s, hs, cookie := benchServer(b, benchFleet(500))
	counts, stop := sseClients(b, hs, cookie, clients)
	defer stop()
	base := make([]int64, clients)
	for i, c := range counts {
		base[i] = c.Load()
	}
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	sent := 0
	for b.Loop() {
		s.hub.apply(ctx, event.New(time.Now(), "t-00000", event.ToolCall{Name: fmt.Sprintf("bash %d", sent)}))
		sent++
		if sent%batch == 0 {
			waitCounts(b, counts, base, int64(sent))
		}
	}
	waitCounts(b, counts, base, int64(sent))
	b.ReportMetric(float64(sent)/time.Since(start).Seconds(), "events/s")
}

func waitCounts(b *testing.B, counts []*atomic.Int64, base []int64, want int64) {
	deadline := time.Now().Add(time.Minute)
	for i, c := range counts {
		for c.Load()-base[i] < want {
			if time.Now().After(deadline) {
				b.Fatalf("browser %d read %d of %d events", i, c.Load()-base[i], want)
			}
			runtime.Gosched()
		}
	}
}

// BenchmarkSSEClientMemory is the heap one connected browser costs, both
// ends of the connection in this process (the server's share is the
// subscription, its 256-frame queue, the handler's goroutine and buffers).
func BenchmarkSSEClientMemory(b *testing.B) {
	const clients = 200
	for b.Loop() {
		_, hs, cookie := benchServer(b, benchFleet(20))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, stop := sseClients(b, hs, cookie, clients)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapInuse+after.StackInuse)-int64(before.HeapInuse+before.StackInuse))/clients, "bytes/client")
		stop()
		hs.Close()
	}
}

// BenchmarkFleetFrame500 is the hub's cost of one status change in a fleet
// of 500 with a fleet page connected: the order is sorted again and the
// whole fleet sent, but only the changed row is rendered again.
func BenchmarkFleetFrame500(b *testing.B) {
	s := New(Options{})
	s.hub.load(benchFleet(500))
	sub := s.hub.subscribe("", false)
	defer s.hub.unsubscribe(sub)
	ctx := context.Background()
	states := []task.Status{task.Paused, task.Running}
	i := 0
	for b.Loop() {
		to := states[i%2]
		s.hub.apply(ctx, event.New(time.Now(), "t-00000", event.TaskStatus{From: states[(i+1)%2], To: to}))
		i++
		for len(sub.ch) > 0 {
			<-sub.ch
		}
	}
}
