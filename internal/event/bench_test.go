package event

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkEventPublish measures fan-out of one logged event to n subscribers
// that keep up (each drains its queue in its own goroutine).
func BenchmarkEventPublish(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			bus := NewBus(Options{Buffer: 1 << 16}, 0)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{}, n)
			for range n {
				s := bus.Subscribe(Filter{})
				go func() {
					defer func() { done <- struct{}{} }()
					for {
						if _, err := s.Next(ctx); err != nil {
							return
						}
					}
				}()
			}
			e := New(t0, "t-aaaaa", logged{1})
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				e.ID = int64(i + 1)
				bus.Publish(e)
			}
			b.StopTimer()
			cancel()
			bus.Close()
			for range n {
				<-done
			}
		})
	}
}
