package stuck

import (
	"fmt"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// benchMix is a realistic mix of observations: healthy work (edits, test
// runs, reads, large outputs) and the stuck patterns, in stream order.
func benchMix() []event.Event {
	var evs []event.Event
	for _, c := range append(healthyCases(), healthyTraps()...) {
		s := newStream("t-bench")
		c.build(s)
		evs = append(evs, s.events()...)
	}
	for _, c := range append(stuckCases(), newPatterns()...) {
		s := newStream("t-bench")
		c.build(s)
		evs = append(evs, s.events()...)
	}
	return evs
}

// BenchmarkObserve measures one observation (ns/op) over the mix.
func BenchmarkObserve(b *testing.B) {
	evs := benchMix()
	d := New(Config{}, testRoot, t0)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		d.Observe(evs[i%len(evs)])
		i++
	}
}

// cycleTasks returns n detectors, each with a full window of a task at
// work, and for each a set of results to observe next.
func cycleTasks(n int) ([]*Detector, [][]event.ToolResult, time.Time) {
	s := newStream("t-bench")
	s.prelude()
	for i := range 30 {
		switch i % 3 {
		case 0:
			s.turn("Reading.", read(fmt.Sprintf("internal/pay/f%d.go", i), sourceFile(i)))
		case 1:
			s.turn("", bash("go test ./internal/pay/", fmt.Sprintf("--- FAIL: TestCharge\n    pay_test.go:%d: %s\nFAIL", 40+i, failureText(i))).failed())
		default:
			s.turn("Fixing.", edit("internal/pay/pay.go", fmt.Sprintf("v%d", i), fmt.Sprintf("v%d", i+1)))
		}
	}
	outs := []call{
		bash("go test ./internal/pay/", "--- FAIL: TestCharge\n    pay_test.go:88: "+failureText(1)+"\nFAIL").failed(),
		read("internal/pay/handler.go", handlerGo),
		bash("go vet ./...", ""),
		read("internal/pay/pay.go", payGo),
		bash("go build ./...", buildErr).failed(),
		bash("git status --short", " M internal/pay/pay.go"),
		bash("go test ./internal/pay/", "--- FAIL: TestCharge\n    pay_test.go:91: "+failureText(2)+"\nFAIL").failed(),
	}
	results := make([]event.ToolResult, len(outs))
	for i, c := range outs {
		results[i] = event.ToolResult{Turn: 99, CallID: "toolu_next", Name: c.tool, Error: c.err, Size: len(c.out),
			Preview: event.ResultPreview(c.out), Tail: event.ResultTail(c.out), Hash: event.ContentHash(c.out)}
	}
	ds := make([]*Detector, n)
	rs := make([][]event.ToolResult, n)
	for i := range ds {
		ds[i] = New(Config{}, testRoot, t0)
		feed(ds[i], s.items, false)
		rs[i] = results
	}
	return ds, rs, s.now
}

// BenchmarkCycle1000 is one Watcher cycle over 1,000 running tasks, each
// with a full window: a Tick on each and one new tool result for each.
// ns/task is the wall time per task per cycle (the target is 20µs);
// cpu-ns/task the CPU time, which a loaded machine does not inflate.
func BenchmarkCycle1000(b *testing.B) {
	benchCycle(b, false)
}

// BenchmarkCycle1000WithCall is the same cycle with the result's tool call
// observed too, so the call is canonicalized and keyed as in a live run.
func BenchmarkCycle1000WithCall(b *testing.B) {
	benchCycle(b, true)
}

func benchCycle(b *testing.B, withCall bool) {
	const n = 1000
	ds, rs, now := cycleTasks(n)
	calls := []event.ToolCall{
		{Turn: 99, CallID: "toolu_next", Name: "bash", Args: args("command", "go test ./internal/pay/")},
		{Turn: 99, CallID: "toolu_next", Name: "read_file", Args: args("path", "internal/pay/handler.go")},
		{Turn: 99, CallID: "toolu_next", Name: "bash", Args: args("command", "go vet ./...")},
		{Turn: 99, CallID: "toolu_next", Name: "read_file", Args: args("path", testRoot+"/internal/pay/pay.go")},
		{Turn: 99, CallID: "toolu_next", Name: "bash", Args: args("command", "go build ./...")},
		{Turn: 99, CallID: "toolu_next", Name: "bash", Args: args("command", "git status --short")},
		{Turn: 99, CallID: "toolu_next", Name: "bash", Args: args("command", "go test ./internal/pay/")},
	}
	cycles := 0
	b.ReportAllocs()
	cpu0, cpuOK := cpuTime()
	for b.Loop() {
		now = now.Add(10 * time.Second)
		for i, d := range ds {
			d.Tick(now)
			k := (cycles + i) % len(rs[i])
			if withCall {
				d.Observe(event.Event{Time: now, Kind: event.KindToolCall, TaskID: "t-bench", Payload: calls[k]})
			}
			d.Observe(event.Event{Time: now, Kind: event.KindToolResult, TaskID: "t-bench", Payload: rs[i][k]})
		}
		cycles++
	}
	if cpu1, ok := cpuTime(); ok && cpuOK {
		// CPU time includes the collector's, on all threads.
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(cycles*n), "cpu-ns/task")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(cycles*n), "ns/task")
}

// The benchmark's detectors really hold a full window.
func TestCycleTasksHaveFullWindows(t *testing.T) {
	t.Parallel()
	ds, _, _ := cycleTasks(2)
	for _, d := range ds {
		if got, want := len(d.Window()), d.Config().Window; got != want {
			t.Errorf("window holds %d steps, want %d", got, want)
		}
	}
}

// BenchmarkMask masks a result as the detector sees it: a 200-byte preview
// and a 200-byte tail.
func BenchmarkMask(b *testing.B) {
	out := handlerGo + handlerGo
	body := event.ResultPreview(out) + " " + event.ResultTail(out)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Mask(body)
	}
}

// BenchmarkCanonicalCall canonicalizes a shell call.
func BenchmarkCanonicalCall(b *testing.B) {
	a := args("command", "cd "+testRoot+" && go test -race -count=1 -run 'TestCharge|TestRefund' ./internal/pay/... 2>&1 | tail -40")
	b.ReportAllocs()
	for b.Loop() {
		CanonicalCall("bash", a, testRoot)
	}
}
