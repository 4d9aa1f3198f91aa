package lifecycle

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

func TestProgressFromObservations(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewProgress(t0)
	obs := []event.Payload{
		event.TurnStarted{Turn: 1, Engine: "claude"},
		event.ToolCall{Turn: 1, CallID: "a", Name: "Read", Args: json.RawMessage(`{"file_path":"/w/main.go"}`)},
		event.ToolResult{Turn: 1, CallID: "a", Name: "Read"},
		event.ToolCall{Turn: 1, CallID: "b", Name: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
		event.ToolResult{Turn: 1, CallID: "b", Name: "read_file"},
		event.FileChanged{Turn: 1, Path: "main.go", Op: "modified", Tool: "edit_file"},
		event.ToolCall{Turn: 1, CallID: "c", Name: "bash", Args: json.RawMessage(`{"command":"git commit -am wip"}`)},
		event.ToolResult{Turn: 1, CallID: "c", Name: "bash"},
		event.ToolCall{Turn: 1, CallID: "d", Name: "Bash", Args: json.RawMessage(`{"command":"git commit -m again"}`)},
		event.ToolResult{Turn: 1, CallID: "d", Name: "Bash", Error: true},
		event.Text{Turn: 2, Text: "done\nall of it\n"},
		event.PermissionDenied{Turn: 2, Tool: "Write", Path: "/etc/x", Write: true},
		event.ToolCall{Turn: 2, CallID: "e", Name: "Read", Args: json.RawMessage(`not json`)},
	}
	for i, o := range obs {
		p.Observe(o, t0.Add(time.Duration(i+1)*time.Second))
	}
	got := p.State()
	want := State{Started: t0, LastActivity: t0.Add(13 * time.Second), Turn: 1,
		FilesRead: []string{"/w/main.go", "go.mod"}, FilesWritten: []string{"main.go"},
		Commits: 1, OutputLines: 6,
		Errors:           []string{"Bash failed", "permission denied: writing /etc/x"},
		PermissionErrors: []event.PermissionDenied{{Turn: 2, Tool: "Write", Path: "/etc/x", Write: true}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	snap := p.Snapshot(t0.Add(20 * time.Second))
	wantSnap := event.Progress{Turn: 1, FilesRead: 2, FilesWritten: 1, Commits: 1, OutputLines: 6, Errors: 2, Denials: 1, ElapsedMs: 20000, IdleMs: 7000}
	if snap != wantSnap {
		t.Errorf("snapshot %+v, want %+v", snap, wantSnap)
	}
}

// A silent run is stopped by the idle timer with no observation arriving
// at all: the defect of the earlier implementation, which looked only when
// output came.
func TestWatchdogStopsASilentRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := NewWatchdog(10*time.Minute, 0, time.Hour)
		start := time.Now()
		te := w.Run(context.Background())
		if te == nil || te.Which != "idle" {
			t.Fatalf("Run = %v, want the idle timeout", te)
		}
		if took := time.Since(start); took != 10*time.Minute {
			t.Errorf("stopped after %s, want 10m", took)
		}
		if ev := te.Event(); ev.LimitSecs != 600 || ev.IdleMs != 600_000 {
			t.Errorf("event %+v", ev)
		}
	})
}

func TestWatchdogActivityPostponesIdleNotTotal(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := NewWatchdog(10*time.Minute, 0, 25*time.Minute)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan *TimeoutError, 1)
		start := time.Now()
		var took time.Duration
		go func() {
			te := w.Run(ctx)
			took = time.Since(start)
			done <- te
		}()
		// Activity every 9 minutes: the idle timer never fires.
		for range 4 {
			time.Sleep(9 * time.Minute)
			synctest.Wait()
			select {
			case te := <-done:
				if te.Which != "total" || took != 25*time.Minute {
					t.Fatalf("stopped at %s by %v, want the total timeout at 25m", took, te)
				}
				return
			default:
			}
			w.Touch()
		}
		t.Fatal("the total timeout never fired")
	})
}

func TestWatchdogIdleAfterLastTouch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := NewWatchdog(time.Minute, 0, 0)
		done := make(chan *TimeoutError, 1)
		go func() { done <- w.Run(context.Background()) }()
		time.Sleep(50 * time.Second)
		w.Touch()
		start := time.Now()
		te := <-done
		if te.Which != "idle" || time.Since(start) != time.Minute {
			t.Errorf("stopped %s after the last touch by %v, want a minute, idle", time.Since(start), te)
		}
	})
}

func TestWatchdogEndsWithItsContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := NewWatchdog(0, 0, 0) // no limits: only the context ends it
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *TimeoutError, 1)
		go func() { done <- w.Run(ctx) }()
		time.Sleep(1000 * time.Hour)
		cancel()
		if te := <-done; te != nil {
			t.Errorf("Run = %v, want nil", te)
		}
	})
}

// While a tool call runs, the idle limit is the tool's: a build that
// prints nothing for 20 minutes is not a hang; once its result is in, the
// ordinary limit applies again.
func TestWatchdogWaitsForARunningTool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := NewWatchdog(10*time.Minute, 31*time.Minute, 0)
		p := NewProgress(time.Now())
		observe := func(pl event.Payload) {
			p.Observe(pl, time.Now())
			w.Busy(p.ToolRunning())
		}
		done := make(chan *TimeoutError, 1)
		var stoppedAt time.Time
		go func() {
			te := w.Run(context.Background())
			stoppedAt = time.Now()
			done <- te
		}()
		start := time.Now()
		observe(event.ToolCall{Turn: 1, CallID: "a", Name: "bash", Args: json.RawMessage(`{"command":"make all"}`)})
		time.Sleep(20 * time.Minute)
		synctest.Wait()
		select {
		case te := <-done:
			t.Fatalf("stopped during the tool call: %v", te)
		default:
		}
		observe(event.ToolResult{Turn: 1, CallID: "a", Name: "bash"})
		te := <-done
		if te.Which != "idle" || te.Limit != 10*time.Minute || stoppedAt.Sub(start) != 30*time.Minute {
			t.Errorf("stopped at %s by %v, want the ordinary idle limit 10m after the result (30m)", stoppedAt.Sub(start), te)
		}
	})
}

func TestWatchdogStopsAToolPastItsOwnTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := NewWatchdog(10*time.Minute, 31*time.Minute, 0)
		w.Busy(true)
		start := time.Now()
		te := w.Run(context.Background())
		if te.Which != "idle" || time.Since(start) != 31*time.Minute {
			t.Errorf("stopped after %s by %v, want 31m", time.Since(start), te)
		}
	})
}
