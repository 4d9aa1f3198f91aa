package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The live load of BenchmarkStreamCPU: streamTasks tasks, each running one
// model turn a second, a turn being what the native engine emits for a
// streamed reply with one tool call: turn.started, streamDeltas text
// deltas, the text, the tool call, its result and the usage.
const (
	streamTasks  = 50
	streamDeltas = 20
	streamTurn   = time.Second
	streamSlot   = 10 * time.Millisecond // the stream releases what is due every slot
	streamWall   = 3 * time.Second       // measured per run
)

// turnLines is one turn of task id as the watch stream sends it: JSON lines.
func turnLines(tb testing.TB, id string, turn int) [][]byte {
	tools := []string{"bash", "read_file", "edit_file", "grep"}
	ps := []event.Payload{event.TurnStarted{Turn: turn, Engine: "native", Model: "claude-sonnet-4-5"}}
	for i := range streamDeltas {
		ps = append(ps, event.TextDelta{Turn: turn, Text: fmt.Sprintf("piece %d of the reply ", i)})
	}
	tool := tools[turn%len(tools)]
	ps = append(ps,
		event.Text{Turn: turn, Text: "Let me look at the parser before I change it."},
		event.ToolCall{Turn: turn, CallID: fmt.Sprintf("c%d", turn), Name: tool, Args: json.RawMessage(`{"path":"internal/parse/parse.go"}`)},
		event.ToolResult{Turn: turn, CallID: fmt.Sprintf("c%d", turn), Name: tool, Size: 4096, Preview: "package parse"},
		event.Usage{Turn: turn, InputTokens: int64(turn * 1500), OutputTokens: int64(turn * 300), TotalTokens: int64(turn * 1800), CostUSD: 0.01, TotalCostUSD: 0.01 * float64(turn)},
	)
	out := make([][]byte, len(ps))
	for i, p := range ps {
		b, err := json.Marshal(event.New(time.Now(), task.ID(id), p))
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// replayStream is the watch stream of streamTasks busy tasks at a fixed
// rate: every task's turn spreads its events evenly over streamTurn, the
// tasks out of phase, and Next decodes each line as client.Stream does.
// What is due is released every streamSlot.
type replayStream struct {
	ctx    context.Context
	start  time.Time
	turns  [][][]byte // per task, one turn's lines (the turn number is the first's)
	sent   int        // events returned
	perSec int
}

func newReplayStream(ctx context.Context, tb testing.TB) *replayStream {
	s := &replayStream{ctx: ctx, start: time.Now()}
	for i := range streamTasks {
		s.turns = append(s.turns, turnLines(tb, fmt.Sprintf("t-%04d", i), 1))
	}
	s.perSec = streamTasks * len(s.turns[0])
	return s
}

func (s *replayStream) Next() (event.Event, error) {
	// Event n is due at start + n/perSec; it goes out with its slot.
	due := s.start.Add(time.Duration(int64(s.sent) * int64(time.Second) / int64(s.perSec)))
	due = due.Truncate(streamSlot)
	if wait := time.Until(due); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			return event.Event{}, io.EOF
		}
	}
	per := len(s.turns[0])
	n := s.sent
	s.sent++
	// The tasks take turns, one event each, every task out of phase with
	// the next by half an event, so each task's events spread over the
	// second and the tasks do different things at once.
	task, round := n%streamTasks, n/streamTasks
	line := s.turns[task][(round+task*per/streamTasks)%per]
	var e event.Event
	if err := json.Unmarshal(line, &e); err != nil {
		return event.Event{}, err
	}
	// The daemon stamps events as they happen, and usage grows.
	e.Time = time.Now()
	if u, ok := e.Payload.(event.Usage); ok {
		u.TotalTokens += int64(round * 100)
		u.TotalCostUSD += float64(round) / 1000
		e.Payload = u
	}
	return e, nil
}

func (s *replayStream) Close() error { return nil }

// streamBackend is a fleet whose Watch is the replayed stream.
type streamBackend struct {
	*fakeBackend
	stream *replayStream
}

func (b streamBackend) Watch(context.Context) (Stream, error) { return b.stream, nil }

// cpuTime is the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// frameCounter is the dashboard's model counting the views the program
// asks of it.
type frameCounter struct {
	*Model
	views *atomic.Int64
}

func (f frameCounter) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := f.Model.Update(msg)
	return f, cmd
}

func (f frameCounter) View() tea.View {
	f.views.Add(1)
	return f.Model.View()
}

// countingWriter is the terminal: it counts the frames the renderer writes.
type countingWriter struct {
	writes, bytes atomic.Int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes.Add(1)
	w.bytes.Add(int64(len(p)))
	return len(p), nil
}

// BenchmarkStreamCPU runs the whole dashboard — the program, its renderer
// at 160×48, the goroutine reading the stream — against the live stream of
// 50 busy tasks for streamWall, and reports the process's CPU seconds per
// wall second (cpu-s/s), with the same stream read and discarded alone
// (stream-cpu-s/s: the replay's own timers and the JSON decoding a real
// client does too) and the difference (tui-cpu-s/s), the views the
// program asked for and the frames it wrote per second. fleet is how many
// tasks the dashboard lists; the first 50 stream. Nothing is asserted.
func BenchmarkStreamCPU(b *testing.B) {
	for _, fleetSize := range []int{50, 500} {
		b.Run(fmt.Sprintf("fleet=%d", fleetSize), func(b *testing.B) {
			fb := &fakeBackend{}
			for i := range fleetSize {
				// The streaming tasks t-0000..t-0049 are the oldest, so
				// they are the rows on the screen.
				fb.list = append(fb.list, sum(fmt.Sprintf("t-%04d", i), task.Running, fmt.Sprintf("task number %d of the fleet", i), 2, time.Duration(fleetSize-i)*time.Second))
			}
			var runs, streamCPU, tuiCPU, wall time.Duration
			var views, frames, events int64
			for b.Loop() {
				// The stream alone.
				ctx, cancel := context.WithTimeout(b.Context(), streamWall)
				st := newReplayStream(ctx, b)
				c0 := cpuTime(b)
				for {
					if _, err := st.Next(); err != nil {
						break
					}
				}
				streamCPU += cpuTime(b) - c0
				cancel()

				// The dashboard on the same stream.
				ctx, cancel = context.WithTimeout(b.Context(), streamWall)
				st = newReplayStream(ctx, b)
				var n atomic.Int64
				out := &countingWriter{}
				var wg sync.WaitGroup
				var err error
				c0, w0 := cpuTime(b), time.Now()
				wg.Go(func() {
					err = run(ctx, streamBackend{fb, st}, Options{},
						func(m *Model) tea.Model { return frameCounter{m, &n} },
						tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(160, 48), tea.WithoutSignalHandler())
				})
				wg.Wait()
				tuiCPU += cpuTime(b) - c0
				wall += time.Since(w0)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				views += n.Load()
				frames += out.writes.Load()
				events += int64(st.sent)
				runs++
			}
			secs := wall.Seconds()
			per := float64(runs) * streamWall.Seconds()
			b.ReportMetric(tuiCPU.Seconds()/secs, "cpu-s/s")
			b.ReportMetric(streamCPU.Seconds()/per, "stream-cpu-s/s")
			b.ReportMetric(tuiCPU.Seconds()/secs-streamCPU.Seconds()/per, "tui-cpu-s/s")
			b.ReportMetric(float64(events)/secs, "events/s")
			b.ReportMetric(float64(views)/secs, "views/s")
			b.ReportMetric(float64(frames)/secs, "frames/s")
		})
	}
}
