package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The bounds of wait_tasks's timeout.
const (
	defaultWaitTimeout = 600 * time.Second
	maxWaitTimeout     = 3600 * time.Second
	maxWaitTasks       = 1000
)

// wait follows the daemon's watch stream of status changes: it reads the
// awaited tasks once the stream is open (so no change falls between the two),
// then again each time one of them changes status.
func (h *handlers) wait(ctx context.Context, req *mcp.CallToolRequest, in WaitInput) (*mcp.CallToolResult, WaitOutput, error) {
	if len(in.IDs) == 0 {
		return nil, WaitOutput{}, errors.New("ids is empty: give the ids spawn_task returned")
	}
	if len(in.IDs) > maxWaitTasks {
		return nil, WaitOutput{}, fmt.Errorf("too many ids (%d): wait for at most %d tasks at once", len(in.IDs), maxWaitTasks)
	}
	anyMode := false
	switch in.Mode {
	case "", "all":
	case "any":
		anyMode = true
	default:
		return nil, WaitOutput{}, fmt.Errorf("unknown mode %q: use all or any", in.Mode)
	}
	timeout := defaultWaitTimeout
	if in.TimeoutSeconds < 0 {
		return nil, WaitOutput{}, errors.New("timeout_seconds is negative")
	}
	if in.TimeoutSeconds > 0 {
		timeout = min(time.Duration(in.TimeoutSeconds)*time.Second, maxWaitTimeout)
	}
	c, err := h.client(ctx)
	if err != nil {
		return nil, WaitOutput{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stream, err := c.Watch(ctx, event.Query{Filter: event.Filter{Kinds: []string{string(event.KindTaskStatus)}}, AfterID: -1})
	if err != nil {
		return nil, WaitOutput{}, explain(err)
	}
	// The reader goroutine ends when the stream does: cancel closes it.
	changed := make(chan task.ID, 64)
	readErr := make(chan error, 1)
	go func() {
		defer close(changed)
		for {
			e, err := stream.Next()
			if err != nil {
				readErr <- err
				return
			}
			select {
			case changed <- e.TaskID:
			case <-ctx.Done():
				readErr <- ctx.Err()
				return
			}
		}
	}()
	defer func() {
		cancel()
		stream.Close()
		for range changed {
		}
	}()

	w := &waiter{c: c, any: anyMode, byID: map[task.ID]TaskSummary{}}
	for _, ref := range in.IDs {
		d, err := c.GetTask(ctx, ref)
		if err != nil {
			return nil, WaitOutput{}, explain(err)
		}
		if _, dup := w.byID[d.Task.ID]; !dup {
			w.order = append(w.order, d.Task.ID)
		}
		w.byID[d.Task.ID] = summaryOf(d.Task.Summarize())
	}
	token := req.Params.GetProgressToken()
	last := ""
	for {
		out := w.output()
		// A notification for each change of the awaited tasks' statuses.
		if line := w.progressLine(); token != nil && line != last {
			last = line
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
				Progress: float64(len(out.Finished)), Total: float64(len(w.order)), Message: line})
		}
		if out.Done || len(out.Waiting) > 0 {
			return nil, out, nil
		}
		select {
		case id, ok := <-changed:
			if !ok {
				err := <-readErr
				if ctx.Err() != nil {
					return nil, w.output(), nil // the timeout: the statuses so far
				}
				return nil, WaitOutput{}, explain(fmt.Errorf("%w: the watch stream ended: %v", client.ErrUnreachable, err))
			}
			if _, ok := w.byID[id]; !ok {
				continue
			}
			d, err := c.GetTask(ctx, string(id))
			if err != nil {
				if ctx.Err() != nil {
					return nil, w.output(), nil
				}
				return nil, WaitOutput{}, explain(err)
			}
			w.byID[id] = summaryOf(d.Task.Summarize())
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil, WaitOutput{}, ctx.Err() // the host cancelled the call
			}
			return nil, w.output(), nil
		}
	}
}

// waiter is the state of one wait_tasks call.
type waiter struct {
	c     *client.Client
	any   bool
	order []task.ID
	byID  map[task.ID]TaskSummary
}

func (w *waiter) output() WaitOutput {
	out := WaitOutput{Tasks: make([]TaskSummary, 0, len(w.order)), Finished: []string{}}
	for _, id := range w.order {
		s := w.byID[id]
		out.Tasks = append(out.Tasks, s)
		if task.Status(s.Status).Terminal() {
			out.Finished = append(out.Finished, s.ID)
		}
		if task.Status(s.Status) == task.Waiting {
			out.Waiting = append(out.Waiting, s.ID)
		}
	}
	if w.any {
		out.Done = len(out.Finished) > 0
	} else {
		out.Done = len(out.Finished) == len(w.order)
	}
	return out
}

// progressLine says where the awaited tasks are, e.g. "1/2 finished; t-ab12c running".
func (w *waiter) progressLine() string {
	out := w.output()
	line := fmt.Sprintf("%d/%d finished", len(out.Finished), len(w.order))
	for _, s := range out.Tasks {
		if !slices.Contains(out.Finished, s.ID) {
			line += fmt.Sprintf("; %s %s", s.ID, s.Status)
		}
	}
	return line
}
