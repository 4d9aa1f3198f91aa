package engine

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
)

// Receipt is the observation that injs were delivered in turn, with each
// one's latency from its creation to now; every engine records it.
func Receipt(turn int, injs []inject.Injection, now time.Time) event.Delivered {
	d := event.Delivered{Turn: turn}
	for _, inj := range injs {
		d.InjectionIDs = append(d.InjectionIDs, inj.ID)
		d.Kinds = append(d.Kinds, string(inj.Kind))
		d.LatencyMs = append(d.LatencyMs, max(0, now.Sub(inj.CreatedAt).Milliseconds()))
	}
	return d
}

// Drain drops the signals waiting on c (a Host's Interrupts).
func Drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
