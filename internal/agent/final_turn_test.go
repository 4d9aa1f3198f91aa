package agent

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// heldClient holds model call number hold open: it says when the call is
// in flight (inFlight is closed) and goes on to the scripted server once
// release is closed.
type heldClient struct {
	llm.Client
	hold     int
	n        int
	inFlight chan struct{}
	release  chan struct{}
}

func (c *heldClient) Stream(ctx context.Context, req *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	c.n++
	if c.n == c.hold {
		close(c.inFlight)
		select {
		case <-c.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.Client.Stream(ctx, req, h)
}

// holdCall makes the harness hold model call n open until the returned
// function, given what to do while the call is in flight, runs it.
func (h *harness) holdCall(n int) (whileInFlight func(func())) {
	model := h.opts.Model
	c := &heldClient{hold: n, inFlight: make(chan struct{}), release: make(chan struct{})}
	h.opts.Model = func(t task.Task) (llm.Client, string, error) {
		client, name, err := model(t)
		c.Client = client
		return c, name, err
	}
	done := make(chan struct{})
	h.t.Cleanup(func() { <-done })
	return func(f func()) {
		go func() {
			defer close(done)
			defer close(c.release)
			select {
			case <-c.inFlight:
				f()
			case <-time.After(30 * time.Second):
				h.t.Error("the held model call never started")
			}
		}()
	}
}

// A message sent while the final model call (the one that answers with
// complete_task) is in flight is given to the model before the task may
// end: before, the run ended completed and the message stayed queued
// for good.
func TestMessageDuringFinalTurnIsDelivered(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: complete_task, input: {summary: done}}]
    - tool_calls: [{name: fail_task, input: {reason: "stopped: the user said not to merge"}}]
`)
	h.holdCall(1)(func() {
		h.host.inject(inject.Injection{ID: 9, Kind: inject.Message, Source: "user", Text: "stop: do not merge", CreatedAt: time.Now()})
	})
	out := h.run(context.Background())
	if out.Status != engine.Failed || out.Reason != "stopped: the user said not to merge" {
		t.Fatalf("outcome = %+v; want the model to read the message and fail the task", out)
	}
	if h.host.delivered[9] != 1 {
		t.Fatalf("deliveries = %v; want the message delivered once", h.host.delivered)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	last := lastUserText(reqs[1].Messages)
	if !strings.Contains(last, "stop: do not merge") || !strings.Contains(last, "You called complete_task") {
		t.Errorf("the model was not told its completion is held: %q", last)
	}
	kinds := h.host.kinds()
	if slices.Contains(kinds, event.KindCompleted) || !slices.Contains(kinds, event.KindFailed) {
		t.Errorf("observations %v: want agent.failed and no agent.completed", kinds)
	}
}

// A pause sent during the final turn pauses the task instead of letting
// it complete (and merge).
func TestPauseDuringFinalTurnPauses(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: complete_task, input: {summary: done}}]
    - tool_calls: [{name: complete_task, input: {summary: done after the pause}}]
`)
	h.holdCall(1)(func() {
		h.host.inject(inject.Injection{ID: 4, Kind: inject.Pause, Source: "user", Text: "hold the merge", CreatedAt: time.Now()})
	})
	out := h.run(context.Background())
	if out.Status != engine.Paused || out.Reason != "hold the merge" {
		t.Fatalf("outcome = %+v, want paused: hold the merge", out)
	}
	if slices.Contains(h.host.kinds(), event.KindCompleted) {
		t.Error("a paused task reported agent.completed")
	}
	// Resumed, the model is asked again and completes.
	if out := h.run(context.Background()); out.Status != engine.Completed || out.Reason != "done after the pause" {
		t.Fatalf("after resume: %+v", out)
	}
}

// A notice of the machinery (here main moved) arriving during the final
// turn does not hold the task back: it ends, and the notice stays queued
// (the store returns it when the task finishes).
func TestNoticeDuringFinalTurnDoesNotHoldTheEnd(t *testing.T) {
	h := newHarness(t, `
default:
  steps:
    - tool_calls: [{name: complete_task, input: {summary: done}}]
`)
	h.holdCall(1)(func() {
		h.host.inject(inject.Injection{ID: 5, Kind: inject.Rebase, Source: inject.FromMainWatcher, Urgency: inject.Helpful,
			Text: "main moved", CreatedAt: time.Now()})
	})
	if out := h.run(context.Background()); out.Status != engine.Completed {
		t.Fatalf("outcome = %+v, want completed", out)
	}
	if h.host.delivered[5] != 0 || !slices.Contains(h.host.kinds(), event.KindCompleted) {
		t.Errorf("deliveries %v, observations %v: want the notice left queued and agent.completed", h.host.delivered, h.host.kinds())
	}
}
