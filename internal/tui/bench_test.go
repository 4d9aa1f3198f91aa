package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// bigFleet is 500 tasks, every tenth waiting for an answer.
func bigFleet() *fakeBackend {
	b := &fakeBackend{}
	for i := range 500 {
		st := task.Running
		if i%10 == 0 {
			st = task.Waiting
		}
		b.list = append(b.list, sum(fmt.Sprintf("t-%04d", i), st, fmt.Sprintf("task number %d of the fleet", i), 2, time.Duration(i)*time.Second))
	}
	return b
}

// BenchmarkFirstFrame: from the loaded listing to the first full frame,
// 500 tasks at 160×48.
func BenchmarkFirstFrame(b *testing.B) {
	fb := bigFleet()
	snap := New(b.Context(), fb, Options{Now: func() time.Time { return clock }}).loadFleet()().(snapshotMsg)
	b.ResetTimer()
	for b.Loop() {
		m := newModelSized(b, fb, 160, 48)
		m.Update(snap)
		_ = m.Render()
	}
}

func newModelSized(tb testing.TB, fb Backend, w, h int) *Model {
	m := New(tb.Context(), fb, Options{Now: func() time.Time { return clock }})
	m.w, m.h = w, h
	return m
}

// BenchmarkEventFrame: one event (a tool call of a running task) folded in
// and the frame drawn again, 500 tasks.
func BenchmarkEventFrame(b *testing.B) {
	m := newModel(b, bigFleet(), 160, 48)
	_ = m.Render()
	tools := []string{"bash", "read_file", "edit_file"}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("t-%04d", 1+i%9)
		m.applyEvents(EventsMsg{ev(id, 0, event.ToolCall{Turn: i, Name: tools[i%3]})})
		_ = m.Render()
		i++
	}
}

// BenchmarkStatusFrame: a status change, which re-sorts the fleet.
func BenchmarkStatusFrame(b *testing.B) {
	m := newModel(b, bigFleet(), 160, 48)
	_ = m.Render()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		to, from := task.Paused, task.Running
		if i%2 == 1 {
			to, from = from, to
		}
		m.applyEvents(EventsMsg{ev("t-0001", 0, event.TaskStatus{From: from, To: to})})
		_ = m.Render()
		i++
	}
}

// BenchmarkStream50: a burst of 50 tasks' events (one each) as one batch.
func BenchmarkStream50(b *testing.B) {
	m := newModel(b, bigFleet(), 160, 48)
	batch := make(EventsMsg, 50)
	for i := range batch {
		batch[i] = ev(fmt.Sprintf("t-%04d", i*7+1), 0, event.Usage{TotalTokens: int64(i * 100), TotalCostUSD: 0.01})
	}
	b.ResetTimer()
	for b.Loop() {
		m.applyEvents(batch)
		_ = m.Render()
	}
}
